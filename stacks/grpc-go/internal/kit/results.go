package kit

import (
	"strings"
	"unicode"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ClientResult is kit/results/client.py's ClientResult: only fields that exist there (the
// kit's decoder refuses others); the ones left out keep their defaults.
type ClientResult struct {
	Client        string       `json:"client"`
	Bytes         int64        `json:"bytes"`
	Messages      int64        `json:"messages"`
	ElapsedS      float64      `json:"elapsed_s"`
	TStartNS      int64        `json:"t_start_ns"`
	TEndNS        int64        `json:"t_end_ns"`
	StreamBytes   []int64      `json:"stream_bytes"`
	StreamFinishS []float64    `json:"stream_finish_s"`
	CPUS          float64      `json:"cpu_s"`
	PingRTTms     []float64    `json:"ping_rtt_ms"`
	LatenciesMS   []float64    `json:"latencies_ms"`
	WindowTrace   [][2]float64 `json:"window_trace"`
	Notes         []string     `json:"notes"`
	SentBytes     int64        `json:"sent_bytes"`
	SlowStreams   int          `json:"slow_streams"`
}

// NewClientResult has every list empty, not null (a tuple in the kit's records).
func NewClientResult() ClientResult {
	return ClientResult{
		Client: "grpc-go", StreamBytes: []int64{}, StreamFinishS: []float64{}, PingRTTms: []float64{},
		LatenciesMS: []float64{}, WindowTrace: [][2]float64{}, Notes: []string{},
	}
}

// ServerResult is kit/results/server.py's ServerResult.
type ServerResult struct {
	RPCs int64 `json:"rpcs"`
}

// StatusText is an RPC error as the kit's Python clients word it: "UNAVAILABLE: details".
func StatusText(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	return CodeName(st.Code()) + ": " + st.Message()
}

// CodeName is the code's name as grpcio spells it (DEADLINE_EXCEEDED).
func CodeName(c codes.Code) string {
	name := c.String()
	if c == codes.OK {
		return "OK"
	}
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}
