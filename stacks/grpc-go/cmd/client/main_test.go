package main

import (
	"bufio"
	"context"
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

	"kit/stacks/grpc-go/internal/kit"
	pb "kit/stacks/grpc-go/internal/throughputpb"
	wpb "kit/stacks/grpc-go/internal/workerpb"
)

// The test binary is the client too: with this variable set it runs main() on its arguments,
// so each test runs the program as the kit does (argv, stdin, stdout, exit code).
const runMain = "KIT_GRPC_GO_CLIENT_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMain) == "1" {
		main()
		os.Exit(0)
	}
	kit.InstallCodec()
	os.Exit(m.Run())
}

func program(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMain+"=1")
	return cmd
}

// outcome runs the client to its end: exit code and stdout lines, each a JSON object.
func outcome(t *testing.T, cmd *exec.Cmd) (int, []map[string]any) {
	t.Helper()
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, jsonLines(t, string(out))
}

func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON object: %q", line)
		}
		lines = append(lines, m)
	}
	return lines
}

func oneError(t *testing.T, lines []map[string]any, code int, want string) {
	t.Helper()
	last := lines[len(lines)-1]
	if last["exit_code"] != float64(code) || !strings.HasPrefix(last["error"].(string), want) || len(last) != 2 {
		t.Fatalf("%v, want error %q with exit code %d", last, want, code)
	}
	for _, l := range lines[:len(lines)-1] {
		if _, ok := l["error"]; ok {
			t.Fatalf("two error lines: %v", lines)
		}
	}
}

func TestABadJobIsOneLineAndExit2(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--config", `{"nonsense": 1}`}, `grpc-go client: bad job: proto: (line 1:2): unknown field "nonsense"`},
		{[]string{`--config={"unary": {"calls": "x"}}`}, `grpc-go client: bad job: proto: (line 1:21): invalid value for uint32 field calls: "x"`},
		{[]string{"--config", `{"target_port": 1}`}, "grpc-go client: bad job: no work"},
		{[]string{"--config", "{\"target_host\": \"\xc3\x28\"}"}, "grpc-go client: --config: not UTF-8"},
		{[]string{"--config", `{"unary": {}, "options": [{"name": "Foo", "int": 1}]}`},
			"grpc-go client: option 'Foo' is not one of InitialConnWindowSize, InitialWindowSize, KeepalivePermitWithoutStream,"},
		{[]string{"--config", `{"unary": {}, "options": [{"name": "ReadBufferSize", "text": "1"}]}`},
			"grpc-go client: option 'ReadBufferSize' takes an int, not text"},
		{nil, "grpc-go client: usage: client --config"},
		{[]string{"--config", "{}", "extra"}, "grpc-go client: usage: client --config"},
	}
	for _, c := range cases {
		code, lines := outcome(t, program(t, c.args...))
		if code != 2 || len(lines) != 1 {
			t.Fatalf("%v: exit %d, %v", c.args, code, lines)
		}
		oneError(t, lines, 2, c.want)
	}
}

func TestAWorkersBadLineIsItsLast(t *testing.T) {
	for line, want := range map[string]string{
		"\n  \n{\"unary\": {}, \"bogus\": true}\n{\"unary\": {}}\n": `grpc-go client: bad job: proto: (line 1:15): unknown field "bogus"`,
		"\xff\xfe\n":                    "grpc-go client: worker line: not UTF-8",
		"not json\n":                    "grpc-go client: bad job: proto: syntax error",
		`{"target_port": 1, "unary": {`: "grpc-go client: bad job: proto: unexpected EOF",
	} {
		cmd := program(t, "--worker")
		cmd.Stdin = strings.NewReader(line)
		code, lines := outcome(t, cmd)
		if code != 2 || len(lines) != 2 || lines[0]["ready"] != true || lines[0]["worker"] != true {
			t.Fatalf("%q: exit %d, %v", line, code, lines)
		}
		oneError(t, lines, 2, want)
	}
	cmd := program(t, "--worker")
	cmd.Stdin = strings.NewReader("")
	if code, lines := outcome(t, cmd); code != 0 || len(lines) != 1 {
		t.Fatalf("EOF: exit %d, %v", code, lines)
	}
}

func TestAnUnreachableTargetIsExit4(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := lis.Addr().(*net.TCPAddr).Port
	lis.Close() // nothing listens there now
	code, lines := outcome(t, program(t, "--config", fmt.Sprintf(`{"target_host": "127.0.0.1", "target_port": %d, `+
		`"connections": 1, "timeout_s": 1.5, "unary": {"calls": 1}}`, port)))
	if code != 4 || len(lines) != 2 || lines[0]["ready"] != true {
		t.Fatalf("exit %d, %v", code, lines)
	}
	oneError(t, lines, 4, fmt.Sprintf("grpc-go client: cannot reach 127.0.0.1:%d within 1.5 s (dial tcp 127.0.0.1:%d: "+
		"connect: connection refused); is the server running?", port, port))
}

// ---- against a Throughput server in this process -------------------------------------------

type service struct {
	pb.UnimplementedThroughputServer
}

func (service) Download(req *pb.DownloadRequest, st pb.Throughput_DownloadServer) error {
	raw := &kit.Raw{Bytes: kit.EncodeChunk(int(req.GetMessageBytes()))}
	for sent := uint64(0); req.GetMessageCount() == 0 || sent < req.GetMessageCount(); sent++ {
		if err := st.SendMsg(raw); err != nil {
			return err
		}
	}
	return nil
}

func (service) Ping(_ context.Context, req *pb.PingRequest) (*pb.PingReply, error) {
	return &pb.PingReply{Payload: req.GetPayload()}, nil
}

func (service) Upload(st pb.Throughput_UploadServer) error {
	var n, payload uint64
	var m kit.Counted
	for {
		if err := st.RecvMsg(&m); err == io.EOF {
			return st.SendAndClose(&pb.UploadSummary{Messages: n, PayloadBytes: payload})
		} else if err != nil {
			return err
		}
		n, payload = n+1, payload+uint64(m.Payload)
	}
}

func serve(t *testing.T) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterThroughputServer(s, service{})
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().(*net.TCPAddr).Port
}

func TestAWorkerRunsThreeTrialsThenEnds(t *testing.T) {
	port := serve(t)
	head := fmt.Sprintf(`{"target_host": "127.0.0.1", "target_port": %d, "connections": 2, "warmup": true, `+
		`"timeout_s": 20, "message_bytes": 65536, `, port)
	jobs := []string{
		head + `"windows": {"static": true, "stream_bytes": 1048576, "conn_bytes": 2097152}, ` +
			`"download": {"streams": 4, "messages_per_stream": "16"}}`,
		head + `"idle_s": 0.2, "download": {"streams": 2, "messages_per_stream": "4", "slow_streams": 1, ` +
			`"pacing": {"rate_bytes_s": 1e7, "jitter": 0.5, "seed": "1"}}}`,
		head + `"upload": {"messages": "10", "call_timeout_s": 10}}`,
	}
	cmd := program(t, "--worker")
	cmd.Stdin = strings.NewReader(strings.Join(jobs, "\n") + "\n")
	code, lines := outcome(t, cmd)
	if code != 0 || len(lines) != 4 {
		t.Fatalf("exit %d, %v", code, lines)
	}
	for i, line := range lines[1:] {
		result := line["result"].(map[string]any)
		if line["client_trial"] != float64(i+1) || result["client"] != "grpc-go" {
			t.Fatalf("trial %d: %v", i+1, line)
		}
	}
	static := lines[1]["result"].(map[string]any)
	notes := static["notes"].([]any)
	if static["bytes"] != "4194304" || static["ping_rtt_ms"] != nil || static["window_trace"] != nil ||
		!strings.HasPrefix(notes[0].(string), "grpc-go "+grpc.Version+": grpc.WithStaticStreamWindowSize(1048576), "+
			"grpc.WithStaticConnWindowSize(2097152); BDP estimator off") {
		t.Fatalf("static: %v", static)
	}
	if slow := lines[2]["result"].(map[string]any); slow["slow_streams"] != float64(1) || slow["window_trace"] == nil {
		t.Fatalf("dynamic with a slow stream: %v", slow)
	}
	if up := lines[3]["result"].(map[string]any); up["bytes"] != "655360" || up["sent_bytes"] != "655360" {
		t.Fatalf("upload: %v", up)
	}
}

func TestSIGTERMMidTrial(t *testing.T) {
	port := serve(t)
	cmd := program(t, "--config", fmt.Sprintf(`{"target_host": "127.0.0.1", "target_port": %d, "connections": 1, `+
		`"timeout_s": 20, "message_bytes": 16384, "download": {"streams": 1, "timed_s": 10}}`, port))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	if ready, err := out.ReadString('\n'); err != nil || !strings.Contains(ready, `"ready":true`) {
		t.Fatalf("ready: %q %v", ready, err)
	}
	time.Sleep(300 * time.Millisecond)
	signalled := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(out)
	err = cmd.Wait()
	took := time.Since(signalled)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 || took > time.Second {
		t.Fatalf("exit %v after %v", err, took)
	}
	oneError(t, jsonLines(t, string(rest)), 143, "grpc-go client: interrupted by SIGTERM")
}

// A client with static windows (grpc.WithStaticStreamWindowSize / WithStaticConnWindowSize)
// sends no PING during a download: its BDP estimator is off (http2_client.go: bdpEst is
// made only without StaticWindowSize, and only it sends BDP PINGs). Counted on the client's
// own frame tap; with dynamic windows the same download sends some.
func TestAStaticClientSendsNoPing(t *testing.T) {
	port := serve(t)
	target := kit.HostPort("127.0.0.1", uint32(port))
	pings := func(windows *wpb.Windows) int {
		setup, err := kit.NewClientSetup(&wpb.ClientJob{Windows: windows, Work: &wpb.ClientJob_Unary{}})
		if err != nil {
			t.Fatal(err)
		}
		ch, err := dial(target, setup, kit.NewClock())
		if err != nil {
			t.Fatal(err)
		}
		defer ch.cc.Close()
		if err := ch.waitReady(target, 5); err != nil {
			t.Fatal(err)
		}
		ch.tap.Start(kit.NewClock().Now())
		st, err := ch.client.Download(context.Background(), &pb.DownloadRequest{MessageCount: 256, MessageBytes: 65536})
		if err != nil {
			t.Fatal(err)
		}
		var m kit.Counted
		for n := 0; ; n++ {
			if err := st.RecvMsg(&m); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		ch.tap.Stop()
		return ch.tap.PingsSent()
	}
	if n := pings(&wpb.Windows{Static: true, StreamBytes: 65536, ConnBytes: 65536}); n != 0 {
		t.Fatalf("a static client sent %d PINGs", n)
	}
	if n := pings(nil); n == 0 {
		t.Fatal("a dynamic client sent no BDP PING in 16 MiB")
	}
}
