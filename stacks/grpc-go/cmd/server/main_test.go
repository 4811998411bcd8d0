package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"kit/stacks/grpc-go/internal/kit"
	pb "kit/stacks/grpc-go/internal/throughputpb"
)

// The test binary is the server too: with this variable set it runs main() on its arguments.
const runMain = "KIT_GRPC_GO_SERVER_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMain) == "1" {
		main()
		os.Exit(0)
	}
	kit.InstallCodec()
	os.Exit(m.Run())
}

func program(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMain+"=1")
	return cmd
}

func finalLine(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("not JSON: %q", out)
	}
	return m
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return 0
}

func TestABadJobIsExit2AndAPortInUseExit3(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	inUse := lis.Addr().(*net.TCPAddr).Port
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--config", `{"listen_host": "127.0.0.1", "threads": 2}`}, 2,
			`grpc-go server: bad job: proto: (line 1:30): unknown field "threads"`},
		{[]string{"--config", `{"options": [{"name": "max_concurrent_streams", "int": 1}]}`}, 2,
			"grpc-go server: option 'max_concurrent_streams' is not one of InitialConnWindowSize, InitialWindowSize, " +
				"KeepaliveMinTime, KeepalivePermitWithoutStream, KeepaliveTime, KeepaliveTimeout, MaxConcurrentStreams, " +
				"ReadBufferSize, SharedWriteBuffer, WriteBufferSize"},
		{[]string{"--config", "{\"listen_host\": \"\xff\"}"}, 2, "grpc-go server: --config: not UTF-8"},
		{[]string{"--worker"}, 2, "grpc-go server: usage: server --config '<ServerJob as JSON>' (got 1 argument(s))"},
		{[]string{"--config", fmt.Sprintf(`{"listen_host": "127.0.0.1", "listen_port": %d}`, inUse)}, 3,
			fmt.Sprintf("grpc-go server: cannot listen on 127.0.0.1:%d (listen tcp 127.0.0.1:%d: bind: address "+
				"already in use); is the port in use?", inUse, inUse)},
	}
	for _, c := range cases {
		out, err := program(c.args...).Output()
		if exitCode(err) != c.code || strings.Count(string(out), "\n") != 1 {
			t.Fatalf("%v: exit %v, %q", c.args, err, out)
		}
		if line := finalLine(t, string(out)); line["error"] != c.want || line["exit_code"] != float64(c.code) {
			t.Errorf("%v: %v, want %q", c.args, line, c.want)
		}
	}
}

// maxStreams reads SETTINGS_MAX_CONCURRENT_STREAMS off the server's first SETTINGS frame.
func maxStreams(t *testing.T, address string) uint32 {
	t.Helper()
	conn, err := net.DialTimeout("tcp", address, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"); err != nil {
		t.Fatal(err)
	}
	for {
		var hdr [9]byte
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			t.Fatal(err)
		}
		payload := make([]byte, int(hdr[0])<<16|int(hdr[1])<<8|int(hdr[2]))
		if _, err := io.ReadFull(conn, payload); err != nil {
			t.Fatal(err)
		}
		if hdr[3] == 0x4 && hdr[4]&0x1 == 0 {
			for i := 0; i+6 <= len(payload); i += 6 {
				if binary.BigEndian.Uint16(payload[i:]) == 0x3 {
					return binary.BigEndian.Uint32(payload[i+2:])
				}
			}
			return 0
		}
	}
}

func code(err error) codes.Code { return status.Code(err) }

// The limits every server keeps (servers/grpcio_server.py): the download budget, the largest
// message and echo, SETTINGS_MAX_CONCURRENT_STREAMS; the refused calls in the result line.
func TestTheServersLimits(t *testing.T) {
	cmd := program("--config", `{"listen_host": "127.0.0.1", "download_budget_bytes": "3145728", `+
		`"shared_message_max_bytes": "1048576", "message_cache_bytes": "4194304", "max_message_bytes": "8388608", `+
		`"max_echo_bytes": "1024", "max_concurrent_streams": 100, "workers": 8}`)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	out := bufio.NewReader(stdout)
	readyText, err := out.ReadString('\n')
	var ready struct{ Port int }
	if err != nil || json.Unmarshal([]byte(readyText), &ready) != nil || ready.Port == 0 {
		t.Fatalf("ready: %q %v", readyText, err)
	}
	address := fmt.Sprintf("127.0.0.1:%d", ready.Port)
	if n := maxStreams(t, address); n != 100 {
		t.Fatalf("SETTINGS_MAX_CONCURRENT_STREAMS %d", n)
	}
	cc, err := grpc.NewClient("passthrough:///"+address, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64*kit.MiB)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := pb.NewThroughputClient(cc)
	first := func(ctx context.Context, bytes uint32) error {
		st, err := client.Download(ctx, &pb.DownloadRequest{MessageBytes: bytes})
		if err != nil {
			return err
		}
		_, err = st.Recv()
		return err
	}
	bg := context.Background()
	if _, err := client.Ping(bg, &pb.PingRequest{Payload: make([]byte, 1025)}); code(err) != codes.InvalidArgument {
		t.Fatalf("a ping above max_echo_bytes: %v", err)
	}
	if err := first(bg, 8*kit.MiB+1); code(err) != codes.InvalidArgument {
		t.Fatalf("a message above max_message_bytes: %v", err)
	}
	if err := first(bg, 2*kit.MiB); code(err) != codes.ResourceExhausted { // 2 x 2 MiB: not shared
		t.Fatalf("a 2 MiB message in a 3 MiB budget: %v", err)
	}
	// Three calls of shared 1 MiB messages, never read past the first: the budget is full.
	held, cancel := context.WithCancel(bg)
	for i := range 3 {
		if err := first(held, kit.MiB); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if err := first(bg, 1); code(err) != codes.ResourceExhausted {
		t.Fatalf("a fourth call: %v", err)
	}
	cancel() // the calls end, their charges go back
	deadline := time.Now().Add(5 * time.Second)
	for {
		ctx, done := context.WithCancel(bg)
		err := first(ctx, kit.MiB)
		done()
		if err == nil {
			break
		}
		if code(err) != codes.ResourceExhausted || time.Now().After(deadline) {
			t.Fatalf("after the calls ended: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
	// The 2 MiB call, the fourth call, and any retry that came before the charges were back.
	result := finalLine(t, string(rest))["result"].(map[string]any)
	var refused, rpcs int
	if _, err := fmt.Sscan(result["refused"].(string)+" "+result["rpcs"].(string), &refused, &rpcs); err != nil ||
		refused < 2 || rpcs != 8+refused-2 {
		t.Fatalf("result: %v", result)
	}
}
