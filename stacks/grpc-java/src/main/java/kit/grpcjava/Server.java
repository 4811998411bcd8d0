package kit.grpcjava;

import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.InternalNettyServerCredentials;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import kit.worker.Worker;

/**
 * The grpc-java server: servers/grpcio_server.py's semantics on grpc-java's Netty transport,
 * with the limits of its ServerJob. Download sends shared pre-serialized Chunks as fast as
 * grpc-java's onReady flow control lets it (one message queued per call at most), each call
 * charged to the download budget before it allocates; Ping echoes; Upload counts messages and
 * payload bytes.
 */
final class Server {
  static final String WHO = Main.STACK + " server";
  static final String USAGE =
      WHO + ": usage: java -jar kit-grpc-java.jar server --config '<ServerJob as JSON>'";
  /** A Chunk's or a PingRequest's bytes beyond its payload: a tag and a length. */
  static final int FRAMING_BYTES = 16;

  static final MethodDescriptor<byte[], Wire.Outgoing> DOWNLOAD =
      Wire.method("Download", MethodType.SERVER_STREAMING, Wire.BYTES, Wire.OUTGOING);
  static final MethodDescriptor<byte[], byte[]> PING =
      Wire.method("Ping", MethodType.UNARY, Wire.BYTES, Wire.BYTES);
  static final MethodDescriptor<Long, byte[]> UPLOAD =
      Wire.method("Upload", MethodType.CLIENT_STREAMING, Wire.CHUNK_PAYLOAD, Wire.BYTES);

  private final Worker.ServerJob job;
  private final DownloadBudget budget;
  private final MessageCache messages;
  private final AtomicLong rpcs = new AtomicLong();
  final io.grpc.Server grpc;

  private Server(Worker.ServerJob job, Options.Checked options) {
    this.job = job;
    this.budget = new DownloadBudget(job.getDownloadBudgetBytes(), job.getSharedMessageMaxBytes());
    this.messages = new MessageCache(job.getSharedMessageMaxBytes(), job.getMessageCacheBytes());
    this.grpc = build(options);
  }

  static void main(String[] args) {
    CountDownLatch stop = new CountDownLatch(1);
    Main.onStopSignals(signal -> stop.countDown());
    Worker.ServerJob job;
    Options.Checked options;
    try {
      job = Jobs.serverJob(Jobs.configArg(args, USAGE));
      options = check(job);
    } catch (Protocol.Failure f) {
      Protocol.die(f.getMessage().equals(USAGE) ? USAGE : WHO + ": " + f.getMessage(), f.exitCode);
      return;
    }
    Server server;
    try {
      server = start(job, options);
    } catch (Protocol.Failure f) {
      Protocol.die(WHO + ": " + f.getMessage(), f.exitCode);
      return;
    }
    Protocol.ready(ProcessHandle.current().pid(), server.grpc.getPort(), false);
    try {
      stop.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    server.stop();
    Protocol.serverResult(server.result());
    Protocol.halt(Protocol.finalCode());
  }

  /** The job's options, checked (exit 2 for one grpc-java does not have or take). */
  static Options.Checked check(Worker.ServerJob job) {
    return Options.check(Options.SERVER, job.getOptionsList(), NettyServerBuilder.forPort(0));
  }

  Worker.ServerResult result() {
    return Worker.ServerResult.newBuilder()
        .setRpcs(rpcs.get())
        .setRefused(budget.refused())
        .build();
  }

  /** Build and start the server; a failure to listen is exit 3. */
  static Server start(Worker.ServerJob job, Options.Checked options) {
    Server server = new Server(job, options);
    try {
      server.grpc.start();
    } catch (IOException | RuntimeException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      String hint = job.getListenPort() != 0 ? "; is the port in use?" : "";
      throw Protocol.fail(
          Protocol.CANNOT_START,
          "cannot listen on " + hostPort(job.getListenHost(), job.getListenPort()) + " ("
              + cause.getMessage() + ")" + hint);
    }
    return server;
  }

  private io.grpc.Server build(Options.Checked options) {
    InetSocketAddress listen;
    try {
      listen = new InetSocketAddress(job.getListenHost(), job.getListenPort());
    } catch (IllegalArgumentException e) {
      throw Protocol.fail(Protocol.CANNOT_START, "cannot listen on " + hostPort(job.getListenHost(),
          job.getListenPort()) + " (" + e.getMessage() + ")");
    }
    Worker.Windows windows = job.getWindows();
    Integer connTarget =
        windows.getStatic() && windows.getConnBytes() != 0
                && windows.getConnBytes() != windows.getStreamBytes()
            ? windows.getConnBytes()
            : null;
    Float ratio = options.windowUpdateRatio();
    // grpc-java's plaintext negotiator, with NettyFlow's handler in front (NettyFlow says why).
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(
            listen,
            InternalNettyServerCredentials.create(
                new NettyFlow(connTarget, ratio, true).serverFactory()));
    EventLoops loops = EventLoops.server(options.nio());
    builder
        .bossEventLoopGroup(loops.boss)
        .workerEventLoopGroup(loops.worker)
        .channelType(loops.serverChannelType())
        .addService(service());
    long inbound = Math.max(job.getMaxMessageBytes(), job.getMaxEchoBytes()) + FRAMING_BYTES;
    if (inbound > io.grpc.internal.GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE) {
      builder.maxInboundMessageSize((int) Math.min(Integer.MAX_VALUE, inbound));
    }
    if (job.getMaxConcurrentStreams() != 0) {
      builder.maxConcurrentCallsPerConnection(
          (int) Math.min(Integer.MAX_VALUE, job.getMaxConcurrentStreams() & 0xffffffffL));
    }
    try {
      if (windows.getStatic()) {
        builder.flowControlWindow(windows.getStreamBytes());
      }
    } catch (IllegalArgumentException e) {
      throw Jobs.bad("windows: grpc-java refuses them: " + e.getMessage());
    }
    List<String> applied = Options.apply(Options.SERVER, options, builder);
    System.err.println(WHO + ": " + Notes.server(job, applied, connTarget, ratio, options.nio()));
    return builder.build();
  }

  /** SIGTERM/SIGINT: stop accepting, a short grace for the calls, then force. */
  void stop() {
    try {
      grpc.shutdown();
      if (!grpc.awaitTermination(250, TimeUnit.MILLISECONDS)) {
        grpc.shutdownNow();
        grpc.awaitTermination(250, TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static String hostPort(String host, int port) {
    return host.contains(":") ? "[" + host + "]:" + port : host + ":" + port;
  }

  private ServerServiceDefinition service() {
    return ServerServiceDefinition.builder(Wire.SERVICE)
        .addMethod(DOWNLOAD, new Downloads())
        .addMethod(PING, ServerCalls.asyncUnaryCall(this::ping))
        .addMethod(UPLOAD, ServerCalls.asyncClientStreamingCall(this::upload))
        .build();
  }

  // --- Download ----------------------------------------------------------------------------

  /** Download calls, on grpc-java's ServerCall itself: one request, then messages while the call
   * is ready; the budget's charge is given back on the call's end (onComplete or onCancel: one
   * of them ends every call). */
  private final class Downloads implements ServerCallHandler<byte[], Wire.Outgoing> {
    @Override
    public ServerCall.Listener<byte[]> startCall(
        ServerCall<byte[], Wire.Outgoing> call, Metadata headers) {
      rpcs.incrementAndGet();
      call.request(2); // the request, and a second one to see (and refuse) if it comes
      return new Download(call);
    }
  }

  private final class Download extends ServerCall.Listener<byte[]> {
    private final ServerCall<byte[], Wire.Outgoing> call;
    private boolean requested;
    private boolean closed;
    private DownloadBudget.Charge charge;
    private Wire.Outgoing message;
    private long remaining; // < 0: until cancelled (message_count 0)

    Download(ServerCall<byte[], Wire.Outgoing> call) {
      this.call = call;
    }

    private void close(Status status) {
      if (!closed) {
        closed = true;
        call.close(status, new Metadata());
      }
    }

    @Override
    public void onMessage(byte[] request) {
      try {
        start(request);
      } catch (RuntimeException e) {
        fail(e);
      }
    }

    /** Whatever went wrong here ends the call and gives its charge back. */
    private void fail(RuntimeException e) {
      end();
      try {
        close(Status.INTERNAL.withDescription(String.valueOf(e)).withCause(e));
      } catch (RuntimeException again) {
        closed = true; // grpc-java had closed it already
      }
    }

    private void start(byte[] request) {
      if (closed) {
        return;
      }
      if (requested) {
        close(Status.INTERNAL.withDescription("Too many requests"));
        return;
      }
      requested = true;
      long[] fields;
      try {
        fields = Wire.parseDownloadRequest(request);
      } catch (IllegalArgumentException e) {
        close(Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
        return;
      }
      long messageBytes = fields[1];
      if (messageBytes > job.getMaxMessageBytes()) {
        close(
            Status.INVALID_ARGUMENT.withDescription(
                "message_bytes " + messageBytes + " is above this server's maximum "
                    + job.getMaxMessageBytes()));
        return;
      }
      int size = (int) Math.max(1, messageBytes);
      charge = budget.take(size);
      if (charge == null) {
        close(
            Status.RESOURCE_EXHAUSTED.withDescription(
                "this download would hold " + budget.chargeOf(size) + " bytes; the server's"
                    + " calls already hold " + budget.held() + " of its " + budget.maxBytes()
                    + " bytes maximum"));
        return;
      }
      message = messages.get(size);
      remaining = fields[0] == 0 ? -1 : fields[0];
      call.sendHeaders(new Metadata());
      send();
    }

    @Override
    public void onHalfClose() {
      if (!requested) {
        close(Status.INTERNAL.withDescription("Half-closed without a request"));
      }
    }

    @Override
    public void onReady() {
      try {
        send();
      } catch (RuntimeException e) {
        fail(e);
      }
    }

    /** Send while grpc-java says the call is ready: at most one message waits in its
     * transport at a time, whatever the peer reads. */
    private void send() {
      if (closed || message == null) {
        return;
      }
      while (remaining != 0 && call.isReady()) {
        call.sendMessage(message);
        if (remaining > 0) {
          remaining--;
        }
      }
      if (remaining == 0) {
        close(Status.OK);
      }
    }

    @Override
    public void onCancel() {
      closed = true;
      end();
    }

    @Override
    public void onComplete() {
      end();
    }

    private void end() {
      if (charge != null) {
        charge.giveBack();
      }
    }
  }

  // --- Ping and Upload ---------------------------------------------------------------------

  void ping(byte[] request, StreamObserver<byte[]> observer) {
    rpcs.incrementAndGet();
    byte[] payload;
    try {
      payload = Wire.parseBytesField1(request);
    } catch (IllegalArgumentException e) {
      observer.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asException());
      return;
    }
    if (payload.length > job.getMaxEchoBytes()) {
      observer.onError(
          Status.INVALID_ARGUMENT
              .withDescription(
                  "ping payload of " + payload.length + " bytes is above the echo maximum "
                      + job.getMaxEchoBytes())
              .asException());
      return;
    }
    observer.onNext(Wire.bytesField1(payload, payload.length));
    observer.onCompleted();
  }

  StreamObserver<Long> upload(StreamObserver<byte[]> observer) {
    rpcs.incrementAndGet();
    return new StreamObserver<>() {
      private long messages;
      private long payload;

      @Override
      public void onNext(Long payloadBytes) {
        messages++;
        payload += payloadBytes;
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {
        observer.onNext(Wire.uploadSummary(messages, payload));
        observer.onCompleted();
      }
    };
  }
}
