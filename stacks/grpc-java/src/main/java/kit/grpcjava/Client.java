package kit.grpcjava;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The grpc-java client: kit/clients/grpcio_client.py's semantics on grpc-java's Netty transport.
 * One ManagedChannel per connection (grpc-java channels never share a transport); warm-up is one
 * Ping per connection; then a download (N streams over M connections, round-robin; timed or
 * fixed; slow readers), unary Pings or one client-streaming upload.
 */
final class Client {
  static final String WHO = Main.STACK + " client";
  static final int MAX_MESSAGE_BYTES = 128 * Wire.MIB;
  static final double CONNECT_TIMEOUT_S = 10.0;
  static final double UPLOAD_DRAIN_S = 5.0;
  static final int UPLOAD_DRAIN_RTTS = 20;

  static final MethodDescriptor<byte[], Integer> DOWNLOAD =
      Wire.method("Download", MethodType.SERVER_STREAMING, Wire.BYTES, Wire.DRAIN);
  static final MethodDescriptor<byte[], byte[]> PING =
      Wire.method("Ping", MethodType.UNARY, Wire.BYTES, Wire.BYTES);
  static final MethodDescriptor<byte[], byte[]> UPLOAD =
      Wire.method("Upload", MethodType.CLIENT_STREAMING, Wire.BYTES, Wire.BYTES);

  private final Config.ClientProcess process;
  private final Config.Trial trial;
  private final Config.Workload workload;
  private final long deadlineNs;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private NettyFlow nettyFlow;
  private EventLoops loops;

  private Client(Config.ClientProcess process, long startedNs) {
    this.process = process;
    this.trial = process.trial();
    this.workload = trial.workload();
    this.deadlineNs = startedNs + (long) (workload.timeoutS() * 1e9);
  }

  static void main(String[] args) {
    Main.onStopSignals(
        signal -> Protocol.die(WHO + ": interrupted by SIG" + signal.name(), 128 + signal.number()));
    if (args.length == 1 && args[0].equals("--worker")) {
      worker();
      return;
    }
    long started = System.nanoTime();
    Config.ClientProcess process;
    Options.Checked options;
    try {
      process = Config.clientProcess(Config.parseArgv(args, "ClientProcess"));
      options = checkForStack(process.trial());
    } catch (Protocol.Failure f) {
      Protocol.die(WHO + ": " + f.getMessage(), f.exitCode);
      return;
    }
    Protocol.ready(ProcessHandle.current().pid(), 0, Main.STACK, Main.version());
    Main.trace("ready");
    try {
      JsonObject result = measure(process, options, started);
      Main.trace("channels closed");
      Protocol.result(result);
      Protocol.halt(Protocol.finalCode());
    } catch (Protocol.Failure f) {
      Protocol.die(WHO + ": " + f.getMessage(), f.exitCode);
    } catch (StatusRuntimeException e) {
      Protocol.die(WHO + ": " + statusText(e.getStatus()), Protocol.MEASUREMENT);
    } catch (Throwable t) {
      Protocol.die(WHO + ": " + t, Protocol.FAILED);
    }
  }

  /**
   * {@code client --worker}: a client worker (docs/process-protocol.md). One trial per line of
   * stdin, each on channels, connections and event loops of its own, one result line each; the
   * first error (a bad line too) is the final line and ends it; stdin's end: exit 0.
   */
  private static void worker() {
    Protocol.ready(ProcessHandle.current().pid(), 0, Main.STACK, Main.version(), true);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    int trials = 0;
    try {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.isBlank()) {
          continue;
        }
        long started = System.nanoTime();
        Config.ClientProcess process =
            Config.clientProcess(Config.parseJson(line, "worker line"));
        JsonObject result = measure(process, checkForStack(process.trial()), started);
        trials++;
        if (!Protocol.trialResult(result, trials)) {
          return; // a signal's error line came first: it halts the process
        }
      }
      Protocol.halt(Protocol.OK);
    } catch (Protocol.Failure f) {
      Protocol.die(WHO + ": " + f.getMessage(), f.exitCode);
    } catch (StatusRuntimeException e) {
      Protocol.die(WHO + ": " + statusText(e.getStatus()), Protocol.MEASUREMENT);
    } catch (Throwable t) {
      Protocol.die(WHO + ": " + t, Protocol.FAILED);
    }
  }

  /** Connect, warm, run the workload, close the channels: the result. */
  static JsonObject measure(Config.ClientProcess process, Options.Checked options, long startedNs)
      throws Exception {
    Client client = new Client(process, startedNs);
    try {
      return client.run(options);
    } finally {
      Main.trace("workload done");
      client.close();
    }
  }

  /** What grpc-java cannot do is refused here (exit 2), never ignored. */
  static Options.Checked checkForStack(Config.Trial trial) {
    Config.ClientConfig c = trial.client();
    Config.require(
        c.kind().equals(Main.STACK),
        "trial.client.kind is '" + c.kind() + "'; this program is the " + Main.STACK + " client");
    Config.require(
        c.maxFrameBytes() == null,
        "max_frame_bytes is the kit's h2 client's: grpc-java has no knob for "
            + "SETTINGS_MAX_FRAME_SIZE (it advertises none: Netty's default 16384)");
    Config.require(
        c.creditPolicy() == null,
        "credit_policy is the kit's h2 client's: grpc-java (Netty's DefaultHttp2LocalFlowController)"
            + " sends a WINDOW_UPDATE once half of a window is consumed, and has no knob for it");
    Config.require(
        c.windowMode().equals("static") || c.connWindowBytes() == null,
        "conn_window_bytes needs a static window: in dynamic mode grpc-java's BDP pinger moves "
            + "the connection window with the stream window");
    return Options.check(Options.CLIENT, c.channelOptions(), c.windowMode());
  }

  // --- channels ----------------------------------------------------------------------------

  private JsonObject run(Options.Checked options) throws Exception {
    int count = Math.min(trial.client().connections(), workload.streams());
    Integer connTarget = connWindowTarget();
    boolean ownConnWindow =
        connTarget != null && connTarget.longValue() != trial.client().windowBytes();
    if (ownConnWindow || options.windowUpdateRatio() != null) {
      nettyFlow = new NettyFlow(ownConnWindow ? connTarget : null, options.windowUpdateRatio());
    }
    loops = EventLoops.client(options.values().getOrDefault("useNioTransport", 0L) == 1);
    List<String> applied = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      applied = openChannel(options.values());
    }
    Main.trace("channels built");
    notes.addAll(Notes.client(trial, applied, connTarget, options.windowUpdateRatio()));
    Main.trace("notes");
    waitReady();
    Main.trace("connected");
    if (workload.warmup()) {
      byte[] warm = Wire.bytesField1("warm".getBytes(), 4);
      for (ManagedChannel channel : channels) {
        ClientCalls.blockingUnaryCall(channel, PING, callOptions(leftNs()), warm);
      }
    }
    Main.trace("warmed");
    if (nettyFlow != null && nettyFlow.applied.get() < channels.size()) {
      throw Protocol.fail(
          Protocol.FAILED,
          "Netty's flow controller was tuned on " + nettyFlow.applied.get() + " of "
              + channels.size() + " connections only");
    }
    return switch (workload.kind()) {
      case "unary" -> unary();
      case "upload" -> upload();
      default -> new Download().run();
    };
  }

  /** The connection window the kit's rule asks for (static windows), or null. */
  private Integer connWindowTarget() {
    Config.ClientConfig c = trial.client();
    if (c.windowBytes() == null) {
      return null;
    }
    long target =
        c.connWindowBytes() != null
            ? c.connWindowBytes()
            : Math.min(c.windowBytes() * trial.streamsPerConnection(), Config.HTTP2_MAX_WINDOW);
    return (int) target;
  }

  private List<String> openChannel(Map<String, Long> options) {
    Config.ClientConfig c = trial.client();
    NettyChannelBuilder builder =
        NettyChannelBuilder.forAddress(
                new InetSocketAddress(process.targetHost(), process.targetPort()))
            .maxInboundMessageSize(MAX_MESSAGE_BYTES)
            .eventLoopGroup(loops.worker)
            .channelType(loops.channelType(), InetSocketAddress.class);
    if (c.windowMode().equals("static")) {
      builder.flowControlWindow(c.windowBytes().intValue());
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

  private void waitReady() throws InterruptedException {
    double waitS = Math.min(CONNECT_TIMEOUT_S, workload.timeoutS());
    long until = System.nanoTime() + (long) (waitS * 1e9);
    for (ManagedChannel channel : channels) {
      channel.getState(true);
    }
    for (ManagedChannel channel : channels) {
      while (true) {
        ConnectivityState state = channel.getState(true);
        if (state == ConnectivityState.READY) {
          break;
        }
        long left = until - System.nanoTime();
        if (left <= 0) {
          throw Protocol.fail(
              Protocol.MEASUREMENT,
              "cannot reach " + process.targetHost() + ":" + process.targetPort() + " within "
                  + Config.num(waitS) + " s (channel " + state + ")");
        }
        CountDownLatch changed = new CountDownLatch(1);
        channel.notifyWhenStateChanged(state, changed::countDown);
        changed.await(left, TimeUnit.NANOSECONDS);
      }
    }
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

  private long leftNs() {
    return Math.max(TimeUnit.MILLISECONDS.toNanos(50), deadlineNs - System.nanoTime());
  }

  /** What is left of the overall timeout, at least 1 s (the kit's floor for the workload). */
  private long workloadNs() {
    return Math.max(TimeUnit.SECONDS.toNanos(1), deadlineNs - System.nanoTime());
  }

  private static CallOptions callOptions(long timeoutNs) {
    return CallOptions.DEFAULT.withDeadlineAfter(timeoutNs, TimeUnit.NANOSECONDS);
  }

  static String statusText(Status status) {
    String text = status.getCode().name();
    if (status.getDescription() != null) {
      text += ": " + status.getDescription();
    }
    if (status.getCause() != null && status.getDescription() == null) {
      text += ": " + status.getCause();
    }
    return text;
  }

  private JsonObject result() {
    JsonObject r = new JsonObject();
    r.addProperty("client", Main.STACK);
    return r;
  }

  private static JsonArray array(long[] values) {
    JsonArray a = new JsonArray();
    for (long v : values) {
      a.add(v);
    }
    return a;
  }

  private static JsonArray array(double[] values) {
    JsonArray a = new JsonArray();
    for (double v : values) {
      a.add(v);
    }
    return a;
  }

  private JsonArray notesArray() {
    JsonArray a = new JsonArray();
    for (String n : notes) {
      a.add(n);
    }
    return a;
  }

  // --- unary -------------------------------------------------------------------------------

  private JsonObject unary() {
    ManagedChannel channel = channels.get(0);
    byte[] request = Wire.bytesField1("xxxxxxxxxxxxxxxx".getBytes(), 16);
    long timeoutNs = workloadNs();
    double[] latencies = new double[workload.calls()];
    long cpu0 = Main.cpuNs();
    long start = System.nanoTime();
    long callDeadline = start + timeoutNs;
    for (int i = 0; i < latencies.length; i++) {
      long t0 = System.nanoTime();
      ClientCalls.blockingUnaryCall(
          channel, PING, callOptions(Math.max(1, callDeadline - t0)), request);
      latencies[i] = (System.nanoTime() - t0) / 1e6;
    }
    long end = System.nanoTime();
    JsonObject r = result();
    r.addProperty("messages", latencies.length);
    r.addProperty("elapsed_s", (end - start) / 1e9);
    r.addProperty("t_start_ns", start);
    r.addProperty("t_end_ns", end);
    r.addProperty("cpu_s", (Main.cpuNs() - cpu0) / 1e9);
    r.add("latencies_ms", array(latencies));
    r.add("notes", notesArray());
    return r;
  }

  // --- upload ------------------------------------------------------------------------------

  private double uploadCallTimeoutS() {
    if (workload.bytesPerStream() != null) {
      return workload.timeoutS();
    }
    double rttMs = trial.link().rttMs();
    double drainS = Math.max(UPLOAD_DRAIN_S, UPLOAD_DRAIN_RTTS * rttMs / 1000.0);
    return Math.min(workload.timeoutS(), workload.timedDurationS(rttMs) + drainS);
  }

  private JsonObject upload() throws InterruptedException {
    Uploader up = new Uploader();
    return up.run();
  }

  /** One client-streaming Upload: send while the call is ready (grpc-java's onReady flow
   * control), until the deadline or the fixed count, then half-close; the summary ends it. */
  private final class Uploader extends ClientCall.Listener<byte[]> {
    private final byte[] chunk = Wire.chunk(workload.messageBytes());
    private final Long limit = workload.messagesPerStream();
    private final double callTimeoutS = uploadCallTimeoutS();
    private ClientCall<byte[], byte[]> call;
    private long sendUntilNs;
    private long sent;
    private boolean halfClosed;
    private byte[] summary;
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile Status status;
    private volatile long endNs;

    JsonObject run() throws InterruptedException {
      double durationS = workload.timedDurationS(trial.link().rttMs());
      ScheduledExecutorService timer = Main.timer();
      long cpu0 = Main.cpuNs();
      long start = System.nanoTime();
      sendUntilNs = start + (long) (durationS * 1e9);
      long timeoutNs = Math.min((long) (callTimeoutS * 1e9), workloadNs());
      synchronized (this) {
        call = channels.get(0).newCall(UPLOAD, callOptions(timeoutNs));
        call.start(this, new Metadata());
        call.request(1);
        pump();
      }
      if (limit == null) { // a timed upload half-closes at its deadline, ready or not
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
            "the server stopped taking the upload (no summary within " + Config.num(callTimeoutS)
                + " s)");
      }
      if (!s.isOk()) {
        throw Protocol.fail(Protocol.MEASUREMENT, statusText(s));
      }
      if (summary == null) {
        throw Protocol.fail(Protocol.MEASUREMENT, "the upload ended without a summary");
      }
      long[] fields = Wire.parseUploadSummary(summary);
      long end = endNs;
      double elapsed = (end - start) / 1e9;
      JsonObject r = result();
      r.addProperty("bytes", fields[1]);
      r.addProperty("messages", fields[0]);
      r.addProperty("elapsed_s", elapsed);
      r.addProperty("t_start_ns", start);
      r.addProperty("t_end_ns", end);
      r.add("stream_bytes", array(new long[] {fields[1]}));
      r.add("stream_finish_s", array(new double[] {elapsed}));
      r.addProperty("cpu_s", cpu / 1e9);
      r.add("notes", notesArray());
      synchronized (this) {
        r.addProperty("sent_bytes", sent * workload.messageBytes());
      }
      return r;
    }

    private boolean more() {
      return limit == null ? System.nanoTime() < sendUntilNs : sent < limit;
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
    private final long fixed; // messages per stream, 0: timed
    private final Stream[] streams = new Stream[workload.streams()];
    private final AtomicInteger left = new AtomicInteger(workload.streams());
    private final AtomicInteger fastLeft = new AtomicInteger();
    private final AtomicReference<String> error = new AtomicReference<>();
    private final CountDownLatch over = new CountDownLatch(1);
    private final ScheduledExecutorService timer = Main.timer();
    private long startNs;
    private long stopAtNs;
    private volatile boolean stop;

    Download() {
      Long perStream = workload.messagesPerStream();
      fixed = perStream == null ? 0 : perStream;
    }

    JsonObject run() throws InterruptedException {
      double durationS =
          fixed != 0 ? workload.timeoutS() : workload.timedDurationS(trial.link().rttMs());
      long timeoutNs = workloadNs();
      byte[] request = Wire.downloadRequest(fixed, workload.messageBytes());
      Double rate = workload.readRateBitsS();
      long cpu0 = Main.cpuNs();
      startNs = System.nanoTime();
      stopAtNs = startNs + (long) (durationS * 1e9);
      for (int i = 0; i < streams.length; i++) {
        ReadPacer pacer = null;
        if (rate != null && i < workload.slowStreams()) {
          pacer = new ReadPacer(rate / 8, startNs, i + 1, workload.messageBytes());
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
      if (error.get() != null || !ended) {
        throw Protocol.fail(
            Protocol.MEASUREMENT,
            "download failed: " + (error.get() != null ? error.get() : "timed out"));
      }
      long messages = 0;
      long[] bytes = new long[streams.length];
      double[] finish = new double[streams.length];
      double elapsed = 0;
      boolean hasFast = streams.length > workload.slowStreams();
      for (int i = 0; i < streams.length; i++) {
        Stream s = streams[i];
        synchronized (s) {
          messages += s.messages;
          bytes[i] = s.messages * workload.messageBytes();
          finish[i] = (s.finishNs - startNs) / 1e9;
          // Fixed-size runs end with the last full-speed stream (slow readers are stopped then).
          boolean counts = fixed == 0 || !hasFast || s.pacer == null;
          if (counts) {
            elapsed = Math.max(elapsed, finish[i]);
          }
        }
      }
      JsonObject r = result();
      r.addProperty("bytes", messages * workload.messageBytes());
      r.addProperty("messages", messages);
      r.addProperty("elapsed_s", elapsed);
      r.addProperty("t_start_ns", startNs);
      r.addProperty("t_end_ns", startNs + (long) (elapsed * 1e9));
      r.add("stream_bytes", array(bytes));
      r.add("stream_finish_s", array(finish));
      r.addProperty("cpu_s", cpu / 1e9);
      if (workload.slowStreams() > 0) {
        notes.add(
            "streams 1.." + workload.slowStreams() + " read one message per "
                + Math.round(workload.messageBytes() * 8 / workload.readRateBitsS() * 1000)
                + " ms (" + Config.num(workload.readRateBitsS() / 1e6) + " Mbit/s): request(1)"
                + " once due; grpc-java holds what arrives meanwhile and returns its credit only"
                + " as messages are read");
      }
      r.add("notes", notesArray());
      r.addProperty("slow_streams", workload.slowStreams());
      return r;
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
        error.compareAndSet(null, statusText(status));
        done = true;
        over.countDown();
      }
    }
  }
}
