// The grpc-go client of the kit: `client --config '<ClientJob as JSON>'`, one process per
// trial, or `client --worker`, one ClientJob per line of stdin, speaking
// docs/process-protocol.md with protos/worker.proto's messages. Semantics follow the kit's
// reference client (kit/clients/grpcio_client.py): warm-up, an idle gap, timed or fixed
// downloads over N streams and M connections, slow readers, sequential unary pings, one
// client-streaming upload.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"kit/stacks/grpc-go/internal/kit"
	pb "kit/stacks/grpc-go/internal/throughputpb"
	wpb "kit/stacks/grpc-go/internal/workerpb"
)

const (
	who             = kit.ClientWho
	usage           = "client --config '<ClientJob as JSON>' | client --worker"
	maxMessageBytes = 128 * kit.MiB
	// How long a connection may take to come up (or the trial's timeout, if shorter).
	connectLimitS = 10.0
)

var lines kit.Lines

// failure is an error with its exit code.
type failure struct {
	code int
	msg  string
}

func (f *failure) Error() string { return f.msg }

func fail(code int, format string, args ...any) error {
	return &failure{code: code, msg: fmt.Sprintf(format, args...)}
}

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig := <-signals
		lines.Fail(kit.SignalExit(sig), "%s: interrupted by %s", who, kit.SignalName(sig))
	}()

	args := os.Args[1:]
	if len(args) == 1 && args[0] == "--worker" {
		worker()
	}
	text, err := kit.ConfigArg(args, usage)
	if err != nil {
		badJob(err)
	}
	j := prepare(text, kit.ConfigSource)
	kit.InstallCodec()
	lines.Ready(0, false)
	lines.Final(&wpb.ClientAnswer{Result: measure(j)})
}

// worker is `client --worker`, a client worker (docs/process-protocol.md): one trial per line
// of stdin, each on ClientConns (TCP connections) of its own, one answer each; the first
// error (a bad line too) is the final line and ends it; stdin's end: exit 0.
func worker() {
	kit.InstallCodec()
	lines.Ready(0, true)
	in := bufio.NewReader(os.Stdin)
	for trial := 1; ; {
		text, err := in.ReadString('\n')
		if strings.TrimSpace(text) != "" {
			j := prepare(strings.TrimRight(text, "\r\n"), kit.WorkerSource)
			lines.Answer(measure(j), trial)
			trial++
		}
		if err != nil { // io.EOF: the normal end
			os.Exit(kit.ExitOK)
		}
	}
}

func badJob(err error) { lines.Fail(kit.ExitBadJob, "%s: %v", who, err) }

// job is a decoded ClientJob and what its windows and options make of grpc-go's dial options.
type job struct {
	*wpb.ClientJob
	setup *kit.ClientSetup
}

// prepare is the job in text, or its error line (exit 2).
func prepare(text, source string) job {
	j, err := kit.DecodeClientJob(text, source)
	if err != nil {
		badJob(err)
	}
	setup, err := kit.NewClientSetup(j)
	if err != nil {
		badJob(err)
	}
	return job{j, setup}
}

// measure runs one trial: its result, or its error line and exit code.
func measure(j job) *wpb.ClientResult {
	result, err := run(j)
	if err != nil {
		var f *failure
		if errors.As(err, &f) {
			lines.Fail(f.code, "%s", f.msg)
		}
		lines.Fail(kit.ExitMeasurement, "%s: %v", who, err)
	}
	return result
}

// ---- limits -------------------------------------------------------------------------------

// limit is a deadline and how a failure names it.
type limit struct {
	what string
	s    float64
	at   time.Time
}

func (l limit) context() (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), l.at)
}

// callFailure is a failed call's error: a deadline names the limit that fired.
func callFailure(err error, l limit, what string) error {
	if status.Code(err) == codes.DeadlineExceeded {
		return fail(kit.ExitMeasurement, "%s: %s: %s of %g s ran out (%s)", who, what, l.what, l.s, kit.StatusText(err))
	}
	return fail(kit.ExitMeasurement, "%s: %s failed: %s", who, what, kit.StatusText(err))
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// ---- connections --------------------------------------------------------------------------

type channel struct {
	cc      *grpc.ClientConn
	client  pb.ThroughputClient
	tap     *kit.Tap
	mu      sync.Mutex
	lastErr error
	dials   int // TCP connections made: more than one when grpc-go dialled again
}

func (ch *channel) dialError() error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.lastErr
}

// dial makes one grpc.ClientConn: one TCP connection of its own (grpc-go never shares a
// transport between ClientConns), dialled by us so its frames can be tapped.
func dial(target string, setup *kit.ClientSetup, clock *kit.Clock) (*channel, error) {
	ch := &channel{tap: kit.NewTap(clock)}
	dialer := func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		ch.mu.Lock()
		ch.lastErr = err
		if err == nil {
			ch.dials++
		}
		ch.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return kit.TapConn(c, ch.tap), nil
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithNoProxy(),
		grpc.WithContextDialer(dialer),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageBytes), grpc.MaxCallSendMsgSize(maxMessageBytes)),
	}
	opts = append(opts, setup.Dial...) // the job's windows and options, after the kit's own
	cc, err := grpc.NewClient("passthrough:///"+target, opts...)
	if err != nil {
		return nil, fail(kit.ExitMeasurement, "%s: cannot make a channel to %s: %v", who, target, err)
	}
	ch.cc, ch.client = cc, pb.NewThroughputClient(cc)
	return ch, nil
}

// why words a dial error; file descriptors running out are named as such.
func why(err error) string {
	switch {
	case errors.Is(err, syscall.EMFILE):
		return "too many open files (EMFILE)"
	case errors.Is(err, syscall.ENFILE):
		return "too many open files in the system (ENFILE)"
	}
	return err.Error()
}

func (ch *channel) waitReady(target string, waitS float64) error {
	ctx, cancel := context.WithTimeout(context.Background(), seconds(waitS))
	defer cancel()
	ch.cc.Connect()
	for {
		state := ch.cc.GetState()
		if state == connectivity.Ready {
			return nil
		}
		if !ch.cc.WaitForStateChange(ctx, state) {
			because := ""
			if err := ch.dialError(); err != nil {
				because = fmt.Sprintf(" (%s)", why(err))
			}
			return fail(kit.ExitMeasurement, "%s: cannot reach %s within %g s%s; is the server running?", who, target, waitS, because)
		}
	}
}

// ---- the run ------------------------------------------------------------------------------

type runner struct {
	job      job
	clock    *kit.Clock
	channels []*channel
	trial    limit // the whole trial: connecting, warm-up, idle gap, work
	beganNS  int64
}

func run(j job) (*wpb.ClientResult, error) {
	clock := kit.NewClock()
	began := time.Now()
	r := &runner{job: j, clock: clock, beganNS: clock.Now(),
		trial: limit{what: "the trial's timeout_s", s: j.GetTimeoutS(), at: began.Add(seconds(j.GetTimeoutS()))}}
	target := kit.HostPort(j.GetTargetHost(), j.GetTargetPort())

	r.channels = make([]*channel, max(1, int(j.GetConnections())))
	defer func() {
		for _, ch := range r.channels {
			if ch != nil {
				ch.cc.Close()
			}
		}
	}()
	for i := range r.channels {
		ch, err := dial(target, j.setup, clock)
		if err != nil {
			return nil, err
		}
		r.channels[i] = ch
	}
	waitS := min(connectLimitS, j.GetTimeoutS())
	errs := make([]error, len(r.channels))
	var wg sync.WaitGroup
	for i, ch := range r.channels {
		wg.Go(func() { errs[i] = ch.waitReady(target, waitS) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if j.GetWarmup() { // the reference study's warm-up: one Ping per connection, nothing else
		for _, ch := range r.channels {
			ctx, cancel := r.trial.context()
			_, err := ch.client.Ping(ctx, &pb.PingRequest{Payload: []byte("warm")})
			cancel()
			if err != nil {
				return nil, callFailure(err, r.trial, "warm-up ping")
			}
		}
	}
	if idle := seconds(j.GetIdleS()); idle > 0 { // every connection open, no call on it
		time.Sleep(min(idle, max(0, time.Until(r.trial.at))))
	}
	var res *wpb.ClientResult
	var err error
	switch work := j.GetWork().(type) {
	case *wpb.ClientJob_Unary:
		res, err = r.unary(work.Unary)
	case *wpb.ClientJob_Upload:
		res, err = r.upload(work.Upload)
	case *wpb.ClientJob_Download:
		res, err = r.download(work.Download)
	default:
		return nil, fail(kit.ExitBadJob, "%s: bad job: no work", who) // DecodeClientJob refuses it first
	}
	if err != nil {
		return nil, err
	}
	res.Notes = append(res.Notes, r.connectionNotes()...)
	return res, nil
}

// connectionNotes say when a server closed a connection (GOAWAY: a keepalive policy's
// too_many_pings, say) and grpc-go dialled it again.
func (r *runner) connectionNotes() []string {
	var notes []string
	for i, ch := range r.channels {
		ch.mu.Lock()
		dials := ch.dials
		ch.mu.Unlock()
		for _, g := range ch.tap.GoAways() {
			notes = append(notes, fmt.Sprintf("connection %d: the server sent GOAWAY %s %q %.1f s into the trial",
				i+1, g.CodeName(), g.Debug, float64(g.AtNS-r.beganNS)/1e9))
		}
		if dials > 1 {
			notes = append(notes, fmt.Sprintf("connection %d: grpc-go dialled it again (%d TCP connections in all)", i+1, dials))
		}
	}
	return notes
}

func (r *runner) startTaps(now int64) {
	for _, ch := range r.channels {
		ch.tap.Start(now)
	}
}

func (r *runner) stopTaps() {
	for _, ch := range r.channels {
		ch.tap.Stop()
	}
}

func newResult() *wpb.ClientResult { return &wpb.ClientResult{Client: kit.Stack} }

// ---- download -----------------------------------------------------------------------------

type tally struct {
	messages uint64
	bytes    uint64
	lastNS   int64
	err      error
	pacer    *kit.ReadPacer
}

type download struct {
	r         *runner
	endNS     int64  // the timed phase's end (timed runs)
	fixed     uint64 // messages per stream (fixed runs), else 0
	msgBytes  int
	stop      chan struct{} // closed when every full-speed stream is done (slow readers stop)
	fastLeft  atomic.Int64
	stopOnce  sync.Once
	tallies   []*tally
	streamsWG sync.WaitGroup
}

func (r *runner) download(w *wpb.Download) (*wpb.ClientResult, error) {
	msgBytes := int(r.job.GetMessageBytes())
	cpu0 := kit.CPUSeconds()
	start := r.clock.Now()
	r.startTaps(start)
	d := &download{r: r, endNS: start + int64(w.GetTimedS()*1e9), fixed: w.GetMessagesPerStream(),
		msgBytes: msgBytes, stop: make(chan struct{})}
	pacing := w.GetPacing()
	for i := range int(w.GetStreams()) {
		t := &tally{}
		if i < int(w.GetSlowStreams()) {
			t.pacer = kit.NewReadPacer(pacing.GetRateBytesS(), pacing.GetJitter(), pacing.GetSeed()+uint64(i), start, msgBytes)
		} else {
			d.fastLeft.Add(1)
		}
		d.tallies = append(d.tallies, t)
	}
	for i, t := range d.tallies {
		d.streamsWG.Add(1)
		go d.stream(r.channels[i%len(r.channels)], t)
	}
	finished := make(chan struct{})
	go func() { d.streamsWG.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(time.Until(r.trial.at) + 5*time.Second): // the calls' deadline did not end them
		return nil, fail(kit.ExitMeasurement, "%s: download: %s of %g s ran out, and the streams did not end", who, r.trial.what, r.trial.s)
	}
	cpu := kit.CPUSeconds() - cpu0
	r.stopTaps()
	for _, t := range d.tallies {
		if t.err != nil {
			return nil, callFailure(t.err, r.trial, "download")
		}
	}
	res := newResult()
	// The last stream's last message ends the timed phase; with slow readers in a fixed
	// run, the last full-speed stream's.
	ends := d.tallies
	if d.fixed != 0 {
		var fast []*tally
		for _, t := range d.tallies {
			if t.pacer == nil {
				fast = append(fast, t)
			}
		}
		if len(fast) > 0 {
			ends = fast
		}
	}
	last := start
	for _, t := range ends {
		last = max(last, t.lastNS)
	}
	for _, t := range d.tallies {
		res.Messages += t.messages
		res.Bytes += t.bytes
		res.StreamBytes = append(res.StreamBytes, t.bytes)
		res.StreamFinishS = append(res.StreamFinishS, float64(t.lastNS-start)/1e9)
	}
	res.ElapsedS = float64(last-start) / 1e9
	res.TStartNs, res.TEndNs = start, last
	res.CpuS = cpu
	res.SlowStreams = w.GetSlowStreams()
	res.Notes = append(r.windowNotes(), slowNotes(w, msgBytes)...)
	if !r.job.setup.Static {
		res.WindowTrace = r.windowTrace(start)
	}
	res.PingRttMs = r.pingRTTs()
	return res, nil
}

func (d *download) stream(ch *channel, t *tally) {
	defer d.streamsWG.Done()
	defer func() {
		if t.lastNS == 0 {
			t.lastNS = d.r.clock.Now()
		}
		if t.pacer == nil && d.fastLeft.Add(-1) == 0 {
			d.stopOnce.Do(func() { close(d.stop) })
		}
	}()
	ctx, cancel := d.r.trial.context()
	defer cancel() // cancels the call (RST_STREAM) when the stream stops early
	req := &pb.DownloadRequest{MessageCount: d.fixed, MessageBytes: uint32(d.msgBytes)}
	st, err := ch.client.Download(ctx, req)
	if err != nil {
		t.err = err
		return
	}
	var m kit.Counted
	for {
		err := st.RecvMsg(&m)
		if err == io.EOF {
			return
		}
		if err != nil {
			t.err = err
			return
		}
		now := d.r.clock.Now()
		t.messages++
		t.bytes += uint64(m.Payload)
		t.lastNS = now // a stream's finish: its last message, or when a slow reader was stopped
		if d.fixed == 0 && now >= d.endNS {
			return
		}
		if d.fixed != 0 && t.messages >= d.fixed {
			continue // the trailers come next: io.EOF
		}
		if t.pacer != nil && d.pacedStop(t) {
			t.lastNS = d.r.clock.Now()
			return
		}
	}
}

// pacedStop: a slow reader waits for its next read (grpc-go holds what arrives meanwhile,
// within the stream's window); true when the full-speed streams are done and it should stop.
func (d *download) pacedStop(t *tally) bool {
	wait := t.pacer.DueNS - d.r.clock.Now()
	if wait > 0 {
		timer := time.NewTimer(time.Duration(wait))
		select {
		case <-d.stop:
			timer.Stop()
			return true
		case <-timer.C:
		}
	}
	t.pacer.Take(max(d.r.clock.Now(), t.pacer.DueNS), d.msgBytes)
	select {
	case <-d.stop:
		return true
	default:
		return false
	}
}

func slowNotes(w *wpb.Download, msgBytes int) []string {
	rate := w.GetPacing().GetRateBytesS() * 8
	if w.GetSlowStreams() == 0 || rate <= 0 {
		return nil
	}
	return []string{fmt.Sprintf("streams 1..%d read one message per %.0f ms (%g Mbit/s); grpc-go holds what "+
		"they have not read, up to the stream window (not counted here)", w.GetSlowStreams(),
		float64(msgBytes)*8/rate*1000, rate/1e6)}
}

// windowTrace is every connection's stream-window steps (its SETTINGS INITIAL_WINDOW_SIZE
// frames, read off its socket), in ms since the timed start.
func (r *runner) windowTrace(start int64) []*wpb.WindowStep {
	var steps []kit.WindowStep
	for _, ch := range r.channels {
		steps = append(steps, ch.tap.Steps()...)
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].AtNS < steps[j].AtNS })
	out := make([]*wpb.WindowStep, 0, len(steps))
	for _, s := range steps {
		out = append(out, &wpb.WindowStep{AtMs: float64(s.AtNS-start) / 1e6, WindowBytes: uint64(s.Window)})
	}
	return out
}

func (r *runner) pingRTTs() []float64 {
	var out []float64
	for _, ch := range r.channels {
		out = append(out, ch.tap.PingRTTs()...)
	}
	return out
}

// windowNotes say what the client applied, in grpc-go's terms.
func (r *runner) windowNotes() []string {
	s := r.job.setup
	calls := strings.Join(s.Calls, ", ")
	var notes []string
	switch {
	case s.Static:
		notes = append(notes, fmt.Sprintf("grpc-go %s: %s; BDP estimator off; credit goes back a quarter "+
			"window at a time (stream: as read, connection: as received)", grpc.Version, calls))
	case s.WindowOption:
		notes = append(notes, fmt.Sprintf("grpc-go %s: %s; BDP estimator off (in grpc-go %s a "+
			"WithInitialWindowSize or WithInitialConnWindowSize option turns it off; a later grpc-go may "+
			"leave it on: the window trace shows what ran)", grpc.Version, calls, grpc.Version))
	default:
		text := fmt.Sprintf("grpc-go %s defaults: BDP estimator on (stream and connection windows start at "+
			"65535 B and grow, up to 16 MiB)", grpc.Version)
		if calls != "" {
			text += "; " + calls
		}
		notes = append(notes, text)
	}
	if s.Static || s.WindowOption {
		stream, conn := windowOr65535(s.StreamWindow), windowOr65535(s.ConnWindow)
		if msg := int64(r.job.GetMessageBytes()); msg > stream/2 && conn > stream {
			notes = append(notes, fmt.Sprintf("grpc-go grants a stream extra credit for a message being read "+
				"that its window cannot cover (transport inFlow.maybeAdjust): with %s messages and a %s "+
				"connection window, a static %s stream window can exceed window/RTT",
				kit.FormatBytes(float64(msg)), kit.FormatBytes(float64(conn)), kit.FormatBytes(float64(stream))))
		}
	}
	return append(notes, r.keepaliveNotes()...)
}

func windowOr65535(w int64) int64 {
	if w == 0 {
		return 65535
	}
	return w
}

func (r *runner) keepaliveNotes() []string {
	s := r.job.setup
	switch {
	case !s.KeepaliveRaised:
		return nil
	case s.KeepaliveAsked == 0:
		return []string{fmt.Sprintf("grpc-go %s sets a keepalive Time not given to its minimum of %s "+
			"(grpc.WithKeepaliveParams): keepalive is on", grpc.Version, kit.KeepaliveMinTime)}
	}
	return []string{fmt.Sprintf("grpc-go %s raises a keepalive Time of %d ms to its minimum of %s "+
		"(grpc.WithKeepaliveParams)", grpc.Version, s.KeepaliveAsked.Milliseconds(), kit.KeepaliveMinTime)}
}

// ---- unary --------------------------------------------------------------------------------

func (r *runner) unary(w *wpb.Unary) (*wpb.ClientResult, error) {
	ch := r.channels[0]
	req := &pb.PingRequest{Payload: []byte(strings.Repeat("x", 16))}
	latencies := make([]float64, 0, w.GetCalls())
	cpu0 := kit.CPUSeconds()
	start := r.clock.Now()
	r.startTaps(start)
	for range w.GetCalls() {
		ctx, cancel := r.trial.context()
		t0 := r.clock.Now()
		_, err := ch.client.Ping(ctx, req)
		t1 := r.clock.Now()
		cancel()
		if err != nil {
			return nil, callFailure(err, r.trial, "unary ping")
		}
		latencies = append(latencies, float64(t1-t0)/1e6)
	}
	end := r.clock.Now()
	r.stopTaps()
	res := newResult()
	res.Messages = uint64(len(latencies))
	res.ElapsedS = float64(end-start) / 1e9
	res.TStartNs, res.TEndNs = start, end
	res.CpuS = kit.CPUSeconds() - cpu0
	res.LatenciesMs = latencies
	res.Notes = append(r.windowNotes()[:1], r.keepaliveNotes()...)
	return res, nil
}

// ---- upload -------------------------------------------------------------------------------

// upload is one client-streaming call: send until timed_s (or `messages` messages), then
// half-close; the server's summary says what it received, and its arrival ends the phase.
func (r *runner) upload(w *wpb.Upload) (*wpb.ClientResult, error) {
	msgBytes := int(r.job.GetMessageBytes())
	raw := &kit.Raw{Bytes: kit.EncodeChunk(msgBytes)}
	limitN := w.GetMessages()
	cpu0 := kit.CPUSeconds()
	start := r.clock.Now()
	began := time.Now()
	r.startTaps(start)
	deadline := start + int64(w.GetTimedS()*1e9)
	call := limit{what: "the upload's call_timeout_s", s: w.GetCallTimeoutS(), at: began.Add(seconds(w.GetCallTimeoutS()))}
	if r.trial.at.Before(call.at) {
		call = r.trial
	}
	ctx, cancel := call.context()
	defer cancel()
	st, err := r.channels[0].client.Upload(ctx)
	if err != nil {
		return nil, callFailure(err, call, "upload")
	}
	var sent uint64
	for (limitN == 0 && r.clock.Now() < deadline) || (limitN != 0 && sent < limitN) {
		if err := st.SendMsg(raw); err != nil {
			break // the call ended: CloseAndRecv says how
		}
		sent++
	}
	summary, err := st.CloseAndRecv()
	end := r.clock.Now()
	r.stopTaps()
	if err != nil {
		return nil, callFailure(err, call, "upload")
	}
	res := newResult()
	res.Bytes = summary.GetPayloadBytes()
	res.Messages = summary.GetMessages()
	res.ElapsedS = float64(end-start) / 1e9
	res.TStartNs, res.TEndNs = start, end
	res.StreamBytes = []uint64{res.Bytes}
	res.StreamFinishS = []float64{res.ElapsedS}
	res.CpuS = kit.CPUSeconds() - cpu0
	res.SentBytes = sent * uint64(msgBytes)
	if calls := r.job.setup.Calls; len(calls) > 0 { // the server receives: its window is the kit's to note
		res.Notes = append([]string{fmt.Sprintf("grpc-go %s: %s", grpc.Version, strings.Join(calls, ", "))},
			r.keepaliveNotes()...)
	}
	return res, nil
}
