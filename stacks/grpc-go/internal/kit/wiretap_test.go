package kit

import "testing"

// The tap reads what it needs off the bytes, across reads split anywhere: a SETTINGS window,
// a PING and its ack, a GOAWAY's code and debug data.
func TestTheTapReadsFramesSplitAnywhere(t *testing.T) {
	tap := NewTap(NewClock())
	tap.Start(0)
	frame := func(typ, flags byte, payload string) string {
		n := len(payload)
		return string([]byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags, 0, 0, 0, 0}) + payload
	}
	out := "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(frameSettings, 0, "\x00\x04\x00\x10\x00\x00") +
		frame(framePing, 0, "12345678")
	in := frame(framePing, flagAck, "12345678") + frame(frameData, 0, "xyz") +
		frame(frameGoAway, 0, "\x00\x00\x00\x01\x00\x00\x00\x0btoo_many_pings")
	sent, received := scanner{skip: clientPrefaceLen, onFrame: tap.sent}, scanner{onFrame: tap.received}
	for i := range out {
		sent.feed([]byte(out[i : i+1]))
	}
	received.feed([]byte(in[:11]))
	received.feed([]byte(in[11:]))
	steps := tap.Steps()
	if len(steps) != 2 || steps[1].Window != 1<<20 || tap.PingsSent() != 1 || len(tap.PingRTTs()) != 1 {
		t.Fatalf("steps %v, pings %d, rtts %v", steps, tap.PingsSent(), tap.PingRTTs())
	}
	g := tap.GoAways()
	if len(g) != 1 || g[0].CodeName() != "ENHANCE_YOUR_CALM" || g[0].Debug != "too_many_pings" || tap.MaxDataFrame() != 3 {
		t.Fatalf("goaway %v, data %d", g, tap.MaxDataFrame())
	}
}
