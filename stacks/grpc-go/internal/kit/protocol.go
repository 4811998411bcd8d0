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
)

// Exit codes of the process protocol.
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitBadConfig   = 2
	ExitCannotStart = 3
	ExitMeasurement = 4
)

const configFlag = "--config"

// ConfigText is the JSON of `--config JSON` or `--config=JSON`.
func ConfigText(args []string, record string) (string, error) {
	switch {
	case len(args) == 1 && strings.HasPrefix(args[0], configFlag+"="):
		return args[0][len(configFlag)+1:], nil
	case len(args) == 2 && args[0] == configFlag:
		return args[1], nil
	}
	return "", usage("usage: %s '<%s as JSON>' (got %d argument(s))", configFlag, record, len(args))
}

// ParseConfig reads the argument's JSON (a UsageError when it is not JSON).
func ParseConfig(args []string, record string) (any, error) {
	text, err := ConfigText(args, record)
	if err != nil {
		return nil, err
	}
	return ParseConfigText(text, configFlag)
}

// ParseConfigText reads one config's JSON (--config's, or a worker's line); source names it
// in the UsageError when it is not JSON.
func ParseConfigText(text, source string) (any, error) {
	data, err := ParseJSON(text)
	if err != nil {
		return nil, usage("%s: not JSON (%v)", source, err)
	}
	return data, nil
}

// Lines writes protocol lines: at most one final line, ever, and nothing after it (a client
// worker writes a result line per trial before it).
type Lines struct {
	mu    sync.Mutex
	final bool
}

func (l *Lines) write(v any) bool {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // one line, with its newline; no HTML escaping of < > &
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		buf.WriteString(`{"error": "cannot encode a protocol line", "exit_code": 1}` + "\n")
	}
	_, werr := os.Stdout.Write(buf.Bytes()) // unbuffered: each line goes out at once
	return werr == nil
}

// Ready prints the ready line.
func (l *Lines) Ready(port int, stack, version string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.final {
		return
	}
	l.write(map[string]any{"ready": true, "pid": os.Getpid(), "port": port, "stack": stack, "version": version})
}

// ReadyWorker prints a client worker's ready line (it says "worker": true).
func (l *Lines) ReadyWorker(stack, version string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.final {
		return
	}
	l.write(map[string]any{"ready": true, "pid": os.Getpid(), "port": 0, "stack": stack, "version": version, "worker": true})
}

// TrialResult prints a client worker's result line for its trial number trial (1 = its
// first): not a final line, more trials may follow.
func (l *Lines) TrialResult(result any, trial int) {
	l.mu.Lock()
	if l.final {
		l.mu.Unlock()
		select {} // a signal's final line came first: its os.Exit is under way
	}
	defer l.mu.Unlock()
	l.write(map[string]any{"result": result, "client_trial": trial})
}

// Result prints the result line and exits 0 (unless a final line was already printed, in
// which case the process is on its way out anyway).
func (l *Lines) Result(result any) {
	l.mu.Lock()
	if l.final {
		l.mu.Unlock()
		select {} // the other final line's os.Exit is under way
	}
	l.final = true
	l.write(map[string]any{"result": result})
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
	msg := strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
	if msg == "" {
		msg = "failed"
	}
	l.write(map[string]any{"error": msg, "exit_code": code})
	os.Exit(code)
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

func isLoopbackIP(host string) bool {
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// HostPort joins a host and port, bracketing an IPv6 host.
func HostPort(host string, port int) string {
	return net.JoinHostPort(strings.Trim(host, "[]"), fmt.Sprint(port))
}
