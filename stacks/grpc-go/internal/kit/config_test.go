package kit

import (
	"strings"
	"testing"
)

func decodeClient(t *testing.T, text string) (ClientProcess, error) {
	t.Helper()
	data, err := ParseJSON(text)
	if err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return DecodeClientProcess(data)
}

func TestDefaultsAreTheKits(t *testing.T) {
	p, err := decodeClient(t, `{"target_port": 5}`)
	if err != nil {
		t.Fatal(err)
	}
	w := p.Trial.Workload
	if p.TargetHost != "127.0.0.1" || w.MessageBytes != 256*1024 || w.Streams != 1 || w.Calls != 200 ||
		!w.Warmup || w.TimeoutS != 60 || p.Trial.Client.Connections != 1 || p.Trial.Link.Seed.V != 1 {
		t.Fatalf("defaults: %+v", p)
	}
	if got := w.TimedDurationS(200); got != 4 {
		t.Fatalf("timed duration at 200 ms: %v, want 20 RTTs = 4 s", got)
	}
}

// The messages are the Python side's (kit/results/codec.py, kit/plan/trial.py).
func TestRefusalsReadAsThePythonSides(t *testing.T) {
	cases := map[string]string{
		`{"target_port": 1, "nonsense": 1}`: "ClientProcess: unknown field(s) nonsense",
		`{}`:                                "ClientProcess: missing field(s) target_port",
		`{"target_port": 1, "trial": {"workload": {"streams": 0}}}`:                  "ClientProcess.trial.workload: --streams: 0 is outside 1..1024",
		`{"target_port": 1, "trial": {"workload": {"streams": 2.0}}}`:                "ClientProcess.trial.workload.streams: 2.0 is not a whole number",
		`{"target_port": 1, "trial": {"link": {"delay_up_ms": -1}}}`:                 "ClientProcess.trial.link: delay_up_ms: -1.0 ms is outside 0..10000 ms",
		`{"target_port": 1, "trial": {"link": {"kind": "packet", "loss": 0.9}}}`:     "ClientProcess.trial.link: loss: 0.9 is outside 0..0.5 (a fraction of packets)",
		`{"target_port": 1, "trial": {"client": {"kind": "h3"}}}`:                    "ClientProcess.trial.client.kind: 'h3' is not one of 'grpcio', 'h2', 'grpc-go', 'grpc-java', 'grpc-js'",
		`{"target_port": 1, "trial": {"client": {"channel_options": [["a", 1.5]]}}}`: "ClientProcess.trial.client.channel_options[0][1]: 1.5 fits no allowed type",
	}
	for text, want := range cases {
		_, err := decodeClient(t, text)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", text, err, want)
		}
	}
}

func TestGrpcGoRefusesWhatItCannotDo(t *testing.T) {
	cases := map[string]string{
		`{"window_mode": "static", "window_bytes": 1000}`:                          "below grpc-go's lower bound of 65535",
		`{"window_mode": "static", "window_bytes": 65536, "conn_window_bytes": 9}`: "connection window of 9 bytes",
		`{"max_frame_bytes": 16384}`:                                               "max_frame_bytes",
		`{"credit_policy": "immediate"}`:                                           "credit_policy",
		`{"channel_options": [["Foo", 1]]}`:                                        "option 'Foo' is not one of",
		`{"channel_options": [["InitialWindowSize", 100]]}`:                        "option 'InitialWindowSize' takes a window",
		`{"conn_window_bytes": 100000}`:                                            "conn_window_bytes is for a static window",
	}
	for client, want := range cases {
		text := `{"target_port": 1, "trial": {"client": ` + strings.Replace(client, "{", `{"kind": "grpc-go", `, 1) + `}}`
		p, err := decodeClient(t, text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if _, err := ClientSettings(p.Trial); err == nil || !strings.Contains(err.Error(), want) ||
			!strings.HasPrefix(err.Error(), "grpc-go client: ") {
			t.Errorf("%s: %v, want %q", client, err, want)
		}
	}
}

func TestStaticWindowsAreGrpcGosKnobs(t *testing.T) {
	p, err := decodeClient(t, `{"target_port": 1, "trial": {"client": {"kind": "grpc-go", "window_mode": "static",
		"window_bytes": 65536, "connections": 2, "channel_options": [["ReadBufferSize", 65536]]},
		"workload": {"streams": 5}}}`)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := ClientSettings(p.Trial)
	if err != nil {
		t.Fatal(err)
	}
	// 5 streams over 2 connections: the busiest has 3, so the connection window is 3 x 64 KiB.
	want := "WithInitialWindowSize(65536), WithInitialConnWindowSize(196608), WithReadBufferSize(65536)"
	if got := strings.Join(ss.Calls(), ", "); got != want || !ss.Static() {
		t.Fatalf("%s, want %s", got, want)
	}
}

// The packet link's fields are the kit's Link's; the client decodes them and leaves the link
// to the packet forwarder.
func TestPacketLinkWithRateStepsIsAccepted(t *testing.T) {
	p, err := decodeClient(t, `{"target_port": 1, "trial": {"link": {"kind": "packet", "loss": 0.01,
		"loss_burst_len": 2, "queue_bytes": 65536, "mtu": 1400, "congestion": "cubic",
		"rate_steps": [{"rate_bits_s": 1e6, "duration_ms": 100}, {"rate_bits_s": 0, "duration_ms": 50}]}}}`)
	if err != nil {
		t.Fatal(err)
	}
	l := p.Trial.Link
	if l.Kind != "packet" || l.MTU.V != 1400 || l.QueueBytes.V != 65536 || len(l.RateSteps) != 2 ||
		l.RateSteps[1].DurationMS != 50 || l.Congestion != "cubic" {
		t.Fatalf("packet link: %+v", l)
	}
}
