package kit

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"google.golang.org/grpc"
)

// grpc-go's knobs for flow control and throughput, by the names grpc-go gives them
// (dialoptions.go and server.go of google.golang.org/grpc; see the README's table).

// MinWindow is grpc-go's lower bound: a window below it is silently ignored
// (http2_client.go / http2_server.go: "if opts.InitialWindowSize >= defaultWindowSize").
const MinWindow = 65535

type knobKind int

const (
	knobWindow  knobKind = iota // int32 window, 65535..2^31-1
	knobBuffer                  // int, 0..1 GiB (0 disables the buffer)
	knobBool                    // 0/1, true/false
	knobStreams                 // uint32, 0 (unlimited) .. 2^32-1
)

type knob struct {
	kind knobKind
	api  string // the grpc-go call, for notes
}

var clientKnobs = map[string]knob{
	"InitialWindowSize":     {knobWindow, "WithInitialWindowSize"},
	"InitialConnWindowSize": {knobWindow, "WithInitialConnWindowSize"},
	"ReadBufferSize":        {knobBuffer, "WithReadBufferSize"},
	"WriteBufferSize":       {knobBuffer, "WithWriteBufferSize"},
	"SharedWriteBuffer":     {knobBool, "WithSharedWriteBuffer"},
}

var serverKnobs = map[string]knob{
	"InitialWindowSize":     {knobWindow, "InitialWindowSize"},
	"InitialConnWindowSize": {knobWindow, "InitialConnWindowSize"},
	"ReadBufferSize":        {knobBuffer, "ReadBufferSize"},
	"WriteBufferSize":       {knobBuffer, "WriteBufferSize"},
	"SharedWriteBuffer":     {knobBool, "SharedWriteBuffer"},
	"MaxConcurrentStreams":  {knobStreams, "MaxConcurrentStreams"},
}

func knobNames(table map[string]knob) string {
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Setting is one knob with its checked value.
type Setting struct {
	Key  string
	Int  int64
	Bool bool
	knob knob
}

// Call is the setting as grpc-go code: WithInitialWindowSize(1048576).
func (s Setting) Call() string {
	if s.knob.kind == knobBool {
		return fmt.Sprintf("%s(%t)", s.knob.api, s.Bool)
	}
	return fmt.Sprintf("%s(%d)", s.knob.api, s.Int)
}

// Settings are a config's knobs: the window the kit asked for, then channel_options (a
// later one of the same key wins, as with the grpcio processes).
type Settings struct {
	list []Setting
}

func (ss *Settings) set(s Setting) {
	for i := range ss.list {
		if ss.list[i].Key == s.Key {
			ss.list[i] = s
			return
		}
	}
	ss.list = append(ss.list, s)
}

func (ss *Settings) Get(key string) (Setting, bool) {
	for _, s := range ss.list {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

// Calls is every setting as grpc-go code, in order.
func (ss *Settings) Calls() []string {
	out := make([]string, len(ss.list))
	for i, s := range ss.list {
		out[i] = s.Call()
	}
	return out
}

// Static is true when a window knob is set: grpc-go then runs without its BDP estimator.
func (ss *Settings) Static() bool {
	_, a := ss.Get("InitialWindowSize")
	_, b := ss.Get("InitialConnWindowSize")
	return a || b
}

func checkOption(who string, table map[string]knob, op Option) (Setting, error) {
	k, ok := table[op.Key]
	if !ok {
		return Setting{}, usage("%s: option '%s' is not one of %s", who, op.Key, knobNames(table))
	}
	s := Setting{Key: op.Key, knob: k}
	intIn := func(lo, hi int64, what string) error {
		if !op.IsInt || op.Int.Big || op.Int.V < lo || op.Int.V > hi {
			return usage("%s: option '%s' takes %s; %s is not one", who, op.Key, what, pyRepr(op.ValueText()))
		}
		s.Int = op.Int.V
		return nil
	}
	var err error
	switch k.kind {
	case knobWindow:
		err = intIn(MinWindow, HTTP2MaxWindow, fmt.Sprintf("a window of %d..%d bytes (grpc-go ignores a smaller one)", MinWindow, HTTP2MaxWindow))
	case knobBuffer:
		err = intIn(0, 1<<30, "a size of 0..1073741824 bytes (0: no buffer)")
	case knobStreams:
		err = intIn(0, math.MaxUint32, "a stream count of 0..4294967295 (0: unlimited)")
	case knobBool:
		switch {
		case op.IsInt && !op.Int.Big && (op.Int.V == 0 || op.Int.V == 1):
			s.Bool = op.Int.V == 1
		case !op.IsInt && (op.Str == "true" || op.Str == "false"):
			s.Bool = op.Str == "true"
		default:
			err = usage("%s: option '%s' takes 0, 1, true or false; %s is not one", who, op.Key, pyRepr(op.ValueText()))
		}
	}
	return s, err
}

// ---- the client ---------------------------------------------------------------------------

// ClientSettings checks a client config against what grpc-go can do and gives its knobs.
func ClientSettings(t Trial) (*Settings, error) {
	const who = "grpc-go client"
	c := t.Client
	switch {
	case c.Kind != "grpc-go":
		return nil, usage("%s: trial.client.kind is '%s'; this program is the grpc-go client", who, c.Kind)
	case c.WindowMode != "static" && c.WindowMode != "dynamic":
		return nil, usage("%s: window mode '%s' is not grpc-go's (static or dynamic)", who, c.WindowMode)
	case c.MaxFrameBytes != nil:
		return nil, usage("%s: max_frame_bytes is the kit's h2 client's; grpc-go has no knob for it "+
			"(its client advertises no SETTINGS_MAX_FRAME_SIZE, so its peer sends DATA frames of 16 KiB at most)", who)
	case c.PoolBytes != nil:
		return nil, usage("%s: pool_bytes is the kit's h2 client's receive pool; grpc-go has none", who)
	case c.CreditPolicy != nil:
		return nil, usage("%s: credit_policy is the kit's h2 client's; grpc-go returns credit "+
			"once a quarter of the window is consumed (transport inFlow.onRead), not settable", who)
	case c.ConnCredit != "receipt":
		return nil, usage("%s: conn_credit '%s' is the kit's h2 client's; grpc-go returns connection "+
			"credit on receipt (trInFlow.onData), not settable", who, c.ConnCredit)
	}
	ss := &Settings{}
	if c.WindowMode == "static" {
		w := c.WindowBytes.V
		if w < MinWindow {
			return nil, usage("%s: a static window of %d bytes is below grpc-go's lower bound of %d "+
				"(WithInitialWindowSize ignores a smaller value and keeps 65535)", who, w, MinWindow)
		}
		conn := min(w*int64(t.StreamsPerConnection()), HTTP2MaxWindow)
		if c.ConnWindowBytes != nil {
			conn = c.ConnWindowBytes.V
		}
		if conn < MinWindow {
			return nil, usage("%s: a connection window of %d bytes is below grpc-go's lower bound of %d "+
				"(WithInitialConnWindowSize ignores a smaller value and keeps 65535)", who, conn, MinWindow)
		}
		ss.set(Setting{Key: "InitialWindowSize", Int: w, knob: clientKnobs["InitialWindowSize"]})
		ss.set(Setting{Key: "InitialConnWindowSize", Int: conn, knob: clientKnobs["InitialConnWindowSize"]})
	} else if c.ConnWindowBytes != nil {
		return nil, usage("%s: conn_window_bytes is for a static window; with dynamic windows grpc-go's "+
			"BDP estimator sets it (or give the option InitialConnWindowSize, which turns the estimator off)", who)
	}
	for _, op := range c.ChannelOptions {
		s, err := checkOption(who, clientKnobs, op)
		if err != nil {
			return nil, err
		}
		if c.WindowMode == "static" && s.knob.kind == knobWindow {
			return nil, usage("%s: option '%s' sets what the static window sets (window_bytes, "+
				"conn_window_bytes); give one or the other", who, op.Key)
		}
		ss.set(s)
	}
	return ss, nil
}

// DialOptions are the grpc-go dial options for the settings.
func (ss *Settings) DialOptions() []grpc.DialOption {
	var out []grpc.DialOption
	for _, s := range ss.list {
		switch s.Key {
		case "InitialWindowSize":
			out = append(out, grpc.WithInitialWindowSize(int32(s.Int)))
		case "InitialConnWindowSize":
			out = append(out, grpc.WithInitialConnWindowSize(int32(s.Int)))
		case "ReadBufferSize":
			out = append(out, grpc.WithReadBufferSize(int(s.Int)))
		case "WriteBufferSize":
			out = append(out, grpc.WithWriteBufferSize(int(s.Int)))
		case "SharedWriteBuffer":
			out = append(out, grpc.WithSharedWriteBuffer(s.Bool)) //nolint:staticcheck // the knob users set
		}
	}
	return out
}

// ---- the server ---------------------------------------------------------------------------

// ServerSettings checks a server config against what grpc-go can do and gives its knobs.
// A static window sets the stream and the connection window to window_bytes (an upload is
// one stream).
func ServerSettings(c ServerConfig) (*Settings, error) {
	const who = "grpc-go server"
	switch {
	case c.Kind != "grpc-go":
		return nil, usage("%s: config.kind is '%s'; this program is the grpc-go server", who, c.Kind)
	case c.WindowMode != "static" && c.WindowMode != "dynamic":
		return nil, usage("%s: window mode '%s' is not grpc-go's (static or dynamic)", who, c.WindowMode)
	}
	ss := &Settings{}
	if c.WindowMode == "static" {
		w := c.WindowBytes.V
		if w < MinWindow {
			return nil, usage("%s: a static window of %d bytes is below grpc-go's lower bound of %d "+
				"(InitialWindowSize ignores a smaller value and keeps 65535)", who, w, MinWindow)
		}
		ss.set(Setting{Key: "InitialWindowSize", Int: w, knob: serverKnobs["InitialWindowSize"]})
		ss.set(Setting{Key: "InitialConnWindowSize", Int: w, knob: serverKnobs["InitialConnWindowSize"]})
	}
	for _, op := range c.ChannelOptions {
		s, err := checkOption(who, serverKnobs, op)
		if err != nil {
			return nil, err
		}
		if c.WindowMode == "static" && s.knob.kind == knobWindow {
			return nil, usage("%s: option '%s' sets what the static window sets (window_bytes); "+
				"give one or the other", who, op.Key)
		}
		ss.set(s)
	}
	return ss, nil
}

// ServerOptions are the grpc-go server options for the settings.
func (ss *Settings) ServerOptions() []grpc.ServerOption {
	var out []grpc.ServerOption
	for _, s := range ss.list {
		switch s.Key {
		case "InitialWindowSize":
			out = append(out, grpc.InitialWindowSize(int32(s.Int)))
		case "InitialConnWindowSize":
			out = append(out, grpc.InitialConnWindowSize(int32(s.Int)))
		case "ReadBufferSize":
			out = append(out, grpc.ReadBufferSize(int(s.Int)))
		case "WriteBufferSize":
			out = append(out, grpc.WriteBufferSize(int(s.Int)))
		case "SharedWriteBuffer":
			out = append(out, grpc.SharedWriteBuffer(s.Bool)) //nolint:staticcheck // the knob users set
		case "MaxConcurrentStreams":
			out = append(out, grpc.MaxConcurrentStreams(uint32(s.Int)))
		}
	}
	return out
}

// ServerWindowNote says, in grpc-go's terms, what a grpc-go server's receive window is.
func ServerWindowNote(c ServerConfig) string {
	ss, err := ServerSettings(c)
	if err != nil {
		return ""
	}
	if ss.Static() {
		return fmt.Sprintf("grpc-go %s server: %s; BDP estimator off", grpc.Version, strings.Join(ss.Calls(), ", "))
	}
	text := fmt.Sprintf("grpc-go %s server: BDP estimator on (its receive windows start at 65535 B and grow, up to 16 MiB)", grpc.Version)
	if calls := ss.Calls(); len(calls) > 0 {
		text += "; " + strings.Join(calls, ", ")
	}
	return text
}
