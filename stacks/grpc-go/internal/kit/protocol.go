// Package kit is the kit's side of the two grpc-go programs: the process protocol
// (docs/process-protocol.md) with its lines printed from protos/worker.proto's messages, the
// jobs decoded by protojson (job.go), grpc-go's option table (options.go), the server's
// download budget, the bulk codec, the read pacer and the client's frame tap.
package kit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	wpb "kit/stacks/grpc-go/internal/workerpb"
)

// Exit codes of the process protocol.
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitBadJob      = 2
	ExitCannotStart = 3
	ExitMeasurement = 4
)

// Stack is the ready line's stack; the version is grpc.Version, read from the linked library.
const Stack = "grpc-go"

// Lines writes protocol lines, one JSON object each, printed by protojson from the .proto's
// messages with its field names: at most one final line, ever, and nothing after it (a client
// worker writes an answer per trial before it).
type Lines struct {
	mu    sync.Mutex
	final bool
}

var lineFormat = protojson.MarshalOptions{UseProtoNames: true}

// LineText is one protocol line: protojson's output compacted (protojson varies its
// whitespace from build to build, on purpose) and a newline.
func LineText(m proto.Message) []byte {
	b, err := lineFormat.Marshal(m)
	var buf bytes.Buffer
	if err == nil {
		err = json.Compact(&buf, b)
	}
	if err != nil {
		buf.Reset()
		buf.WriteString(`{"error":"cannot print a protocol line","exit_code":1}`)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

func (l *Lines) write(m proto.Message) {
	_, _ = os.Stdout.Write(LineText(m)) // unbuffered: each line goes out at once
}

// Ready prints the ready line: port is where a server listens (0 for a client); worker says
// that a client reads one job per line of stdin.
func (l *Lines) Ready(port int, worker bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.final {
		return
	}
	l.write(&wpb.Ready{Ready: true, Pid: uint32(os.Getpid()), Port: uint32(port), Stack: Stack,
		Version: grpc.Version, Worker: worker})
}

// Answer prints a client worker's answer for its trial number trial (1: its first): not a
// final line, more trials may follow.
func (l *Lines) Answer(result *wpb.ClientResult, trial int) {
	l.mu.Lock()
	if l.final {
		l.mu.Unlock()
		select {} // a signal's final line came first: its os.Exit is under way
	}
	defer l.mu.Unlock()
	l.write(&wpb.ClientAnswer{Result: result, ClientTrial: uint32(trial)})
}

// Final prints a final result line (a ClientAnswer or a ServerAnswer) and exits 0, unless a
// final line was already printed, in which case the process is on its way out anyway.
func (l *Lines) Final(answer proto.Message) {
	l.mu.Lock()
	if l.final {
		l.mu.Unlock()
		select {} // the other final line's os.Exit is under way
	}
	l.final = true
	l.write(answer)
	os.Exit(ExitOK)
}

// Fail prints one error line (one line of text) and exits with code.
func (l *Lines) Fail(code int, format string, args ...any) {
	l.mu.Lock()
	if l.final {
		l.mu.Unlock()
		select {}
	}
	l.final = true
	l.write(&wpb.Failure{Error: OneLine(fmt.Sprintf(format, args...)), ExitCode: int32(code)})
	os.Exit(code)
}

// OneLine is text with every run of white space (newlines, protojson's non-breaking spaces)
// made one space.
func OneLine(text string) string {
	if msg := strings.Join(strings.Fields(text), " "); msg != "" {
		return msg
	}
	return "failed"
}

// SignalName is SIGTERM / SIGINT as Python names them.
func SignalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return sig.String()
}

// SignalExit is 128 + N.
func SignalExit(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128 + 15
}

// ---- clocks -------------------------------------------------------------------------------

// Clock gives CLOCK_MONOTONIC nanoseconds, the clock every process on the machine shares (the
// kit matches a client's t_start_ns/t_end_ns with the delay line's timestamps). One
// clock_gettime(CLOCK_MONOTONIC) at start; after that Go's monotonic time.Since, which on
// Linux reads the same clock (runtime.nanotime is CLOCK_MONOTONIC, through the vDSO).
type Clock struct {
	base     int64
	baseTime time.Time
}

func NewClock() *Clock {
	var ts unix.Timespec
	t := time.Now()
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return &Clock{base: ts.Nano(), baseTime: t}
}

// Now is CLOCK_MONOTONIC in nanoseconds.
func (c *Clock) Now() int64 { return c.base + int64(time.Since(c.baseTime)) }

// CPUSeconds is this process's user + system CPU time (getrusage(RUSAGE_SELF)).
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// HostPort joins a host and port, bracketing an IPv6 host.
func HostPort(host string, port uint32) string {
	return net.JoinHostPort(strings.Trim(host, "[]"), fmt.Sprint(port))
}

// IsLoopbackHost: localhost or a loopback IP literal.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
