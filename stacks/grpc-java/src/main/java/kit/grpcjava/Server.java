package kit.grpcjava;

import com.google.gson.JsonObject;
import io.grpc.MethodDescriptor;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.InternalNettyServerCredentials;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The grpc-java server: servers/grpcio_server.py's semantics on grpc-java's Netty transport.
 * Download streams pre-serialized Chunks (built once per size, reused) as fast as grpc-java's
 * onReady flow control lets it; Ping echoes; Upload counts messages and payload bytes.
 */
final class Server {
  static final String WHO = Main.STACK + " server";
  static final int MAX_MESSAGE_BYTES = 128 * Wire.MIB;
  static final int MAX_DOWNLOAD_MESSAGE_BYTES = 64 * Wire.MIB;
  static final int MAX_ECHO_BYTES = Wire.MIB;
  static final long CACHE_MAX_BYTES = 64L * Wire.MIB;

  static final MethodDescriptor<byte[], byte[]> DOWNLOAD =
      Wire.method("Download", MethodType.SERVER_STREAMING, Wire.BYTES, Wire.BYTES);
  static final MethodDescriptor<byte[], byte[]> PING =
      Wire.method("Ping", MethodType.UNARY, Wire.BYTES, Wire.BYTES);
  static final MethodDescriptor<Long, byte[]> UPLOAD =
      Wire.method("Upload", MethodType.CLIENT_STREAMING, Wire.CHUNK_PAYLOAD, Wire.BYTES);

  private static final AtomicLong RPCS = new AtomicLong();
  private static final ChunkCache CHUNKS = new ChunkCache();

  private Server() {}

  static void main(String[] args) {
    CountDownLatch stop = new CountDownLatch(1);
    Main.onStopSignals(signal -> stop.countDown());
    Config.ServerProcess process;
    Options.Checked options;
    try {
      process = Config.serverProcess(Config.parseArgv(args, "ServerProcess"));
      options = checkForStack(process.config());
    } catch (Protocol.Failure f) {
      Protocol.die(WHO + ": " + f.getMessage(), f.exitCode);
      return;
    }
    io.grpc.Server server;
    try {
      server = start(process, options);
    } catch (Protocol.Failure f) {
      Protocol.die(WHO + ": " + f.getMessage(), f.exitCode);
      return;
    }
    if (!Config.isLoopback(process.listenHost())) {
      System.err.println(
          "WARNING: the server listens on " + process.listenHost() + ", which is NOT a loopback "
              + "address: anyone who can reach this host can connect to it.");
    }
    Protocol.ready(ProcessHandle.current().pid(), server.getPort(), Main.STACK, Main.version());
    try {
      stop.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    stop(server);
    JsonObject result = new JsonObject();
    result.addProperty("rpcs", RPCS.get());
    Protocol.result(result);
    Protocol.halt(Protocol.finalCode());
  }

  /** The configs a server must refuse (exit 2); its checked options. */
  static Options.Checked checkForStack(Config.ServerConfig c) {
    Config.require(
        c.kind().equals(Main.STACK),
        "config.kind is '" + c.kind() + "'; this program is the " + Main.STACK + " server");
    Config.require(
        c.windowMode().equals("dynamic") || c.windowMode().equals("static"),
        "window mode: " + Main.STACK + " is static or dynamic, not " + c.windowMode());
    return Options.check(Options.SERVER, c.channelOptions(), c.windowMode());
  }

  /** Build and start the server; a failure to listen is exit 3. */
  static io.grpc.Server start(Config.ServerProcess process, Options.Checked options) {
    String address = hostPort(process.listenHost(), process.listenPort());
    try {
      InetSocketAddress listen = new InetSocketAddress(process.listenHost(), process.listenPort());
      Float ratio = options.windowUpdateRatio();
      NettyServerBuilder builder =
          (ratio == null
                  ? NettyServerBuilder.forAddress(listen)
                  : NettyServerBuilder.forAddress(
                      listen,
                      InternalNettyServerCredentials.create(
                          new NettyFlow(null, ratio).serverFactory())))
              .maxInboundMessageSize(MAX_MESSAGE_BYTES)
              .addService(service());
      EventLoops loops =
          EventLoops.server(options.values().getOrDefault("useNioTransport", 0L) == 1);
      builder
          .bossEventLoopGroup(loops.boss)
          .workerEventLoopGroup(loops.worker)
          .channelType(loops.serverChannelType());
      if (process.config().windowMode().equals("static")) {
        builder.flowControlWindow(process.config().windowBytes().intValue());
      }
      List<String> applied = Options.apply(Options.SERVER, options.values(), builder);
      System.err.println(WHO + ": " + Notes.server(process.config(), applied, ratio));
      return builder.build().start();
    } catch (IOException | RuntimeException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      String hint = process.listenPort() != 0 ? "; is the port in use?" : "";
      throw Protocol.fail(
          Protocol.CANNOT_START,
          "cannot listen on " + address + " (" + cause.getMessage() + ")" + hint);
    }
  }

  /** SIGTERM/SIGINT: stop accepting, a short grace for the calls, then force. */
  static void stop(io.grpc.Server server) {
    try {
      server.shutdown();
      if (!server.awaitTermination(250, TimeUnit.MILLISECONDS)) {
        server.shutdownNow();
        server.awaitTermination(250, TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static String hostPort(String host, int port) {
    return host.contains(":") ? "[" + host + "]:" + port : host + ":" + port;
  }

  static ServerServiceDefinition service() {
    return ServerServiceDefinition.builder(Wire.SERVICE)
        .addMethod(DOWNLOAD, ServerCalls.asyncServerStreamingCall(Server::download))
        .addMethod(PING, ServerCalls.asyncUnaryCall(Server::ping))
        .addMethod(UPLOAD, ServerCalls.asyncClientStreamingCall(Server::upload))
        .build();
  }

  // --- Download ----------------------------------------------------------------------------

  static void download(byte[] request, StreamObserver<byte[]> observer) {
    RPCS.incrementAndGet();
    long[] fields;
    try {
      fields = Wire.parseDownloadRequest(request);
    } catch (IllegalArgumentException e) {
      observer.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asException());
      return;
    }
    long messageBytes = fields[1];
    if (messageBytes > MAX_DOWNLOAD_MESSAGE_BYTES) {
      observer.onError(
          Status.INVALID_ARGUMENT
              .withDescription(
                  "message_bytes " + messageBytes + " is above this server's maximum "
                      + MAX_DOWNLOAD_MESSAGE_BYTES)
              .asException());
      return;
    }
    byte[] chunk = CHUNKS.get((int) Math.max(1, messageBytes));
    ServerCallStreamObserver<byte[]> call = (ServerCallStreamObserver<byte[]>) observer;
    Sender sender = new Sender(call, chunk, fields[0]);
    call.setOnCancelHandler(sender::cancel);
    call.setOnReadyHandler(sender::send);
  }

  /** Sends while grpc-java says the call is ready (its onReady flow control). */
  private static final class Sender {
    private final ServerCallStreamObserver<byte[]> call;
    private final byte[] chunk;
    private long remaining; // < 0: until cancelled (message_count 0, or beyond a long)
    private volatile boolean cancelled;
    private boolean completed;

    Sender(ServerCallStreamObserver<byte[]> call, byte[] chunk, long count) {
      this.call = call;
      this.chunk = chunk;
      this.remaining = count == 0 ? -1 : count;
    }

    void cancel() {
      cancelled = true;
    }

    void send() {
      while (!cancelled && remaining != 0 && call.isReady()) {
        call.onNext(chunk);
        if (remaining > 0) {
          remaining--;
        }
      }
      if (remaining == 0 && !completed && !cancelled) {
        completed = true;
        call.onCompleted();
      }
    }
  }

  /** Serialized Chunks by size, least recently used out first, bounded in bytes. */
  private static final class ChunkCache {
    private final LinkedHashMap<Integer, byte[]> chunks = new LinkedHashMap<>(16, 0.75f, true);
    private long bytes;

    byte[] get(int payloadBytes) {
      synchronized (this) {
        byte[] chunk = chunks.get(payloadBytes);
        if (chunk != null) {
          return chunk;
        }
      }
      byte[] chunk = Wire.chunk(payloadBytes);
      if (chunk.length <= CACHE_MAX_BYTES / 4) { // a huge one is built per call, never kept
        synchronized (this) {
          if (chunks.putIfAbsent(payloadBytes, chunk) == null) {
            bytes += chunk.length;
          }
          var it = chunks.entrySet().iterator();
          while (bytes > CACHE_MAX_BYTES && it.hasNext()) {
            bytes -= it.next().getValue().length;
            it.remove();
          }
        }
      }
      return chunk;
    }
  }

  // --- Ping and Upload ---------------------------------------------------------------------

  static void ping(byte[] request, StreamObserver<byte[]> observer) {
    RPCS.incrementAndGet();
    byte[] payload;
    try {
      payload = Wire.parseBytesField1(request);
    } catch (IllegalArgumentException e) {
      observer.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asException());
      return;
    }
    if (payload.length > MAX_ECHO_BYTES) {
      observer.onError(
          Status.INVALID_ARGUMENT
              .withDescription(
                  "ping payload of " + payload.length + " bytes is above the echo maximum "
                      + MAX_ECHO_BYTES)
              .asException());
      return;
    }
    observer.onNext(Wire.bytesField1(payload, payload.length));
    observer.onCompleted();
  }

  static StreamObserver<Long> upload(StreamObserver<byte[]> observer) {
    RPCS.incrementAndGet();
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
