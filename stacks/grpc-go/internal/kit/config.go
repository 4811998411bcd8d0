package kit

import (
	"fmt"
	"math"
)

// The records the kit sends (kit/plan/trial.py, kit/plan/processes.py), with their defaults
// and the same checks as their __post_init__ (messages as the Python side words them, so a
// refusal reads the same whichever process made it).

const (
	KiB                    = 1024
	MiB                    = 1024 * 1024
	HTTP2MaxWindow         = 1<<31 - 1
	maxDelayMS             = 10_000.0
	MaxStreams             = 1024
	MaxWorkloadMessage     = 64 * MiB
	h2MinFrame             = 16_384
	h2MaxFrame             = 1<<24 - 1
	defaultMessageBytes    = 256 * 1024
	http2DefaultFrameBytes = 16_384
	maxPoolBytes           = 1 << 30
	minTimedS              = 2.0
	minTimedRTTs           = 20
	slowestFrameBytes      = 16_384
	minRate                = 1_000.0
	maxRate                = 1e12
	DefaultServerWorkers   = MaxStreams + 8
	loopback               = "127.0.0.1"
)

var (
	clientKinds   = []string{"grpcio", "h2", "grpc-go", "grpc-java", "grpc-js"}
	stackKinds    = []string{"grpc-go", "grpc-java", "grpc-js"}
	serverKinds   = []string{"grpcio", "grpc-go", "grpc-java", "grpc-js"}
	windowModes   = []string{"dynamic", "static", "bdp-off", "pool"}
	creditPolicys = []string{"immediate", "half", "quarter"}
	connCredits   = []string{"receipt", "read"}
	workloadKinds = []string{"download", "unary", "upload"}
)

type Link struct {
	DelayUpMS, DelayDownMS     float64
	RateUpBitsS, RateDownBitsS *float64
	JitterMS                   float64
	Seed                       Int
	// The packet link's fields and the rate steps: decoded and checked like the kit's Link,
	// but the client never acts on them (the delay line or the packet forwarder applies
	// the link; the client only dials it).
	Kind         string
	Loss         float64
	LossBurstLen float64
	QueueBytes   *Int
	MTU          Int
	Congestion   string
	RateSteps    []RateStep
}

// RateStep is one step of a down rate that changes over time (0 bit/s: an outage).
type RateStep struct{ RateBitsS, DurationMS float64 }

func (l Link) RTTms() float64 { return l.DelayUpMS + l.DelayDownMS }

type ClientConfig struct {
	Kind            string
	WindowMode      string
	WindowBytes     *Int
	ConnWindowBytes *Int
	CreditPolicy    *string
	MaxFrameBytes   *Int
	ChannelOptions  []Option
	Connections     int
	ConnCredit      string
	PoolBytes       *Int
}

type ServerConfig struct {
	Kind           string
	WindowMode     string
	WindowBytes    *Int
	ChannelOptions []Option
}

type Workload struct {
	Kind           string
	MessageBytes   int
	Streams        int
	DurationS      *float64
	BytesPerStream *Int
	Calls          int
	Warmup         bool
	TimeoutS       float64
	SlowStreams    int
	ReadRateBitsS  *float64
}

// TimedDurationS is the timed phase: the asked duration, else max(2 s, 20 RTTs).
func (w Workload) TimedDurationS(rttMS float64) float64 {
	if w.DurationS != nil {
		return *w.DurationS
	}
	return math.Max(minTimedS, minTimedRTTs*rttMS/1000.0)
}

// MessagesPerStream is ceil(bytes_per_stream / message_bytes), 0 for a timed run.
func (w Workload) MessagesPerStream() int64 {
	if w.BytesPerStream == nil {
		return 0
	}
	m := int64(w.MessageBytes)
	return max(1, (w.BytesPerStream.V+m-1)/m)
}

type Trial struct {
	Link     Link
	Client   ClientConfig
	Server   ServerConfig
	Workload Workload
	Label    string
}

// StreamsPerConnection: streams are spread round-robin; the busiest connection has this many.
func (t Trial) StreamsPerConnection() int {
	return max(1, (t.Workload.Streams+t.Client.Connections-1)/t.Client.Connections)
}

// UploadCallTimeoutS: a timed upload's deadline is the timed phase plus time to drain what
// is in flight; fixed-size uploads get the whole timeout (kit/plan/trial.py).
func (t Trial) UploadCallTimeoutS() float64 {
	w := t.Workload
	if w.BytesPerStream != nil {
		return w.TimeoutS
	}
	drain := math.Max(5.0, 20*t.Link.RTTms()/1000.0)
	return math.Min(w.TimeoutS, w.TimedDurationS(t.Link.RTTms())+drain)
}

type ClientProcess struct {
	TargetHost string
	TargetPort int
	Trial      Trial
}

type ServerProcess struct {
	Config     ServerConfig
	ListenHost string
	ListenPort int
	Workers    int
}

func require(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return usage(format, args...)
}

// wrap is the codec's "where: message" for a record's own check.
func wrap(where string, err error) error {
	if err == nil {
		return nil
	}
	return usage("%s: %s", where, err.Error())
}

func first(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func inRange(i Int, lo, hi int64) bool { return !i.Big && lo <= i.V && i.V <= hi }

func checkWindow(name string, w *Int) error {
	if w == nil {
		return nil
	}
	return require(inRange(*w, 1, HTTP2MaxWindow),
		"%s: %s is outside HTTP/2's window range 1..%d (2^31-1)", name, w.Txt, HTTP2MaxWindow)
}

// ---- decoding ---------------------------------------------------------------------------

func decodeLink(data any, where string) (Link, error) {
	o, err := newObject(data, where, []string{"delay_up_ms", "delay_down_ms", "rate_up_bits_s",
		"rate_down_bits_s", "jitter_ms", "seed", "kind", "loss", "loss_burst_len", "queue_bytes",
		"mtu", "congestion", "rate_steps"})
	if err != nil {
		return Link{}, err
	}
	var l Link
	var e [13]error
	l.DelayUpMS, e[0] = o.float("delay_up_ms", 0)
	l.DelayDownMS, e[1] = o.float("delay_down_ms", 0)
	l.RateUpBitsS, e[2] = o.optFloat("rate_up_bits_s")
	l.RateDownBitsS, e[3] = o.optFloat("rate_down_bits_s")
	l.JitterMS, e[4] = o.float("jitter_ms", 0)
	l.Seed, e[5] = o.int("seed", 1)
	l.Kind, e[6] = o.literal("kind", "stream", []string{"stream", "packet"})
	l.Loss, e[7] = o.float("loss", 0)
	l.LossBurstLen, e[8] = o.float("loss_burst_len", 0)
	l.QueueBytes, e[9] = o.optInt("queue_bytes")
	l.MTU, e[10] = o.int("mtu", 1500)
	l.Congestion, e[11] = o.str("congestion", "")
	l.RateSteps, e[12] = decodeRateSteps(o)
	if err := first(e[:]...); err != nil {
		return Link{}, err
	}
	return l, wrap(where, l.check())
}

func decodeRateSteps(o *object) ([]RateStep, error) {
	v, ok := o.m["rate_steps"]
	if !ok {
		return nil, nil
	}
	where := o.path("rate_steps")
	list, isList := v.([]any)
	if !isList {
		return nil, usage("%s: a JSON array, not %s", where, pyType(v))
	}
	out := make([]RateStep, 0, len(list))
	for i, item := range list {
		so, err := newObject(item, fmt.Sprintf("%s[%d]", where, i), []string{"rate_bits_s", "duration_ms"},
			"rate_bits_s", "duration_ms")
		if err != nil {
			return nil, err
		}
		var s RateStep
		var e [2]error
		s.RateBitsS, e[0] = so.float("rate_bits_s", 0)
		s.DurationMS, e[1] = so.float("duration_ms", 0)
		if err := first(e[:]...); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// checkPacket mirrors the kit's _check_packet_fields and _check_rate_steps (same messages).
func (l Link) checkPacket() error {
	if !(0 <= l.Loss && l.Loss <= 0.5) {
		return usage("loss: %s is outside 0..0.5 (a fraction of packets)", PyFloat(l.Loss))
	}
	if !(l.LossBurstLen == 0 || (1 <= l.LossBurstLen && l.LossBurstLen <= 1000 && l.Loss > 0)) {
		return usage("loss_burst_len: %s packets must be 1..1000, with a loss above 0", PyFloat(l.LossBurstLen))
	}
	if l.MTU.Big || !(576 <= l.MTU.V && l.MTU.V <= 65000) {
		return usage("mtu: %s bytes is outside 576..65000", l.MTU.Txt)
	}
	if q := l.QueueBytes; q != nil && (q.Big || q.V < l.MTU.V) {
		return usage("queue_bytes: %s bytes must hold at least one packet (the MTU, %s bytes)", q.Txt, l.MTU.Txt)
	}
	positive := false
	for _, s := range l.RateSteps {
		if !(s.RateBitsS == 0 || (minRate <= s.RateBitsS && s.RateBitsS <= maxRate)) {
			return usage("rate_steps: a rate of %s bit/s is outside 1 kbit/s .. 1 Tbit/s (or 0)", PyFloat(s.RateBitsS))
		}
		if !(0 < s.DurationMS && s.DurationMS <= 3_600_000) {
			return usage("rate_steps: a step of %s ms is outside 0..1 h", PyFloat(s.DurationMS))
		}
		positive = positive || s.RateBitsS > 0
	}
	if len(l.RateSteps) > 0 && (len(l.RateSteps) > 2000 || !positive) {
		return usage("rate_steps: %d steps; give 1..2000, at least one above 0", len(l.RateSteps))
	}
	return nil
}

func (l Link) check() error {
	for _, d := range []struct {
		name string
		v    float64
	}{{"delay_up_ms", l.DelayUpMS}, {"delay_down_ms", l.DelayDownMS}} {
		if !(0 <= d.v && d.v <= maxDelayMS) {
			return usage("%s: %s ms is outside 0..10000 ms", d.name, PyFloat(d.v))
		}
	}
	for _, r := range []struct {
		name string
		v    *float64
	}{{"--rate-up", l.RateUpBitsS}, {"--rate-down", l.RateDownBitsS}} {
		if r.v != nil && !(minRate <= *r.v && *r.v <= maxRate) {
			return usage("%s: %s bit/s is outside 1 kbit/s .. 1 Tbit/s", r.name, PyFloat(*r.v))
		}
	}
	if !(0 <= l.JitterMS && l.JitterMS <= maxDelayMS) {
		return usage("--jitter: %s ms is outside 0..10000 ms", PyFloat(l.JitterMS))
	}
	if err := l.checkPacket(); err != nil {
		return err
	}
	return require(!l.Seed.Big && l.Seed.V >= 0, "--seed: %s is not a whole number >= 0", l.Seed.Txt)
}

func decodeClientConfig(data any, where string) (ClientConfig, error) {
	o, err := newObject(data, where, []string{"kind", "window_mode", "window_bytes",
		"conn_window_bytes", "credit_policy", "max_frame_bytes", "channel_options", "connections",
		"conn_credit", "pool_bytes"})
	if err != nil {
		return ClientConfig{}, err
	}
	var c ClientConfig
	var e [10]error
	var conns Int
	c.Kind, e[0] = o.literal("kind", "grpcio", clientKinds)
	c.WindowMode, e[1] = o.literal("window_mode", "dynamic", windowModes)
	c.WindowBytes, e[2] = o.optInt("window_bytes")
	c.ConnWindowBytes, e[3] = o.optInt("conn_window_bytes")
	c.CreditPolicy, e[4] = o.optLiteral("credit_policy", creditPolicys)
	c.MaxFrameBytes, e[5] = o.optInt("max_frame_bytes")
	c.ChannelOptions, e[6] = o.options("channel_options")
	conns, e[7] = o.int("connections", 1)
	c.ConnCredit, e[8] = o.literal("conn_credit", "receipt", connCredits)
	c.PoolBytes, e[9] = o.optInt("pool_bytes")
	if err := first(e[:]...); err != nil {
		return ClientConfig{}, err
	}
	if err := wrap(where, require(inRange(conns, 1, 256), "connections: %s is outside 1..256", conns.Txt)); err != nil {
		return ClientConfig{}, err
	}
	c.Connections = int(conns.V)
	return c, wrap(where, c.check())
}

func (c ClientConfig) check() error {
	if c.PoolBytes != nil {
		if err := first(
			require(c.WindowMode == "pool", "--pool: only the pool window policy takes a pool (add --window-policy pool)"),
			require(inRange(*c.PoolBytes, http2DefaultFrameBytes, maxPoolBytes),
				"--pool: %s is outside %d B..1 GiB", c.PoolBytes.Txt, http2DefaultFrameBytes),
		); err != nil {
			return err
		}
	}
	if err := first(checkWindow("--window", c.WindowBytes), checkWindow("--conn-window", c.ConnWindowBytes),
		require((c.WindowMode == "static") == (c.WindowBytes != nil),
			"--window: a static window needs a size, and only a static window takes one")); err != nil {
		return err
	}
	if c.MaxFrameBytes != nil && !inRange(*c.MaxFrameBytes, h2MinFrame, h2MaxFrame) {
		return usage("max frame size: %s is outside HTTP/2's %d..%d", c.MaxFrameBytes.Txt, h2MinFrame, h2MaxFrame)
	}
	immediate := c.CreditPolicy == nil || *c.CreditPolicy == "immediate"
	switch {
	case c.Kind == "grpcio":
		return first(
			require(c.ConnWindowBytes == nil, "--conn-window: the grpcio client cannot set the connection window separately (C-core derives it from the stream window); use --client h2"),
			require(immediate, "credit policy: only the h2 client has one"),
			require(c.ConnCredit == "receipt", "--conn-credit: only the h2 client has one (C-core returns credit itself)"),
			require(c.WindowMode != "pool", "--window-policy pool: the receive pool is the h2 client's (use --client h2)"),
		)
	case contains(stackKinds, c.Kind):
		return first(
			require(c.WindowMode == "dynamic" || c.WindowMode == "static",
				"window mode: %s is static or dynamic, not %s", c.Kind, c.WindowMode),
			require(immediate, "credit policy: only the h2 client has one"),
			require(c.ConnCredit == "receipt", "--conn-credit: only the h2 client has one"),
		)
	default:
		return first(
			require(len(c.ChannelOptions) == 0, "--option: channel options are for the grpcio client only"),
			require(c.WindowMode != "bdp-off", "window mode: bdp-off is a grpcio mode; the h2 client is static or dynamic"),
		)
	}
}

func decodeServerConfig(data any, where string) (ServerConfig, error) {
	o, err := newObject(data, where, []string{"kind", "window_mode", "window_bytes", "channel_options"})
	if err != nil {
		return ServerConfig{}, err
	}
	var s ServerConfig
	var e [4]error
	s.Kind, e[0] = o.literal("kind", "grpcio", serverKinds)
	s.WindowMode, e[1] = o.literal("window_mode", "dynamic", windowModes)
	s.WindowBytes, e[2] = o.optInt("window_bytes")
	s.ChannelOptions, e[3] = o.options("channel_options")
	if err := first(e[:]...); err != nil {
		return ServerConfig{}, err
	}
	return s, wrap(where, first(
		checkWindow("--server-window", s.WindowBytes),
		require((s.WindowMode == "static") == (s.WindowBytes != nil),
			"--server-window: a static window needs a size, and only a static window takes one"),
	))
}

// FormatBytes is kit.plan.units.format_bytes: 64 KiB, 1.5 MiB, 1000 B.
func FormatBytes(n float64) string {
	for _, u := range []struct {
		name string
		size float64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			s := fmt.Sprintf("%.2f", n/u.size)
			for len(s) > 0 && s[len(s)-1] == '0' {
				s = s[:len(s)-1]
			}
			if len(s) > 0 && s[len(s)-1] == '.' {
				s = s[:len(s)-1]
			}
			return s + " " + u.name
		}
	}
	return fmt.Sprintf("%.0f B", n)
}

// FormatRate is kit.plan.units.format_rate: 100 Mbit/s (three significant figures).
func FormatRate(bits float64) string {
	for _, u := range []struct {
		name string
		size float64
	}{{"Gbit/s", 1e9}, {"Mbit/s", 1e6}, {"kbit/s", 1e3}} {
		if bits >= u.size {
			return fmt.Sprintf("%.3g %s", bits/u.size, u.name)
		}
	}
	return fmt.Sprintf("%.3g bit/s", bits)
}

func decodeWorkload(data any, where string) (Workload, error) {
	o, err := newObject(data, where, []string{"kind", "message_bytes", "streams", "duration_s",
		"bytes_per_stream", "calls", "warmup", "timeout_s", "slow_streams", "read_rate_bits_s"})
	if err != nil {
		return Workload{}, err
	}
	var w Workload
	var e [10]error
	var msg, streams, calls, slow Int
	w.Kind, e[0] = o.literal("kind", "download", workloadKinds)
	msg, e[1] = o.int("message_bytes", defaultMessageBytes)
	streams, e[2] = o.int("streams", 1)
	w.DurationS, e[3] = o.optFloat("duration_s")
	w.BytesPerStream, e[4] = o.optInt("bytes_per_stream")
	calls, e[5] = o.int("calls", 200)
	w.Warmup, e[6] = o.bool("warmup", true)
	w.TimeoutS, e[7] = o.float("timeout_s", 60)
	slow, e[8] = o.int("slow_streams", 0)
	w.ReadRateBitsS, e[9] = o.optFloat("read_rate_bits_s")
	if err := first(e[:]...); err != nil {
		return Workload{}, err
	}
	check := func() error {
		if err := first(
			require(inRange(msg, 1, MaxWorkloadMessage), "--message-size: %s is outside 1..64 MiB", msg.Txt),
			require(inRange(streams, 1, MaxStreams), "--streams: %s is outside 1..%d", streams.Txt, MaxStreams),
			require(inRange(calls, 1, 1_000_000), "--calls: %s is outside 1..1000000", calls.Txt),
		); err != nil {
			return err
		}
		w.MessageBytes, w.Streams, w.Calls = int(msg.V), int(streams.V), int(calls.V)
		if d := w.DurationS; d != nil && !(0.01 <= *d && *d <= 3600) {
			return usage("--duration: %s s is outside 0.01..3600 s", PyFloat(*d))
		}
		if b := w.BytesPerStream; b != nil {
			if !inRange(*b, 1, 1<<40) {
				return usage("--bytes: %s is outside 1 B..1 TiB", b.Txt)
			}
			if b.V < int64(w.MessageBytes) {
				return usage("--bytes: %s B per stream is less than one message (%s); ask for at least "+
					"the message size, or a smaller --message-size", b.Txt, FormatBytes(float64(w.MessageBytes)))
			}
		}
		if !(1.0 <= w.TimeoutS && w.TimeoutS <= 7200) {
			return usage("--timeout: %s s is outside 1..7200 s", PyFloat(w.TimeoutS))
		}
		if !inRange(slow, 0, int64(w.Streams)) {
			return usage("--slow-streams: %s is outside 0..%d (--streams)", slow.Txt, w.Streams)
		}
		w.SlowStreams = int(slow.V)
		if (w.SlowStreams > 0) != (w.ReadRateBitsS != nil) {
			return usage("--read-rate: slow streams need a read rate, and only slow streams take one " +
				"(give --slow-streams and --read-rate together)")
		}
		if r := w.ReadRateBitsS; r != nil {
			if !(*r > 0) {
				return usage("--read-rate: %s bit/s must be above 0", PyFloat(*r))
			}
			if w.Kind != "download" {
				return usage("--slow-streams: slow readers are for downloads (--workload download)")
			}
		}
		return nil
	}
	return w, wrap(where, check())
}

func decodeTrial(data any, where string) (Trial, error) {
	o, err := newObject(data, where, []string{"link", "client", "server", "workload", "label"})
	if err != nil {
		return Trial{}, err
	}
	t := Trial{
		Link:     Link{Seed: Int{V: 1, Txt: "1"}},
		Client:   ClientConfig{Kind: "grpcio", WindowMode: "dynamic", Connections: 1, ConnCredit: "receipt"},
		Server:   ServerConfig{Kind: "grpcio", WindowMode: "dynamic"},
		Workload: Workload{Kind: "download", MessageBytes: defaultMessageBytes, Streams: 1, Calls: 200, Warmup: true, TimeoutS: 60},
	}
	if v, ok := o.m["link"]; ok {
		if t.Link, err = decodeLink(v, o.path("link")); err != nil {
			return Trial{}, err
		}
	}
	if v, ok := o.m["client"]; ok {
		if t.Client, err = decodeClientConfig(v, o.path("client")); err != nil {
			return Trial{}, err
		}
	}
	if v, ok := o.m["server"]; ok {
		if t.Server, err = decodeServerConfig(v, o.path("server")); err != nil {
			return Trial{}, err
		}
	}
	if v, ok := o.m["workload"]; ok {
		if t.Workload, err = decodeWorkload(v, o.path("workload")); err != nil {
			return Trial{}, err
		}
	}
	if t.Label, err = o.str("label", ""); err != nil {
		return Trial{}, err
	}
	up, down := t.Link.RateUpBitsS, t.Link.RateDownBitsS
	for _, r := range []struct {
		name string
		v    *float64
	}{{"--rate-up", up}, {"--rate-down", down}} {
		if r.v == nil {
			continue
		}
		name := r.name
		if up != nil && down != nil && *up == *down {
			name = "--rate"
		}
		frameS := slowestFrameBytes * 8 / *r.v
		if frameS > t.Workload.TimeoutS {
			return Trial{}, usage("%s: %s: at %s one 16 KiB frame takes %.0f s, longer than the %s s timeout "+
				"(raise the rate or --timeout)", where, name, FormatRate(*r.v), frameS, gfmt(t.Workload.TimeoutS))
		}
	}
	return t, nil
}

func gfmt(f float64) string { return fmt.Sprintf("%g", f) }

// DecodeClientProcess is from_json(ClientProcess, data, "ClientProcess").
func DecodeClientProcess(data any) (ClientProcess, error) {
	const where = "ClientProcess"
	o, err := newObject(data, where, []string{"target_host", "target_port", "trial"}, "target_port")
	if err != nil {
		return ClientProcess{}, err
	}
	p := ClientProcess{}
	if p.TargetHost, err = o.str("target_host", loopback); err != nil {
		return p, err
	}
	port, err := o.int("target_port", 0)
	if err != nil {
		return p, err
	}
	trialData, ok := o.m["trial"]
	if !ok {
		trialData = map[string]any{}
	}
	if p.Trial, err = decodeTrial(trialData, o.path("trial")); err != nil {
		return p, err
	}
	if err := wrap(where, first(
		require(p.TargetHost != "", "target_host: must not be empty"),
		require(inRange(port, 1, 65535), "target_port: %s is outside 1..65535", port.Txt),
	)); err != nil {
		return p, err
	}
	p.TargetPort = int(port.V)
	return p, nil
}

// DecodeServerProcess is from_json(ServerProcess, data, "ServerProcess").
func DecodeServerProcess(data any) (ServerProcess, error) {
	const where = "ServerProcess"
	o, err := newObject(data, where, []string{"config", "listen_host", "listen_port", "workers"})
	if err != nil {
		return ServerProcess{}, err
	}
	p := ServerProcess{Config: ServerConfig{Kind: "grpcio", WindowMode: "dynamic"}}
	if v, ok := o.m["config"]; ok {
		if p.Config, err = decodeServerConfig(v, o.path("config")); err != nil {
			return p, err
		}
	}
	if p.ListenHost, err = o.str("listen_host", loopback); err != nil {
		return p, err
	}
	port, err := o.int("listen_port", 0)
	if err != nil {
		return p, err
	}
	workers, err := o.int("workers", DefaultServerWorkers)
	if err != nil {
		return p, err
	}
	if err := wrap(where, first(
		require(p.ListenHost != "", "--listen: the host must not be empty"),
		require(inRange(port, 0, 65535), "listen port: %s is outside 0..65535", port.Txt),
		require(inRange(workers, 8, 4096), "workers: %s is outside 8..4096", workers.Txt),
	)); err != nil {
		return p, err
	}
	p.ListenPort, p.Workers = int(port.V), int(workers.V)
	return p, nil
}

// IsLoopbackHost is kit.plan.processes.is_loopback_host.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	return isLoopbackIP(host)
}
