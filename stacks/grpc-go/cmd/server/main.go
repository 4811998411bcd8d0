// The grpc-go server of the kit: `server --config '<ServerProcess as JSON>'`, speaking
// docs/process-protocol.md, with the semantics of the kit's reference server
// (servers/grpcio_server.py): Download streams message_count messages of message_bytes
// bytes of 0x5a (0: until cancelled), built once and reused; Ping echoes; Upload counts.
package main

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"kit/stacks/grpc-go/internal/kit"
	pb "kit/stacks/grpc-go/internal/throughputpb"
)

const (
	who             = "grpc-go server"
	maxMessageBytes = 128 * kit.MiB
	maxDownloadMsg  = kit.MaxWorkloadMessage
	maxEchoBytes    = kit.MiB
	cacheMaxBytes   = 64 * kit.MiB
	graceful        = 500 * time.Millisecond
)

var lines kit.Lines

func main() {
	// Until it serves, a signal just ends it (exit 0 with a result line, as when serving).
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)

	data, err := kit.ParseConfig(os.Args[1:], "ServerProcess")
	if err != nil {
		lines.Fail(kit.ExitBadConfig, "%s: %v", who, err)
	}
	proc, err := kit.DecodeServerProcess(data)
	if err != nil {
		lines.Fail(kit.ExitBadConfig, "%s: %v", who, err)
	}
	settings, err := kit.ServerSettings(proc.Config)
	if err != nil {
		lines.Fail(kit.ExitBadConfig, "%v", err)
	}
	kit.InstallCodec()

	address := kit.HostPort(proc.ListenHost, proc.ListenPort)
	// Go's listeners set SO_REUSEADDR only, never SO_REUSEPORT: a port in use fails here.
	lis, err := net.Listen("tcp", address)
	if err != nil {
		hint := ""
		if proc.ListenPort != 0 {
			hint = "; is the port in use?"
		}
		lines.Fail(kit.ExitCannotStart, "%s: cannot listen on %s (%v)%s", who, address, err, hint)
	}
	if !kit.IsLoopbackHost(proc.ListenHost) {
		fmt.Fprintf(os.Stderr, "WARNING: the server listens on %s, which is NOT a loopback address: "+
			"anyone who can reach this host can connect to it.\n", proc.ListenHost)
	}
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(maxMessageBytes), grpc.MaxSendMsgSize(maxMessageBytes)}
	opts = append(opts, settings.ServerOptions()...)
	server := grpc.NewServer(opts...)
	svc := &service{chunks: newChunkCache(cacheMaxBytes)}
	pb.RegisterThroughputServer(server, svc)
	served := make(chan error, 1)
	go func() { served <- server.Serve(lis) }()
	lines.Ready(lis.Addr().(*net.TCPAddr).Port, "grpc-go", grpc.Version)

	select {
	case <-signals:
	case err := <-served:
		lines.Fail(kit.ExitFailed, "%s: stopped serving: %v", who, err)
	}
	// A short grace for calls in flight, then force: idle, this takes a few milliseconds.
	stopped := make(chan struct{})
	go func() { server.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(graceful):
		server.Stop()
		select {
		case <-stopped:
		case <-time.After(300 * time.Millisecond):
		}
	}
	lines.Result(kit.ServerResult{RPCs: svc.rpcs.Load()})
}

type service struct {
	pb.UnimplementedThroughputServer
	rpcs   atomic.Int64
	chunks *chunkCache
}

func (s *service) Download(req *pb.DownloadRequest, stream pb.Throughput_DownloadServer) error {
	s.rpcs.Add(1)
	if req.MessageBytes > maxDownloadMsg {
		return status.Errorf(codes.InvalidArgument, "message_bytes %d is above this server's maximum %d",
			req.MessageBytes, maxDownloadMsg)
	}
	raw := &kit.Raw{Bytes: s.chunks.get(max(1, int(req.MessageBytes)))}
	ctx := stream.Context()
	for sent := uint64(0); req.MessageCount == 0 || sent < req.MessageCount; sent++ {
		if err := stream.SendMsg(raw); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
	}
	return nil
}

func (s *service) Ping(_ context.Context, req *pb.PingRequest) (*pb.PingReply, error) {
	s.rpcs.Add(1)
	if len(req.Payload) > maxEchoBytes {
		return nil, status.Errorf(codes.InvalidArgument, "ping payload of %d bytes is above the echo maximum %d",
			len(req.Payload), maxEchoBytes)
	}
	return &pb.PingReply{Payload: req.Payload}, nil
}

func (s *service) Upload(stream pb.Throughput_UploadServer) error {
	s.rpcs.Add(1)
	var messages, payload uint64
	var m kit.Counted
	for {
		err := stream.RecvMsg(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		messages++
		payload += uint64(m.Payload)
	}
	return stream.SendAndClose(&pb.UploadSummary{Messages: messages, PayloadBytes: payload})
}

// chunkCache keeps serialised download messages by size, least recently used out first,
// bounded in bytes; a message above a quarter of the bound is built per call, never kept.
type chunkCache struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	order    *list.List // of int sizes, most recent at the front
	items    map[int]*list.Element
	chunks   map[int][]byte
}

func newChunkCache(maxBytes int) *chunkCache {
	return &chunkCache{maxBytes: maxBytes, order: list.New(), items: map[int]*list.Element{}, chunks: map[int][]byte{}}
}

func (c *chunkCache) get(size int) []byte {
	c.mu.Lock()
	if b, ok := c.chunks[size]; ok {
		c.order.MoveToFront(c.items[size])
		c.mu.Unlock()
		return b
	}
	c.mu.Unlock()
	b := kit.EncodeChunk(size)
	if len(b) > c.maxBytes/4 {
		return b
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.chunks[size]; ok {
		return old
	}
	c.chunks[size] = b
	c.items[size] = c.order.PushFront(size)
	c.bytes += len(b)
	for c.bytes > c.maxBytes {
		e := c.order.Back()
		old := e.Value.(int)
		c.order.Remove(e)
		c.bytes -= len(c.chunks[old])
		delete(c.chunks, old)
		delete(c.items, old)
	}
	return b
}
