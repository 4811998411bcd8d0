// The grpc-go client of the kit: `client --config '<ClientProcess as JSON>'`, one process per
// measured cell, or `client --worker`, one trial per line of stdin, speaking
// docs/process-protocol.md. Semantics follow the kit's reference
// client (kit/clients/grpcio_client.py): warm-up, timed or fixed downloads over N streams
// and M connections, slow readers, sequential unary pings, one client-streaming upload.
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
)

const (
	who             = "grpc-go client"
	maxMessageBytes = 128 * kit.MiB
	connectTimeoutS = 10.0
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

	if len(os.Args) == 2 && os.Args[1] == "--worker" {
		worker()
	}
	data, err := kit.ParseConfig(os.Args[1:], "ClientProcess")
	if err != nil {
		lines.Fail(kit.ExitBadConfig, "%s: %v", who, err)
	}
	proc, settings := decode(data)
	kit.InstallCodec()
	lines.Ready(0, "grpc-go", grpc.Version)
	lines.Result(measure(proc, settings))
}

// worker is `client --worker`, a client worker (docs/process-protocol.md): one trial per line
// of stdin, each on ClientConns (TCP connections) of its own, one result line each; the first
// error (a bad line too) is the final line and ends it; stdin's end: exit 0.
func worker() {
	kit.InstallCodec()
	lines.ReadyWorker("grpc-go", grpc.Version)
	in := bufio.NewReader(os.Stdin)
	for trial := 1; ; {
		text, err := in.ReadString('\n')
		if strings.TrimSpace(text) != "" {
			data, perr := kit.ParseConfigText(text, "worker line")
			if perr != nil {
				lines.Fail(kit.ExitBadConfig, "%s: %v", who, perr)
			}
			proc, settings := decode(data)
			lines.TrialResult(measure(proc, settings), trial)
			trial++
		}
		if err != nil { // io.EOF: the normal end
			os.Exit(kit.ExitOK)
		}
	}
}

// decode is the trial of one config, or its error line (exit 2).
func decode(data any) (kit.ClientProcess, *kit.Settings) {
	proc, err := kit.DecodeClientProcess(data)
	if err != nil {
		lines.Fail(kit.ExitBadConfig, "%s: %v", who, err)
	}
	settings, err := kit.ClientSettings(proc.Trial)
	if err != nil {
		lines.Fail(kit.ExitBadConfig, "%v", err)
	}
	return proc, settings
}

// measure runs one trial: its result, or its error line and exit code.
func measure(proc kit.ClientProcess, settings *kit.Settings) kit.ClientResult {
	result, err := run(proc, settings)
	if err != nil {
		var f *failure
		if errors.As(err, &f) {
			lines.Fail(f.code, "%s", f.msg)
		}
		lines.Fail(kit.ExitFailed, "%s: %v", who, err)
	}
	return result
}

// ---- connections --------------------------------------------------------------------------

type channel struct {
	cc      *grpc.ClientConn
	client  pb.ThroughputClient
	tap     *kit.Tap
	mu      sync.Mutex
	lastErr error
}

func (ch *channel) dialError() error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.lastErr
}

// dial makes one grpc.ClientConn: one TCP connection of its own (grpc-go never shares a
// transport between ClientConns), dialled by us so its frames can be tapped.
func dial(target string, settings *kit.Settings, clock *kit.Clock) (*channel, error) {
	ch := &channel{tap: kit.NewTap(clock)}
	dialer := func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		ch.mu.Lock()
		ch.lastErr = err
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
	opts = append(opts, settings.DialOptions()...)
	cc, err := grpc.NewClient("passthrough:///"+target, opts...)
	if err != nil {
		return nil, fail(kit.ExitMeasurement, "%s: cannot make a channel to %s: %v", who, target, err)
	}
	ch.cc, ch.client = cc, pb.NewThroughputClient(cc)
	return ch, nil
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
			why := ""
			if err := ch.dialError(); err != nil {
				why = fmt.Sprintf(" (%v)", err)
			}
			return fail(kit.ExitMeasurement, "%s: cannot reach %s within %g s%s; is the server running?", who, target, waitS, why)
		}
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// ---- the run ------------------------------------------------------------------------------

func run(proc kit.ClientProcess, settings *kit.Settings) (kit.ClientResult, error) {
	clock := kit.NewClock()
	trial := proc.Trial
	w := trial.Workload
	target := kit.HostPort(proc.TargetHost, proc.TargetPort)
	// One deadline for connecting, warming and the workload.
	deadline := time.Now().Add(seconds(w.TimeoutS))
	left := func() float64 { return max(0.05, time.Until(deadline).Seconds()) }

	count := min(trial.Client.Connections, w.Streams)
	channels := make([]*channel, count)
	defer func() {
		for _, ch := range channels {
			if ch != nil {
				ch.cc.Close()
			}
		}
	}()
	for i := range channels {
		ch, err := dial(target, settings, clock)
		if err != nil {
			return kit.ClientResult{}, err
		}
		channels[i] = ch
	}
	waitS := min(connectTimeoutS, w.TimeoutS) // the overall deadline starts now
	errs := make([]error, count)
	var wg sync.WaitGroup
	for i, ch := range channels {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = ch.waitReady(target, waitS) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return kit.ClientResult{}, firstErr(errs)
	}
	if w.Warmup { // the reference study's warm-up: one Ping per connection, nothing else
		for _, ch := range channels {
			ctx, cancel := context.WithTimeout(context.Background(), seconds(left()))
			_, err := ch.client.Ping(ctx, &pb.PingRequest{Payload: []byte("warm")})
			cancel()
			if err != nil {
				return kit.ClientResult{}, fail(kit.ExitMeasurement, "%s: warm-up ping: %s", who, kit.StatusText(err))
			}
		}
	}
	trial.Workload.TimeoutS = max(1.0, left()) // the workload gets what is left
	r := &runner{trial: trial, settings: settings, clock: clock, channels: channels}
	switch w.Kind {
	case "unary":
		return r.unary()
	case "upload":
		return r.upload()
	}
	return r.download()
}

func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

type runner struct {
	trial    kit.Trial
	settings *kit.Settings
	clock    *kit.Clock
	channels []*channel
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

// ---- download -----------------------------------------------------------------------------

type tally struct {
	messages int64
	bytes    int64
	lastNS   int64
	err      error
	pacer    *kit.ReadPacer
}

type download struct {
	r         *runner
	startNS   int64
	endNS     int64 // the timed phase's end (timed runs)
	fixed     int64 // messages per stream (fixed runs), else 0
	msgBytes  int
	timeout   time.Duration
	stop      chan struct{} // closed when every full-speed stream is done (slow readers stop)
	fastLeft  atomic.Int64
	stopOnce  sync.Once
	tallies   []*tally
	streamsWG sync.WaitGroup
}

func (r *runner) download() (kit.ClientResult, error) {
	w := r.trial.Workload
	fixed := w.MessagesPerStream()
	durationS := w.TimeoutS
	if fixed == 0 {
		durationS = w.TimedDurationS(r.trial.Link.RTTms())
	}
	cpu0 := kit.CPUSeconds()
	start := r.clock.Now()
	r.startTaps(start)
	d := &download{r: r, startNS: start, endNS: start + int64(durationS*1e9), fixed: fixed,
		msgBytes: w.MessageBytes, timeout: seconds(w.TimeoutS), stop: make(chan struct{})}
	for i := 0; i < w.Streams; i++ {
		t := &tally{}
		if w.ReadRateBitsS != nil && i < w.SlowStreams {
			t.pacer = kit.NewReadPacer(*w.ReadRateBitsS/8, start, uint32(i+1), w.MessageBytes)
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
	case <-time.After(d.timeout + 5*time.Second):
		return kit.ClientResult{}, fail(kit.ExitMeasurement, "%s: download failed: timed out", who)
	}
	cpu := kit.CPUSeconds() - cpu0
	r.stopTaps()
	for _, t := range d.tallies {
		if t.err != nil {
			return kit.ClientResult{}, fail(kit.ExitMeasurement, "%s: download failed: %s", who, kit.StatusText(t.err))
		}
	}
	res := kit.NewClientResult()
	// The last stream's last message ends the timed phase; with slow readers in a fixed
	// run, the last full-speed stream's.
	ends := d.tallies
	if fixed != 0 {
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
	res.TStartNS, res.TEndNS = start, last
	res.CPUS = cpu
	res.SlowStreams = w.SlowStreams
	res.Notes = append(r.windowNotes(), slowNotes(w)...)
	if !r.settings.Static() {
		res.WindowTrace = r.windowTrace(start)
	}
	res.PingRTTms = r.pingRTTs()
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
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel() // cancels the call (RST_STREAM) when the stream stops early
	req := &pb.DownloadRequest{MessageCount: uint64(d.fixed), MessageBytes: uint32(d.msgBytes)}
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
		t.bytes += int64(m.Payload)
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

func slowNotes(w kit.Workload) []string {
	if w.SlowStreams == 0 || w.ReadRateBitsS == nil {
		return nil
	}
	rate := *w.ReadRateBitsS
	return []string{fmt.Sprintf("streams 1..%d read one message per %.0f ms (%g Mbit/s); grpc-go holds what "+
		"they have not read, up to the stream window (not counted here)", w.SlowStreams,
		float64(w.MessageBytes)*8/rate*1000, rate/1e6)}
}

// windowTrace is every connection's stream-window steps, (ms since the timed start, bytes).
func (r *runner) windowTrace(start int64) [][2]float64 {
	var steps []kit.WindowStep
	for _, ch := range r.channels {
		steps = append(steps, ch.tap.Steps()...)
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].AtNS < steps[j].AtNS })
	out := [][2]float64{}
	for _, s := range steps {
		out = append(out, [2]float64{float64(s.AtNS-start) / 1e6, float64(s.Window)})
	}
	return out
}

func (r *runner) pingRTTs() []float64 {
	out := []float64{}
	for _, ch := range r.channels {
		out = append(out, ch.tap.PingRTTs()...)
	}
	return out
}

// windowNotes say what was applied, in grpc-go's terms.
func (r *runner) windowNotes() []string {
	calls := r.settings.Calls()
	c := r.trial.Client
	if c.WindowMode == "static" {
		notes := []string{fmt.Sprintf("grpc-go %s: %s; BDP estimator off; credit goes back a quarter "+
			"window at a time (stream: as read, connection: as received)", grpc.Version, strings.Join(calls, ", "))}
		w := c.WindowBytes.V
		conn, _ := r.settings.Get("InitialConnWindowSize")
		if msg := int64(r.trial.Workload.MessageBytes); msg > w/2 && conn.Int > w {
			notes = append(notes, fmt.Sprintf("grpc-go grants a stream extra credit for a message being read "+
				"that its window cannot cover (transport inFlow.maybeAdjust): with %s messages and a %s "+
				"connection window, a static %s stream window can exceed window/RTT",
				kit.FormatBytes(float64(msg)), kit.FormatBytes(float64(conn.Int)), kit.FormatBytes(float64(w))))
		}
		return notes
	}
	if r.settings.Static() {
		return []string{fmt.Sprintf("grpc-go %s: %s; BDP estimator off (a window option turns it off)",
			grpc.Version, strings.Join(calls, ", "))}
	}
	text := fmt.Sprintf("grpc-go %s defaults: BDP estimator on (stream and connection windows start at "+
		"65535 B and grow, up to 16 MiB)", grpc.Version)
	if len(calls) > 0 {
		text += "; " + strings.Join(calls, ", ")
	}
	return []string{text}
}

// ---- unary --------------------------------------------------------------------------------

func (r *runner) unary() (kit.ClientResult, error) {
	w := r.trial.Workload
	ch := r.channels[0]
	req := &pb.PingRequest{Payload: []byte(strings.Repeat("x", 16))}
	latencies := make([]float64, 0, w.Calls)
	cpu0 := kit.CPUSeconds()
	start := r.clock.Now()
	r.startTaps(start)
	for i := 0; i < w.Calls; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), seconds(w.TimeoutS))
		t0 := r.clock.Now()
		_, err := ch.client.Ping(ctx, req)
		t1 := r.clock.Now()
		cancel()
		if err != nil {
			return kit.ClientResult{}, fail(kit.ExitMeasurement, "%s: %s", who, kit.StatusText(err))
		}
		latencies = append(latencies, float64(t1-t0)/1e6)
	}
	end := r.clock.Now()
	r.stopTaps()
	res := kit.NewClientResult()
	res.Messages = int64(len(latencies))
	res.ElapsedS = float64(end-start) / 1e9
	res.TStartNS, res.TEndNS = start, end
	res.CPUS = kit.CPUSeconds() - cpu0
	res.LatenciesMS = latencies
	res.Notes = r.windowNotes()[:1]
	return res, nil
}

// ---- upload -------------------------------------------------------------------------------

// upload is one client-streaming call: send until the deadline (or bytes_per_stream), then
// half-close; the server's summary says what it received, and its arrival ends the phase.
func (r *runner) upload() (kit.ClientResult, error) {
	w := r.trial.Workload
	ch := r.channels[0]
	raw := &kit.Raw{Bytes: kit.EncodeChunk(w.MessageBytes)}
	limit := w.MessagesPerStream()
	callTimeoutS := r.trial.UploadCallTimeoutS()
	cpu0 := kit.CPUSeconds()
	start := r.clock.Now()
	r.startTaps(start)
	deadline := start + int64(w.TimedDurationS(r.trial.Link.RTTms())*1e9)
	ctx, cancel := context.WithTimeout(context.Background(), seconds(callTimeoutS))
	defer cancel()
	st, err := ch.client.Upload(ctx)
	if err != nil {
		return kit.ClientResult{}, r.uploadError(err, callTimeoutS)
	}
	var sent int64
	for (limit == 0 && r.clock.Now() < deadline) || (limit != 0 && sent < limit) {
		if err := st.SendMsg(raw); err != nil {
			break // the call ended: CloseAndRecv says how
		}
		sent++
	}
	summary, err := st.CloseAndRecv()
	end := r.clock.Now()
	r.stopTaps()
	if err != nil {
		return kit.ClientResult{}, r.uploadError(err, callTimeoutS)
	}
	res := kit.NewClientResult()
	res.Bytes = int64(summary.PayloadBytes)
	res.Messages = int64(summary.Messages)
	res.ElapsedS = float64(end-start) / 1e9
	res.TStartNS, res.TEndNS = start, end
	res.StreamBytes = []int64{res.Bytes}
	res.StreamFinishS = []float64{res.ElapsedS}
	res.CPUS = kit.CPUSeconds() - cpu0
	res.SentBytes = sent * int64(w.MessageBytes)
	res.Notes = uploadNotes(r.trial)
	return res, nil
}

func (r *runner) uploadError(err error, timeoutS float64) error {
	if status.Code(err) == codes.DeadlineExceeded {
		return fail(kit.ExitMeasurement, "%s: the server stopped taking the upload (no summary within %g s)", who, timeoutS)
	}
	return fail(kit.ExitMeasurement, "%s: upload failed: %s", who, kit.StatusText(err))
}

const ccoreServerNote = "grpcio server (C-core) receives uploads: it grants each stream extra credit of " +
	"min(bytes missing of the message being read, 1 MiB), so a static server window can exceed window/RTT"

// uploadNotes: the server receives, so its window is what the notes describe.
func uploadNotes(t kit.Trial) []string {
	notes := []string{}
	switch t.Server.Kind {
	case "grpc-go":
		// The server's connection window is its stream window (an upload is one stream), so
		// its extra credit for a message being read (inFlow.maybeAdjust) cannot show here.
		notes = append(notes, kit.ServerWindowNote(t.Server))
	case "grpcio":
		if t.Server.WindowMode != "dynamic" {
			notes = append(notes, ccoreServerNote)
		}
	}
	return notes
}
