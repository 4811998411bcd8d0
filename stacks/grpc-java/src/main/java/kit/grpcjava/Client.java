package kit.grpcjava;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.internal.GrpcUtil;
import io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import kit.worker.Worker;

/**
 * The grpc-java client: one ClientJob on grpc-java's Netty transport. One ManagedChannel per
 * connection (grpc-java channels never share a transport); warm-up is one Ping per connection;
 * then the idle gap; then a download (N streams over M connections, round-robin; timed or
 * fixed; slow readers), unary Pings or one client-streaming upload.
 */
final class Client {
  static final String WHO = Main.STACK + " client";
  static final String USAGE =
      WHO + ": usage: java -jar kit-grpc-java.jar client --config '<ClientJob as JSON>'"
          + " | client --worker";
  /** How long connecting may take at most (or the trial's timeout_s, if shorter). */
  static final double CONNECT_LIMIT_S = 10.0;
  /** A Chunk's bytes beyond its payload: a tag and a length. */
  static final int FRAMING_BYTES = 16;

  static final MethodDescriptor<byte[], Integer> DOWNLOAD =
      Wire.method("Download", MethodType.SERVER_STREAMING, Wire.BYTES, Wire.DRAIN);
  static final MethodDescriptor<byte[], byte[]> PING =
      Wire.method("Ping", MethodType.UNARY, Wire.BYTES, Wire.BYTES);
  static final MethodDescriptor<byte[], byte[]> UPLOAD =
      Wire.method("Upload", MethodType.CLIENT_STREAMING, Wire.BYTES, Wire.BYTES);

  private final Worker.ClientJob job;
  private final long deadlineNs;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private NettyFlow nettyFlow;
  private EventLoops loops;

  private Client(Worker.ClientJob job, long startedNs) {
    this.job = job;
    this.deadlineNs = startedNs + (long) (job.getTimeoutS() * 1e9);
  }

  static void main(String[] args) {
    Main.onStopSignals(
        signal -> Protocol.die(WHO + ": interrupted by SIG" + signal.name(), 128 + signal.number()));
    if (args.length == 1 && args[0].equals("--worker")) {
      worker();
      return;
    }
    long started = System.nanoTime();
    Worker.ClientJob job;
    Options.Checked options;
    try {
      String text = Jobs.configArg(args, USAGE);
      Main.trace("argument read");
      job = Jobs.clientJob(text);
      Main.trace("job decoded");
      options = check(job);
      Main.trace("options checked");
    } catch (Protocol.Failure f) {
      Protocol.die(f.getMessage().equals(USAGE) ? USAGE : WHO + ": " + f.getMessage(), f.exitCode);
      return;
    }
    Protocol.ready(ProcessHandle.current().pid(), 0, false);
    Main.trace("ready");
    try {
      Worker.ClientResult result = measure(job, options, started);
      Main.trace("channels closed");
      Protocol.clientResult(result);
      Protocol.halt(Protocol.finalCode());
    } catch (Throwable t) {
      fail(t);
    }
  }

  private static void fail(Throwable t) {
    if (t instanceof Protocol.Failure f) {
      Protocol.die(WHO + ": " + f.getMessage(), f.exitCode);
    } else if (t instanceof StatusRuntimeException e) {
      Protocol.die(WHO + ": " + statusText(e.getStatus()), Protocol.MEASUREMENT);
    } else {
      Main.traceError(t);
      Protocol.die(WHO + ": " + t, Protocol.FAILED);
    }
  }

  /**
   * {@code client --worker}: a client worker (docs/process-protocol.md). One ClientJob per line
   * of stdin, each on channels, connections and event loops of its own, one result line each;
   * the first error (a bad line too) is the final line and ends it; stdin's end: exit 0.
   */
  private static void worker() {
    Protocol.ready(ProcessHandle.current().pid(), 0, true);
    InputStream in = new BufferedInputStream(System.in);
    int trials = 0;
    try {
      for (byte[] raw = readLine(in); raw != null; raw = readLine(in)) {
        String line = Jobs.utf8(raw, "worker line");
        if (line.isBlank()) {
          continue;
        }
        long started = System.nanoTime();
        Worker.ClientJob job = Jobs.clientJob(line);
        Worker.ClientResult result = measure(job, check(job), started);
        trials++;
        if (!Protocol.trialResult(result, trials)) {
          return; // a signal's error line came first: it halts the process
        }
      }
      Protocol.halt(Protocol.OK);
    } catch (Throwable t) {
      fail(t);
    }
  }

  /** One line of stdin, its bytes without the newline; null at the end. */
  static byte[] readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream(1024);
    for (int b = in.read(); ; b = in.read()) {
      if (b < 0) {
        return line.size() == 0 ? null : line.toByteArray();
      }
      if (b == '\n') {
        return line.toByteArray();
      }
      line.write(b);
    }
  }

  /** The job's options, checked (exit 2 for one grpc-java does not have or take). */
  static Options.Checked check(Worker.ClientJob job) {
    return Options.check(
        Options.CLIENT, job.getOptionsList(), NettyChannelBuilder.forTarget("options.check"));
  }

  /** Connect, warm, idle, run the work, close the channels: the result. */
  static Worker.ClientResult measure(Worker.ClientJob job, Options.Checked options, long startedNs)
      throws Exception {
    Client client = new Client(job, startedNs);
    try {
      return client.run(options);
    } finally {
      Main.trace("work done");
      client.close();
    }
  }

  // --- channels ----------------------------------------------------------------------------

  private Worker.ClientResult run(Options.Checked options) throws Exception {
    Integer connTarget = connWindowTarget();
    Float ratio = options.windowUpdateRatio();
    if (connTarget != null || ratio != null) {
      nettyFlow = new NettyFlow(connTarget, ratio);
    }
    connect(options, connTarget);
    Main.trace("connected");
    if (job.getWarmup()) {
      byte[] warm = Wire.bytesField1("warm".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 4);
      for (ManagedChannel channel : channels) {
        long left = leftNs();
        try {
          ClientCalls.blockingUnaryCall(channel, PING, callOptions(left), warm);
        } catch (StatusRuntimeException e) {
          throw callFailed("the warm-up Ping", e.getStatus(), left, "timeout_s");
        }
      }
    }
    Main.trace("warmed");
    if (nettyFlow != null && nettyFlow.applied.get() < channels.size()) {
      throw Protocol.fail(
          Protocol.FAILED,
          "Netty's flow controller was tuned on " + nettyFlow.applied.get() + " of "
              + channels.size() + " connections only");
    }
    if (job.getIdleS() > 0) { // every connection open, no call on any
      long idleNs = Math.min((long) (job.getIdleS() * 1e9), deadlineNs - System.nanoTime());
      if (idleNs > 0) {
        TimeUnit.NANOSECONDS.sleep(idleNs);
      }
    }
    return switch (job.getWorkCase()) {
      case UNARY -> unary();
      case UPLOAD -> new Uploader().run();
      default -> new Download().run();
    };
  }

  /** The connection window to set beside grpc-java's own (which is the stream window), or null. */
  private Integer connWindowTarget() {
    Worker.Windows w = job.getWindows();
    if (!w.getStatic() || w.getConnBytes() == 0 || w.getConnBytes() == w.getStreamBytes()) {
      return null;
    }
    return w.getConnBytes();
  }

  /** The channels, each connected (READY), within the connect limit; exit 4 if not. */
  private void connect(Options.Checked options, Integer connTarget) throws InterruptedException {
    double limitS = Math.min(CONNECT_LIMIT_S, job.getTimeoutS());
    try {
      Main.nettyVersion(); // read before the sockets: it opens files (the JDK's tzdb.dat)
      InetSocketAddress target = new InetSocketAddress(job.getTargetHost(), job.getTargetPort());
      if (target.isUnresolved()) {
        throw cannotReach(limitS, "cannot resolve " + job.getTargetHost());
      }
      loops = EventLoops.client(options.nio());
      List<String> applied = List.of();
      for (int i = 0; i < job.getConnections(); i++) {
        applied = openChannel(target, options);
      }
      Main.trace("channels built");
      notes.addAll(Notes.client(job, applied, connTarget, options.windowUpdateRatio(),
          options.nio()));
      waitReady(limitS);
    } catch (Protocol.Failure | InterruptedException e) {
      throw e;
    } catch (RuntimeException e) { // an event loop or a socket the system would not give
      throw cannotReach(limitS, reason(null, e));
    } catch (Error e) { // a file the JDK could not open: out of file descriptors, say
      String why = reason(null, e);
      if (why.startsWith("too many open files")) {
        throw cannotReach(limitS, why);
      }
      throw e;
    }
  }

  private Protocol.Failure cannotReach(double limitS, String why) {
    return Protocol.fail(
        Protocol.MEASUREMENT,
        "cannot reach " + Server.hostPort(job.getTargetHost(), job.getTargetPort()) + " within "
            + Notes.num(limitS) + " s (" + why + "); is the server running?");
  }

  private List<String> openChannel(InetSocketAddress target, Options.Checked options) {
    Worker.Windows w = job.getWindows();
    NettyChannelBuilder builder =
        NettyChannelBuilder.forAddress(target)
            .eventLoopGroup(loops.worker)
            .channelType(loops.channelType(), InetSocketAddress.class);
    long inbound = (long) job.getMessageBytes() + FRAMING_BYTES;
    if (inbound > GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE) {
      builder.maxInboundMessageSize((int) Math.min(Integer.MAX_VALUE, inbound));
    }
    if (w.getStatic()) {
      try {
        builder.flowControlWindow(w.getStreamBytes());
      } catch (IllegalArgumentException e) {
        throw Jobs.bad("windows: grpc-java refuses them: " + e.getMessage());
      }
    }
    if (nettyFlow != null) {
      InternalNettyChannelBuilder.setProtocolNegotiatorFactory(builder, nettyFlow.clientFactory());
    } else {
      builder.usePlaintext();
    }
    List<String> applied = Options.apply(Options.CLIENT, options, builder);
    ManagedChannel channel = builder.build();
    channel.getState(true); // start connecting now
    channels.add(channel);
    return applied;
  }

  private void waitReady(double limitS) throws InterruptedException {
    long until = System.nanoTime() + (long) (limitS * 1e9);
    for (ManagedChannel channel : channels) {
      while (true) {
        ConnectivityState state = channel.getState(true);
        if (state == ConnectivityState.READY) {
          break;
        }
        long left = until - System.nanoTime();
        if (left <= 0) {
          throw cannotReach(limitS, whyNotReady(channel, state));
        }
        CountDownLatch changed = new CountDownLatch(1);
        channel.notifyWhenStateChanged(state, changed::countDown);
        changed.await(left, TimeUnit.NANOSECONDS);
      }
    }
  }

  /** Why a channel is not ready: the status a fail-fast call gets from it (grpc-java's last
   * connection error when it is in TRANSIENT_FAILURE). */
  private static String whyNotReady(ManagedChannel channel, ConnectivityState state) {
    try {
      ClientCalls.blockingUnaryCall(
          channel, PING, CallOptions.DEFAULT.withDeadlineAfter(300, TimeUnit.MILLISECONDS),
          new byte[0]);
      return "channel " + state;
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED) {
        return "still connecting: channel " + state;
      }
      return reason(e.getStatus(), null);
    }
  }

  /** A failure in a line: the status and its deepest cause; EMFILE said in so many words. */
  static String reason(Status status, Throwable error) {
    StringBuilder text = new StringBuilder();
    Throwable cause = error;
    if (status != null) {
      text.append(status.getCode().name());
      if (status.getDescription() != null) {
        text.append(": ").append(status.getDescription());
      }
      cause = status.getCause();
    }
    boolean emfile = text.indexOf("Too many open files") >= 0;
    Throwable root = cause;
    for (Throwable t = cause; t != null; t = t.getCause()) {
      root = t;
      emfile |= String.valueOf(t.getMessage()).contains("Too many open files");
    }
    if (root != null) {
      String message = root.getMessage() != null ? root.getMessage() : root.getClass().getName();
      text.append(text.length() > 0 ? ": " : "").append(message);
    }
    return (emfile ? "too many open files (EMFILE): " : "") + text;
  }

  private void close() {
    for (ManagedChannel channel : channels) {
      channel.shutdownNow();
    }
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
    for (ManagedChannel channel : channels) {
      try {
        channel.awaitTermination(Math.max(1, until - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    if (loops != null) { // a worker's next trial makes its own: these threads would pile up
      loops.shutdown(200);
    }
  }

  /** What is left of the trial's timeout_s (at least 1 ms: a deadline must be positive). */
  private long leftNs() {
    return Math.max(TimeUnit.MILLISECONDS.toNanos(1), deadlineNs - System.nanoTime());
  }

  private static CallOptions callOptions(long timeoutNs) {
    return CallOptions.DEFAULT.withDeadlineAfter(timeoutNs, TimeUnit.NANOSECONDS);
  }

  static String statusText(Status status) {
    return reason(status, null);
  }

  /** A call that failed: exit 4, naming the deadline that fired by its real length. */
  private Protocol.Failure callFailed(String what, Status status, long deadlineNs, String limit) {
    if (status.getCode() == Status.Code.DEADLINE_EXCEEDED) {
      String of = limit.equals("timeout_s")
          ? "what was left of the trial's timeout_s " + Notes.num(job.getTimeoutS()) + " s"
          : limit;
      return Protocol.fail(
          Protocol.MEASUREMENT,
          what + " failed: its deadline of " + seconds(deadlineNs) + " s (" + of
              + ") passed (" + statusText(status) + ")");
    }
    return Protocol.fail(Protocol.MEASUREMENT, what + " failed: " + statusText(status));
  }

  private static String seconds(long ns) {
    return String.format(java.util.Locale.ROOT, "%.3g", ns / 1e9);
  }

  private Worker.ClientResult.Builder result() {
    return Worker.ClientResult.newBuilder().setClient(Main.STACK);
  }

  // --- unary -------------------------------------------------------------------------------

  private Worker.ClientResult unary() {
    ManagedChannel channel = channels.get(0);
    byte[] request = Wire.bytesField1(
        "xxxxxxxxxxxxxxxx".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 16);
    int calls = job.getUnary().getCalls();
    double[] latencies = new double[calls];
    long cpu0 = Main.cpuNs();
    long start = System.nanoTime();
    for (int i = 0; i < calls; i++) {
      long t0 = System.nanoTime();
      long left = leftNs();
      try {
        ClientCalls.blockingUnaryCall(channel, PING, callOptions(left), request);
      } catch (StatusRuntimeException e) {
        throw callFailed("Ping " + (i + 1) + " of " + calls, e.getStatus(), left, "timeout_s");
      }
      latencies[i] = (System.nanoTime() - t0) / 1e6;
    }
    long end = System.nanoTime();
    Worker.ClientResult.Builder r = result()
        .setMessages(calls)
        .setElapsedS((end - start) / 1e9)
        .setTStartNs(start)
        .setTEndNs(end)
        .setCpuS((Main.cpuNs() - cpu0) / 1e9)
        .addAllNotes(notes);
    for (double l : latencies) {
      r.addLatenciesMs(l);
    }
    return r.build();
  }

  // --- upload ------------------------------------------------------------------------------

  /** One client-streaming Upload: send while the call is ready (grpc-java's onReady flow
   * control), until timed_s or the fixed count, then half-close; the summary ends it. */
  private final class Uploader extends ClientCall.Listener<byte[]> {
    private final Worker.Upload upload = job.getUpload();
    private final byte[] chunk = Wire.chunk(job.getMessageBytes());
    private final long limit = upload.getMessages(); // 0: timed
    private ClientCall<byte[], byte[]> call;
    private long sendUntilNs;
    private long sent;
    private boolean halfClosed;
    private byte[] summary;
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile Status status;
    private volatile long endNs;

    Worker.ClientResult run() throws InterruptedException {
      ScheduledExecutorService timer = Main.timer();
      long cpu0 = Main.cpuNs();
      long start = System.nanoTime();
      sendUntilNs = start + (long) (upload.getTimedS() * 1e9);
      // The call's deadline: call_timeout_s after the timed start, within the trial's timeout_s.
      long trialLeft = leftNs();
      long callNs = upload.getCallTimeoutS() > 0 ? (long) (upload.getCallTimeoutS() * 1e9) : -1;
      boolean ownDeadline = callNs > 0 && callNs <= trialLeft;
      long timeoutNs = ownDeadline ? callNs : trialLeft;
      synchronized (this) {
        call = channels.get(0).newCall(UPLOAD, callOptions(timeoutNs));
        call.start(this, new Metadata());
        call.request(1);
        pump();
      }
      if (limit == 0) { // a timed upload half-closes at its end, ready or not
        timer.schedule(
            () -> {
              synchronized (this) {
                pump();
              }
            },
            Math.max(0, sendUntilNs - System.nanoTime()),
            TimeUnit.NANOSECONDS);
      }
      if (!closed.await(timeoutNs + TimeUnit.SECONDS.toNanos(2), TimeUnit.NANOSECONDS)) {
        throw Protocol.fail(Protocol.MEASUREMENT, "the upload did not end (no status)");
      }
      long cpu = Main.cpuNs() - cpu0;
      Status s = status;
      if (s.getCode() == Status.Code.DEADLINE_EXCEEDED) {
        throw Protocol.fail(
            Protocol.MEASUREMENT,
            "the server stopped taking the upload (no summary within " + seconds(timeoutNs)
                + " s: " + (ownDeadline ? "the upload's call_timeout_s"
                    : "what was left of the trial's timeout_s " + Notes.num(job.getTimeoutS())
                        + " s") + ")");
      }
      if (!s.isOk()) {
        throw callFailed("the upload", s, timeoutNs, "timeout_s");
      }
      if (summary == null) {
        throw Protocol.fail(Protocol.MEASUREMENT, "the upload ended without a summary");
      }
      long[] fields = Wire.parseUploadSummary(summary);
      long end = endNs;
      double elapsed = (end - start) / 1e9;
      Worker.ClientResult.Builder r = result()
          .setBytes(fields[1])
          .setMessages(fields[0])
          .setElapsedS(elapsed)
          .setTStartNs(start)
          .setTEndNs(end)
          .addStreamBytes(fields[1])
          .addStreamFinishS(elapsed)
          .setCpuS(cpu / 1e9)
          .addAllNotes(notes);
      synchronized (this) {
        r.setSentBytes(sent * job.getMessageBytes());
      }
      return r.build();
    }

    private boolean more() {
      return limit == 0 ? System.nanoTime() < sendUntilNs : sent < limit;
    }

    /** Send while ready; half-close once done (under this object's lock). */
    private void pump() {
      if (halfClosed || status != null) {
        return;
      }
      while (call.isReady() && more()) {
        call.sendMessage(chunk);
        sent++;
      }
      if (!more()) {
        halfClosed = true;
        call.halfClose();
      }
    }

    @Override
    public synchronized void onReady() {
      pump();
    }

    @Override
    public synchronized void onMessage(byte[] message) {
      summary = message;
    }

    @Override
    public void onClose(Status s, Metadata trailers) {
      endNs = System.nanoTime();
      status = s;
      closed.countDown();
    }
  }

  // --- download ----------------------------------------------------------------------------

  /** N Download streams round-robin over the channels; each a ClientCall reading one message
   * at a time (request(1) per message, as a blocking reader would), slow ones paced. */
  private final class Download {
    private final Worker.Download download = job.getDownload();
    private final long fixed = download.getMessagesPerStream(); // 0: timed
    private final int slow = Math.min(download.getSlowStreams(), download.getStreams());
    private final Stream[] streams = new Stream[download.getStreams()];
    private final AtomicInteger left = new AtomicInteger(streams.length);
    private final AtomicInteger fastLeft = new AtomicInteger();
    private final AtomicReference<Status> error = new AtomicReference<>();
    private final CountDownLatch over = new CountDownLatch(1);
    private final ScheduledExecutorService timer = Main.timer();
    private long startNs;
    private long stopAtNs;
    private volatile boolean stop;

    Worker.ClientResult run() throws InterruptedException {
      int messageBytes = job.getMessageBytes();
      long timeoutNs = leftNs();
      byte[] request = Wire.downloadRequest(fixed, messageBytes);
      Worker.ReadPacing pacing = download.getPacing();
      long cpu0 = Main.cpuNs();
      startNs = System.nanoTime();
      stopAtNs = startNs + (long) (download.getTimedS() * 1e9);
      for (int i = 0; i < streams.length; i++) {
        ReadPacer pacer = null;
        if (i < slow) {
          pacer = new ReadPacer(pacing.getRateBytesS(), startNs, pacing.getSeed() + i,
              messageBytes, pacing.getJitter());
        } else {
          fastLeft.incrementAndGet();
        }
        streams[i] = new Stream(pacer);
      }
      for (int i = 0; i < streams.length; i++) {
        streams[i].start(channels.get(i % channels.size()), request, timeoutNs);
      }
      boolean ended = over.await(timeoutNs + TimeUnit.SECONDS.toNanos(5), TimeUnit.NANOSECONDS);
      long cpu = Main.cpuNs() - cpu0;
      if (error.get() != null) {
        throw callFailed("the download", error.get(), timeoutNs, "timeout_s");
      }
      if (!ended) {
        throw Protocol.fail(Protocol.MEASUREMENT, "the download did not end within "
            + seconds(timeoutNs) + " s (what was left of the trial's timeout_s) and 5 s more");
      }
      long messages = 0;
      Worker.ClientResult.Builder r = result();
      double elapsed = 0;
      boolean hasFast = streams.length > slow;
      for (Stream s : streams) {
        synchronized (s) {
          messages += s.messages;
          double finish = (s.finishNs - startNs) / 1e9;
          r.addStreamBytes(s.messages * messageBytes).addStreamFinishS(finish);
          // Fixed-size runs end with the last full-speed stream (slow readers are stopped then).
          if (fixed == 0 || !hasFast || s.pacer == null) {
            elapsed = Math.max(elapsed, finish);
          }
        }
      }
      if (slow > 0) {
        notes.add(Notes.slowStreams(download, messageBytes));
      }
      return r.setBytes(messages * messageBytes)
          .setMessages(messages)
          .setElapsedS(elapsed)
          .setTStartNs(startNs)
          .setTEndNs(startNs + (long) (elapsed * 1e9))
          .setCpuS(cpu / 1e9)
          .addAllNotes(notes)
          .setSlowStreams(slow)
          .build();
    }

    private void finished(Stream s) {
      if (s.pacer == null && fastLeft.decrementAndGet() == 0) {
        stop = true;
        timer.execute(this::stopSlowReaders);
      }
      if (left.decrementAndGet() == 0) {
        over.countDown();
      }
    }

    private void stopSlowReaders() {
      for (Stream s : streams) {
        if (s.pacer != null) {
          s.stopNow();
        }
      }
    }

    private final class Stream extends ClientCall.Listener<Integer> {
      final ReadPacer pacer;
      private ClientCall<byte[], Integer> call;
      long messages;
      long finishNs;
      private boolean done;

      Stream(ReadPacer pacer) {
        this.pacer = pacer;
      }

      synchronized void start(ManagedChannel channel, byte[] request, long timeoutNs) {
        call = channel.newCall(DOWNLOAD, callOptions(timeoutNs));
        call.start(this, new Metadata());
        call.sendMessage(request);
        call.halfClose();
        call.request(1);
      }

      private void finish(long now, boolean cancel) {
        done = true;
        finishNs = now;
        if (cancel) {
          call.cancel("the kit's client is done with this stream", null);
        }
        finished(this);
      }

      @Override
      public synchronized void onMessage(Integer length) {
        if (done) {
          return;
        }
        messages++;
        long now = System.nanoTime();
        if (fixed == 0 && now >= stopAtNs) {
          finish(now, true);
        } else if (fixed != 0 && messages >= fixed) {
          finish(now, false);
        } else if (pacer == null) {
          call.request(1);
        } else if (stop) {
          finish(now, true);
        } else {
          long waitNs = pacer.dueNs - now;
          if (waitNs <= 0) {
            readPaced();
          } else {
            timer.schedule(this::paced, waitNs, TimeUnit.NANOSECONDS);
          }
        }
      }

      private synchronized void paced() {
        if (!done) {
          readPaced();
        }
      }

      private void readPaced() {
        long now = System.nanoTime();
        if (stop) {
          finish(now, true);
          return;
        }
        pacer.take(Math.max(now, pacer.dueNs));
        call.request(1);
      }

      synchronized void stopNow() {
        if (!done) {
          finish(System.nanoTime(), true);
        }
      }

      @Override
      public synchronized void onClose(Status status, Metadata trailers) {
        if (done) {
          return;
        }
        if (status.isOk()) {
          finish(System.nanoTime(), false);
          return;
        }
        error.compareAndSet(null, status);
        done = true;
        over.countDown();
      }
    }
  }
}
