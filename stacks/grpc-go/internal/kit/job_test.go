package kit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	wpb "kit/stacks/grpc-go/internal/workerpb"
)

// The kit's example jobs (kit/plan/jobs.py's builder wrote them): every one decodes.
func TestTheKitsExampleJobsDecode(t *testing.T) {
	paths, err := filepath.Glob("testdata/jobs/*.json")
	if err != nil || len(paths) < 2 {
		t.Fatalf("no example jobs: %v", err)
	}
	for _, path := range paths {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(filepath.Base(path), "server-") {
			_, err = DecodeServerJob(string(text), ConfigSource)
		} else {
			_, err = DecodeClientJob(string(text), ConfigSource)
		}
		if err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

func readJob(t *testing.T, name string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata/jobs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

func TestAJobIsWhatItSays(t *testing.T) {
	job, err := DecodeClientJob(readJob(t, "client-grpc-go-dynamic-slow.json"), WorkerSource)
	if err != nil {
		t.Fatal(err)
	}
	d := job.GetDownload()
	if job.GetConnections() != 2 || d.GetStreams() != 4 || d.GetMessagesPerStream() != 32 || d.GetSlowStreams() != 1 ||
		d.GetPacing().GetSeed() != 1 || d.GetPacing().GetJitter() != 0.5 || job.GetWindows().GetStatic() {
		t.Fatalf("decoded: %v", job)
	}
	server, err := DecodeServerJob(readJob(t, "server-grpc-go-static.json"), ConfigSource)
	if err != nil {
		t.Fatal(err)
	}
	if server.GetDownloadBudgetBytes() != 256*MiB || server.GetMaxConcurrentStreams() != 1032 ||
		server.GetWindows().GetStreamBytes() != 524288 {
		t.Fatalf("decoded: %v", server)
	}
}

func badJobText(t *testing.T, err error) string {
	t.Helper()
	var b *BadJob
	if !errors.As(err, &b) {
		t.Fatalf("%v is not a BadJob", err)
	}
	return b.Msg
}

// protojson's words, strictly: an unknown field, a wrong type, not JSON; and a job with no work.
func TestABadJobIsTheLibrarysMessage(t *testing.T) {
	cases := map[string]string{
		`{"nonsense": 1, "unary": {"calls": 1}}`: `unknown field "nonsense"`,
		`{"connections": "two", "unary": {}}`:    `invalid value for uint32 field connections: "two"`,
		`{"connections": 1.5, "unary": {}}`:      `invalid value for uint32 field connections: 1.5`,
		`{"warmup": 1, "unary": {}}`:             `invalid value for bool field warmup: 1`,
		`{"unary": {"calls": 1}`:                 `unexpected EOF`,
		`not json`:                               `syntax error`,
		``:                                       `unexpected token`,
		`{"target_port": 1}`:                     `no work (a ClientJob needs download, unary or upload)`,
	}
	for text, want := range cases {
		_, err := DecodeClientJob(text, ConfigSource)
		msg := badJobText(t, err)
		if !strings.HasPrefix(msg, "bad job: ") || !strings.Contains(msg, want) || strings.ContainsAny(msg, "\n\u00a0") {
			t.Errorf("%s: %q, want 'bad job: ...%s...'", text, msg, want)
		}
	}
	_, err := DecodeServerJob(`{"listen_host": "127.0.0.1", "threads": 4}`, ConfigSource)
	if msg := badJobText(t, err); !strings.Contains(msg, `unknown field "threads"`) {
		t.Errorf("server: %q", msg)
	}
}

func TestNotUTF8IsSaidSo(t *testing.T) {
	bad := "{\"target_host\": \"\xff\", \"unary\": {}}"
	if _, err := DecodeClientJob(bad, ConfigSource); badJobText(t, err) != "--config: not UTF-8" {
		t.Errorf("--config: %v", err)
	}
	if _, err := DecodeClientJob(bad, WorkerSource); badJobText(t, err) != "worker line: not UTF-8" {
		t.Errorf("worker line: %v", err)
	}
	if _, err := DecodeServerJob(bad, ConfigSource); badJobText(t, err) != "--config: not UTF-8" {
		t.Errorf("server: %v", err)
	}
}

func TestConfigArgument(t *testing.T) {
	for _, args := range [][]string{{"--config", "{}"}, {"--config={}"}} {
		if text, err := ConfigArg(args, "u"); err != nil || text != "{}" {
			t.Errorf("%v: %q %v", args, text, err)
		}
	}
	for _, args := range [][]string{nil, {"--config"}, {"--config", "{}", "x"}, {"{}"}} {
		if _, err := ConfigArg(args, "prog --config JSON"); !strings.HasPrefix(badJobText(t, err), "usage: prog --config JSON") {
			t.Errorf("%v: %v", args, err)
		}
	}
}

func clientJob(t *testing.T, text string) *wpb.ClientJob {
	t.Helper()
	job, err := DecodeClientJob(text, ConfigSource)
	if err != nil {
		t.Fatal(err)
	}
	return job
}

func TestStaticWindowsAreTheStaticOptions(t *testing.T) {
	s, err := NewClientSetup(clientJob(t, readJob(t, "client-grpc-go-static-download.json")))
	if err != nil {
		t.Fatal(err)
	}
	want := "grpc.WithStaticStreamWindowSize(1048576), grpc.WithStaticConnWindowSize(4194304)"
	if got := strings.Join(s.Calls, ", "); got != want || !s.Static || s.WindowOption || len(s.Dial) != 2 {
		t.Fatalf("%s, want %s", got, want)
	}
	server, err := DecodeServerJob(readJob(t, "server-grpc-go-static.json"), ConfigSource)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := NewServerSetup(server)
	if err != nil {
		t.Fatal(err)
	}
	want = "grpc.StaticStreamWindowSize(524288), grpc.StaticConnWindowSize(524288), grpc.MaxConcurrentStreams(1032)"
	if got := strings.Join(ss.Calls, ", "); got != want || len(ss.Options) != 3 {
		t.Fatalf("%s, want %s", got, want)
	}
}

func TestOptionsAreAppliedAfterTheJobInOrder(t *testing.T) {
	s, err := NewClientSetup(clientJob(t, `{"unary": {}, "options": [
		{"name": "InitialWindowSize", "int": "131072"}, {"name": "KeepaliveTime", "int": "5000"},
		{"name": "SharedWriteBuffer", "flag": false}, {"name": "KeepalivePermitWithoutStream", "flag": true},
		{"name": "KeepaliveTimeout", "int": 1000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "grpc.WithInitialWindowSize(131072), grpc.WithSharedWriteBuffer(false), " +
		"grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 5000 * time.Millisecond, " +
		"PermitWithoutStream: true, Timeout: 1000 * time.Millisecond})"
	if got := strings.Join(s.Calls, ", "); got != want || s.Static || !s.WindowOption || !s.KeepaliveRaised || s.KeepaliveAsked != 5e9 {
		t.Fatalf("%s, want %s (%+v)", got, want, s)
	}
	server, err := DecodeServerJob(`{"max_concurrent_streams": 1032, "options": [
		{"name": "MaxConcurrentStreams", "int": "10"}, {"name": "KeepaliveMinTime", "int": "1000"},
		{"name": "KeepalivePermitWithoutStream", "flag": true}, {"name": "KeepaliveTime", "int": "2000"}]}`, ConfigSource)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := NewServerSetup(server)
	if err != nil {
		t.Fatal(err)
	}
	want = "grpc.MaxConcurrentStreams(1032), grpc.MaxConcurrentStreams(10), " +
		"grpc.KeepaliveParams(keepalive.ServerParameters{Time: 2000 * time.Millisecond}), " +
		"grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 1000 * time.Millisecond, PermitWithoutStream: true})"
	if got := strings.Join(ss.Calls, ", "); got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}

func TestAnOptionTheStackHasNotIsRefused(t *testing.T) {
	_, err := NewClientSetup(clientJob(t, readJob(t, "client-grpc-js-options.json")))
	want := "option 'grpc.enable_retries' is not one of InitialConnWindowSize, InitialWindowSize, " +
		"KeepalivePermitWithoutStream, KeepaliveTime, KeepaliveTimeout, ReadBufferSize, SharedWriteBuffer, WriteBufferSize"
	if got := badJobText(t, err); got != want {
		t.Errorf("%q, want %q", got, want)
	}
	server, err := DecodeServerJob(readJob(t, "server-tonic-options.json"), ConfigSource)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewServerSetup(server)
	want = "option 'max_concurrent_streams' is not one of InitialConnWindowSize, InitialWindowSize, " +
		"KeepaliveMinTime, KeepalivePermitWithoutStream, KeepaliveTime, KeepaliveTimeout, MaxConcurrentStreams, " +
		"ReadBufferSize, SharedWriteBuffer, WriteBufferSize"
	if got := badJobText(t, err); got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestAnOptionOfTheWrongVariantIsRefused(t *testing.T) {
	cases := map[string]string{
		`{"name": "ReadBufferSize", "text": "65536"}`:                "option 'ReadBufferSize' takes an int, not text",
		`{"name": "ReadBufferSize", "ratio": 0.5}`:                   "option 'ReadBufferSize' takes an int, not a ratio",
		`{"name": "KeepalivePermitWithoutStream", "int": 1}`:         "option 'KeepalivePermitWithoutStream' takes a flag, not an int",
		`{"name": "SharedWriteBuffer"}`:                              "option 'SharedWriteBuffer' takes a flag, not no value",
		`{"name": "KeepaliveTime", "flag": true}`:                    "option 'KeepaliveTime' takes an int, not a flag",
		`{"name": "InitialConnWindowSize", "text": "1 MiB"}`:         "option 'InitialConnWindowSize' takes an int, not text",
		`{"name": "WriteBufferSize", "int": 0, "text": "x"}`:         "", // two of a oneof: protojson refuses it
		`{"name": "KeepaliveTimeout", "int": "9223372036854775808"}`: "", // beyond int64: protojson refuses it
	}
	for op, want := range cases {
		job, err := DecodeClientJob(`{"unary": {}, "options": [`+op+`]}`, ConfigSource)
		if want == "" {
			if !strings.HasPrefix(badJobText(t, err), "bad job: ") {
				t.Errorf("%s: %v", op, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		_, err = NewClientSetup(job)
		if got := badJobText(t, err); got != want {
			t.Errorf("%s: %q, want %q", op, got, want)
		}
	}
}

// A protocol line is protojson's, with the .proto's names, on one compact line whatever
// whitespace protojson chose.
func TestALineIsOneCompactLine(t *testing.T) {
	line := LineText(&wpb.ClientAnswer{ClientTrial: 3, Result: &wpb.ClientResult{
		Client: Stack, Bytes: 1 << 40, ElapsedS: 0.5, Notes: []string{"a\nb", "<&>"},
		WindowTrace: []*wpb.WindowStep{{AtMs: 1.5, WindowBytes: 65535}},
	}})
	want := `{"result":{"client":"grpc-go","bytes":"1099511627776","elapsed_s":0.5,` +
		`"window_trace":[{"at_ms":1.5,"window_bytes":"65535"}],"notes":["a\nb","<&>"]},"client_trial":3}` + "\n"
	if string(line) != want {
		t.Fatalf("%s, want %s", line, want)
	}
	if bytes.Count(line, []byte("\n")) != 1 {
		t.Fatal("not one line")
	}
	var back wpb.ClientAnswer
	if err := protojson.Unmarshal(bytes.TrimSpace(line), &back); err != nil || back.GetResult().GetBytes() != 1<<40 {
		t.Fatalf("does not read back: %v", err)
	}
	if got := string(LineText(&wpb.Failure{Error: "x", ExitCode: 2})); got != `{"error":"x","exit_code":2}`+"\n" {
		t.Fatal(got)
	}
}
