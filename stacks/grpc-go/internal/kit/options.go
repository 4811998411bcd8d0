package kit

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	wpb "kit/stacks/grpc-go/internal/workerpb"
)

// grpc-go's knobs by the names grpc-go gives them (dialoptions.go and server.go of
// google.golang.org/grpc; the README's table says where each is read). This table keeps only
// the mapping name -> grpc-go call and how notes write it; the kit owns the ranges
// (kit/plan/stack_options.py). Durations are in milliseconds.

// ClientWho and ServerWho begin every line the programs print about themselves.
const (
	ClientWho = "grpc-go client"
	ServerWho = "grpc-go server"
)

type takes int

const (
	takesInt takes = iota
	takesFlag
)

var clientKnobs = map[string]takes{
	"InitialWindowSize":            takesInt,
	"InitialConnWindowSize":        takesInt,
	"ReadBufferSize":               takesInt,
	"WriteBufferSize":              takesInt,
	"SharedWriteBuffer":            takesFlag,
	"KeepaliveTime":                takesInt,
	"KeepaliveTimeout":             takesInt,
	"KeepalivePermitWithoutStream": takesFlag,
}

var serverKnobs = map[string]takes{
	"InitialWindowSize":            takesInt,
	"InitialConnWindowSize":        takesInt,
	"ReadBufferSize":               takesInt,
	"WriteBufferSize":              takesInt,
	"SharedWriteBuffer":            takesFlag,
	"MaxConcurrentStreams":         takesInt,
	"KeepaliveTime":                takesInt,
	"KeepaliveTimeout":             takesInt,
	"KeepaliveMinTime":             takesInt,
	"KeepalivePermitWithoutStream": takesFlag,
}

// KnobNames is a side's option names, sorted, comma-space separated.
func KnobNames(server bool) string {
	table := clientKnobs
	if server {
		table = serverKnobs
	}
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func variant(op *wpb.Option) string {
	switch op.GetValue().(type) {
	case *wpb.Option_Int:
		return "an int"
	case *wpb.Option_Flag:
		return "a flag"
	case *wpb.Option_Ratio:
		return "a ratio"
	case *wpb.Option_Text:
		return "text"
	}
	return "no value"
}

// option checks that the stack has op and that op's value is of the variant its knob takes.
func option(server bool, op *wpb.Option) error {
	table := clientKnobs
	if server {
		table = serverKnobs
	}
	kind, ok := table[op.GetName()]
	if !ok {
		return bad("option '%s' is not one of %s", op.GetName(), KnobNames(server))
	}
	want := map[takes]string{takesInt: "an int", takesFlag: "a flag"}[kind]
	if got := variant(op); got != want {
		return bad("option '%s' takes %s, not %s", op.GetName(), want, got)
	}
	return nil
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// keepaliveFields gathers the options of one keepalive struct, applied as one call (a later
// grpc.WithKeepaliveParams replaces the whole struct), and writes it as typed.
type keepaliveFields struct {
	set   bool
	parts []string
}

func (k *keepaliveFields) duration(field string, n int64) time.Duration {
	k.set = true
	k.parts = append(k.parts, fmt.Sprintf("%s: %d * time.Millisecond", field, n))
	return ms(n)
}

func (k *keepaliveFields) flag(field string, b bool) bool {
	k.set = true
	k.parts = append(k.parts, fmt.Sprintf("%s: %t", field, b))
	return b
}

func (k *keepaliveFields) text(call, typ string) string {
	return fmt.Sprintf("%s(keepalive.%s{%s})", call, typ, strings.Join(k.parts, ", "))
}

// ---- the client ---------------------------------------------------------------------------

// ClientSetup is what a ClientJob's windows and options make of grpc-go's dial options.
type ClientSetup struct {
	Dial  []grpc.DialOption
	Calls []string // each call as typed, in the order applied
	// Static: the job's static windows (grpc.WithStatic*). WindowOption: an option set a
	// window with WithInitialWindowSize / WithInitialConnWindowSize.
	Static, WindowOption bool
	// The windows set, bytes (0: grpc-go's 65535).
	StreamWindow, ConnWindow int64
	// Keepalive options were given with a Time below grpc-go's 10 s minimum (none counts as
	// 0): grpc.WithKeepaliveParams raises it to 10 s. KeepaliveAsked is the Time given.
	KeepaliveRaised bool
	KeepaliveAsked  time.Duration
}

// KeepaliveMinTime is grpc-go's floor for a client's keepalive time
// (internal.KeepaliveMinPingTime, applied by grpc.WithKeepaliveParams).
const KeepaliveMinTime = 10 * time.Second

func (s *ClientSetup) add(o grpc.DialOption, format string, args ...any) {
	s.Dial = append(s.Dial, o)
	s.Calls = append(s.Calls, fmt.Sprintf(format, args...))
}

// NewClientSetup applies the job's windows, then its options in order.
func NewClientSetup(job *wpb.ClientJob) (*ClientSetup, error) {
	s := &ClientSetup{}
	if w := job.GetWindows(); w.GetStatic() {
		s.Static = true
		s.StreamWindow = int64(w.GetStreamBytes())
		s.add(grpc.WithStaticStreamWindowSize(int32(w.GetStreamBytes())), "grpc.WithStaticStreamWindowSize(%d)", w.GetStreamBytes())
		if w.GetConnBytes() != 0 {
			s.ConnWindow = int64(w.GetConnBytes())
			s.add(grpc.WithStaticConnWindowSize(int32(w.GetConnBytes())), "grpc.WithStaticConnWindowSize(%d)", w.GetConnBytes())
		}
	}
	var ka keepalive.ClientParameters
	var fields keepaliveFields
	for _, op := range job.GetOptions() {
		if err := option(false, op); err != nil {
			return nil, err
		}
		n, b := op.GetInt(), op.GetFlag()
		switch op.GetName() {
		case "InitialWindowSize":
			s.WindowOption, s.StreamWindow = true, n
			s.add(grpc.WithInitialWindowSize(int32(n)), "grpc.WithInitialWindowSize(%d)", n)
		case "InitialConnWindowSize":
			s.WindowOption, s.ConnWindow = true, n
			s.add(grpc.WithInitialConnWindowSize(int32(n)), "grpc.WithInitialConnWindowSize(%d)", n)
		case "ReadBufferSize":
			s.add(grpc.WithReadBufferSize(int(n)), "grpc.WithReadBufferSize(%d)", n)
		case "WriteBufferSize":
			s.add(grpc.WithWriteBufferSize(int(n)), "grpc.WithWriteBufferSize(%d)", n)
		case "SharedWriteBuffer":
			s.add(grpc.WithSharedWriteBuffer(b), "grpc.WithSharedWriteBuffer(%t)", b)
		case "KeepaliveTime":
			ka.Time = fields.duration("Time", n)
		case "KeepaliveTimeout":
			ka.Timeout = fields.duration("Timeout", n)
		case "KeepalivePermitWithoutStream":
			ka.PermitWithoutStream = fields.flag("PermitWithoutStream", b)
		}
	}
	if fields.set {
		s.KeepaliveRaised, s.KeepaliveAsked = ka.Time < KeepaliveMinTime, ka.Time
		s.add(grpc.WithKeepaliveParams(ka), "%s", fields.text("grpc.WithKeepaliveParams", "ClientParameters"))
	}
	return s, nil
}

// ---- the server ---------------------------------------------------------------------------

// ServerSetup is what a ServerJob's windows, stream limit and options make of grpc-go's
// server options.
type ServerSetup struct {
	Options []grpc.ServerOption
	Calls   []string
}

func (s *ServerSetup) add(o grpc.ServerOption, format string, args ...any) {
	s.Options = append(s.Options, o)
	s.Calls = append(s.Calls, fmt.Sprintf(format, args...))
}

// NewServerSetup applies the job's windows and SETTINGS_MAX_CONCURRENT_STREAMS, then its
// options in order (grpc-go applies server options in order: a later one wins).
func NewServerSetup(job *wpb.ServerJob) (*ServerSetup, error) {
	s := &ServerSetup{}
	if w := job.GetWindows(); w.GetStatic() {
		s.add(grpc.StaticStreamWindowSize(int32(w.GetStreamBytes())), "grpc.StaticStreamWindowSize(%d)", w.GetStreamBytes())
		if w.GetConnBytes() != 0 {
			s.add(grpc.StaticConnWindowSize(int32(w.GetConnBytes())), "grpc.StaticConnWindowSize(%d)", w.GetConnBytes())
		}
	}
	if n := job.GetMaxConcurrentStreams(); n != 0 {
		s.add(grpc.MaxConcurrentStreams(n), "grpc.MaxConcurrentStreams(%d)", n)
	}
	var kp keepalive.ServerParameters
	var kep keepalive.EnforcementPolicy
	var params, policy keepaliveFields
	for _, op := range job.GetOptions() {
		if err := option(true, op); err != nil {
			return nil, err
		}
		n, b := op.GetInt(), op.GetFlag()
		switch op.GetName() {
		case "InitialWindowSize":
			s.add(grpc.InitialWindowSize(int32(n)), "grpc.InitialWindowSize(%d)", n)
		case "InitialConnWindowSize":
			s.add(grpc.InitialConnWindowSize(int32(n)), "grpc.InitialConnWindowSize(%d)", n)
		case "ReadBufferSize":
			s.add(grpc.ReadBufferSize(int(n)), "grpc.ReadBufferSize(%d)", n)
		case "WriteBufferSize":
			s.add(grpc.WriteBufferSize(int(n)), "grpc.WriteBufferSize(%d)", n)
		case "SharedWriteBuffer":
			s.add(grpc.SharedWriteBuffer(b), "grpc.SharedWriteBuffer(%t)", b)
		case "MaxConcurrentStreams":
			s.add(grpc.MaxConcurrentStreams(uint32(n)), "grpc.MaxConcurrentStreams(%d)", n)
		case "KeepaliveTime":
			kp.Time = params.duration("Time", n)
		case "KeepaliveTimeout":
			kp.Timeout = params.duration("Timeout", n)
		case "KeepaliveMinTime":
			kep.MinTime = policy.duration("MinTime", n)
		case "KeepalivePermitWithoutStream":
			kep.PermitWithoutStream = policy.flag("PermitWithoutStream", b)
		}
	}
	if params.set {
		s.add(grpc.KeepaliveParams(kp), "%s", params.text("grpc.KeepaliveParams", "ServerParameters"))
	}
	if policy.set {
		s.add(grpc.KeepaliveEnforcementPolicy(kep), "%s", policy.text("grpc.KeepaliveEnforcementPolicy", "EnforcementPolicy"))
	}
	return s, nil
}
