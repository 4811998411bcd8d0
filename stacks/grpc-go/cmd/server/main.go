// The grpc-go server of the kit: `server --config '<ServerJob as JSON>'`, speaking
// docs/process-protocol.md with protos/worker.proto's messages, with the semantics and limits
// of the kit's reference server (servers/grpcio_server.py): Download streams message_count
// messages of message_bytes bytes of 0x5a (0: until cancelled) within a budget of what the
// calls hold together, each message built once per size and shared up to a size; Ping
// echoes; Upload counts.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"kit/stacks/grpc-go/internal/kit"
	pb "kit/stacks/grpc-go/internal/throughputpb"
	wpb "kit/stacks/grpc-go/internal/workerpb"
)

const (
	who             = kit.ServerWho
	usage           = "server --config '<ServerJob as JSON>'"
	maxMessageBytes = 128 * kit.MiB
	graceful        = 500 * time.Millisecond
)

var lines kit.Lines

func main() {
	// Until it serves, a signal just ends it (exit 0 with a result line, as when serving).
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)

	text, err := kit.ConfigArg(os.Args[1:], usage)
	if err != nil {
		lines.Fail(kit.ExitBadJob, "%s: %v", who, err)
	}
	job, err := kit.DecodeServerJob(text, kit.ConfigSource)
	if err != nil {
		lines.Fail(kit.ExitBadJob, "%s: %v", who, err)
	}
	setup, err := kit.NewServerSetup(job)
	if err != nil {
		lines.Fail(kit.ExitBadJob, "%s: %v", who, err)
	}
	kit.InstallCodec()

	address := kit.HostPort(job.GetListenHost(), job.GetListenPort())
	// Go's listeners set SO_REUSEADDR only, never SO_REUSEPORT: a port in use fails here.
	lis, err := net.Listen("tcp", address)
	if err != nil {
		hint := ""
		if job.GetListenPort() != 0 {
			hint = "; is the port in use?"
		}
		lines.Fail(kit.ExitCannotStart, "%s: cannot listen on %s (%v)%s", who, address, err, hint)
	}
	if !kit.IsLoopbackHost(job.GetListenHost()) {
		fmt.Fprintf(os.Stderr, "WARNING: the server listens on %s, which is NOT a loopback address: "+
			"anyone who can reach this host can connect to it.\n", job.GetListenHost())
	}
	if len(setup.Calls) > 0 {
		fmt.Fprintf(os.Stderr, "%s %s: %s\n", who, grpc.Version, strings.Join(setup.Calls, ", "))
	}
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(maxMessageBytes), grpc.MaxSendMsgSize(maxMessageBytes)}
	opts = append(opts, setup.Options...) // the job's windows, stream limit and options after
	server := grpc.NewServer(opts...)
	svc := newService(job)
	pb.RegisterThroughputServer(server, svc)
	served := make(chan error, 1)
	go func() { served <- server.Serve(lis) }()
	lines.Ready(lis.Addr().(*net.TCPAddr).Port, false)

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
	lines.Final(&wpb.ServerAnswer{Result: &wpb.ServerResult{Rpcs: svc.rpcs.Load(), Refused: svc.budget.Refused()}})
}

type service struct {
	pb.UnimplementedThroughputServer
	rpcs       atomic.Uint64
	budget     *kit.Budget
	messages   *kit.MessageCache
	maxMessage uint64
	maxEcho    uint64
}

func newService(job *wpb.ServerJob) *service {
	return &service{
		budget:     kit.NewBudget(job.GetDownloadBudgetBytes(), job.GetSharedMessageMaxBytes()),
		messages:   kit.NewMessageCache(job.GetMessageCacheBytes(), job.GetSharedMessageMaxBytes()),
		maxMessage: job.GetMaxMessageBytes(),
		maxEcho:    job.GetMaxEchoBytes(),
	}
}

func (s *service) Download(req *pb.DownloadRequest, stream pb.Throughput_DownloadServer) error {
	s.rpcs.Add(1)
	if uint64(req.GetMessageBytes()) > s.maxMessage {
		return status.Errorf(codes.InvalidArgument, "message_bytes %d is above this server's maximum %d",
			req.GetMessageBytes(), s.maxMessage)
	}
	size := max(1, int(req.GetMessageBytes()))
	charge := s.budget.Charge(uint64(size))
	ok, held := s.budget.Take(charge)
	if !ok {
		return status.Errorf(codes.ResourceExhausted, "this download would hold %s; the server's calls already "+
			"hold %s of its %s maximum", kit.FormatBytes(float64(charge)), kit.FormatBytes(float64(held)),
			kit.FormatBytes(float64(s.budget.Max())))
	}
	// The handler returns however the call ends (done, cancelled, failed, client gone: a
	// blocked SendMsg returns then), and the charge goes back with it.
	defer s.budget.Release(charge)
	raw := &kit.Raw{Bytes: s.messages.Get(size)} // one []byte, sent as it is by every call
	ctx := stream.Context()
	for sent := uint64(0); req.GetMessageCount() == 0 || sent < req.GetMessageCount(); sent++ {
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
	if uint64(len(req.GetPayload())) > s.maxEcho {
		return nil, status.Errorf(codes.InvalidArgument, "ping payload of %d bytes is above the echo maximum %d",
			len(req.GetPayload()), s.maxEcho)
	}
	return &pb.PingReply{Payload: req.GetPayload()}, nil
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
