package kit.grpcjava;

import java.lang.management.ManagementFactory;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code java -jar kit-grpc-java.jar client|server --config '<JSON>'} (a ClientJob or ServerJob of
 * protos/worker.proto), {@code client --worker}: the kit's grpc-java client and server
 * (docs/process-protocol.md).
 */
public final class Main {
  static final String STACK = "grpc-java";

  // Held: java.util.logging keeps loggers weakly, and a collected one loses its level.
  private static final Logger GRPC_LOG = Logger.getLogger("io.grpc");
  private static final Logger NETTY_LOG = Logger.getLogger("io.netty");
  // Logs a WARNING with a stack trace for every stream a client resets while data is queued
  // (every timed download ends so): noise here, so only its SEVERE lines are kept.
  private static final Logger SERVER_HANDLER_LOG =
      Logger.getLogger("io.grpc.netty.NettyServerHandler");

  private Main() {}

  public static void main(String[] args) {
    trace("main");
    Protocol.init();
    // grpc-java and Netty log through java.util.logging to stderr: warnings and worse only.
    GRPC_LOG.setLevel(Level.WARNING);
    NETTY_LOG.setLevel(Level.WARNING);
    SERVER_HANDLER_LOG.setLevel(Level.SEVERE);
    String role = args.length > 0 ? args[0] : "";
    if (role.equals("client")) {
      warmInBackground();
    }
    String[] rest = Arrays.copyOfRange(args, Math.min(1, args.length), args.length);
    try {
      switch (role) {
        case "client" -> Client.main(rest);
        case "server" -> Server.main(rest);
        case "train" -> {
          Train.main();
          Protocol.halt(0);
        }
        default ->
            Protocol.die(
                STACK + ": usage: java -jar kit-grpc-java.jar client|server --config '<JSON>'"
                    + " | client --worker",
                Protocol.BAD_JOB);
      }
    } catch (Throwable t) {
      Protocol.die(STACK + " " + role + ": " + t, Protocol.CANNOT_START);
    }
  }

  /**
   * A client spends its first few hundred milliseconds initializing classes, one after the
   * other, before its ready line: the main thread decodes the job (protobuf's descriptors and
   * JsonFormat's parser) while a second one initializes what comes next (JsonFormat's printer,
   * whose first line builds a Gson instance, and grpc-java's Netty channel builder). Nothing
   * here touches the job's generated classes (kit.worker), so the two threads never wait on each
   * other's class initialization in opposite orders.
   */
  private static void warmInBackground() {
    Thread warm =
        new Thread(
            () -> {
              try {
                Protocol.text(com.google.protobuf.StringValue.of("warm"));
                io.grpc.netty.NettyChannelBuilder.forTarget("warm").usePlaintext();
                nettyVersion();
              } catch (RuntimeException | LinkageError e) {
                traceError(e); // only slower without it
              }
            },
            "kit-warm");
    warm.setDaemon(true);
    warm.start();
  }

  /** The grpc-java linked, read from the library (GrpcUtil.IMPLEMENTATION_VERSION). */
  static String version() {
    return io.grpc.internal.GrpcUtil.IMPLEMENTATION_VERSION;
  }

  private static String nettyVersion;

  /** The Netty linked (netty-codec-http2's version), read once. */
  static synchronized String nettyVersion() {
    if (nettyVersion == null) {
      var versions = io.netty.util.Version.identify(Main.class.getClassLoader());
      var codec = versions.get("netty-codec-http2");
      nettyVersion = codec != null ? codec.artifactVersion() : "?";
    }
    return nettyVersion;
  }

  /** Process CPU time, user + system (CLOCK_PROCESS_CPUTIME_ID on Linux HotSpot). */
  static long cpuNs() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static final boolean TRACE = System.getenv("KIT_JAVA_TRACE") != null;
  private static final long T0 = System.nanoTime();

  /** KIT_JAVA_TRACE=1: phase times on stderr (ms since the JVM reached main). */
  static void trace(String what) {
    if (TRACE) {
      System.err.printf("[%.1f ms since main, %d ms since JVM start] %s%n", (System.nanoTime() - T0) / 1e6,
          ManagementFactory.getRuntimeMXBean().getUptime(), what);
    }
  }

  /** KIT_JAVA_TRACE=1: an unexpected error's stack trace on stderr. */
  static void traceError(Throwable t) {
    if (TRACE) {
      t.printStackTrace(System.err);
    }
  }

  private static ScheduledExecutorService timer;

  /** One daemon thread for paced reads and deadlines. */
  static synchronized ScheduledExecutorService timer() {
    if (timer == null) {
      ScheduledThreadPoolExecutor t =
          new ScheduledThreadPoolExecutor(
              1,
              r -> {
                Thread thread = new Thread(r, "kit-timer");
                thread.setDaemon(true);
                return thread;
              });
      t.setRemoveOnCancelPolicy(true);
      timer = t;
    }
    return timer;
  }

  record StopSignal(String name, int number) {}

  /**
   * SIGTERM and SIGINT call {@code handler} (no shutdown hooks, no default exit). Through
   * sun.misc.Signal (jdk.unsupported, the JDK's only way to handle them), reached reflectively:
   * javac's "internal proprietary API" warning cannot be suppressed, and lint.sh fails on it.
   */
  static void onStopSignals(Consumer<StopSignal> handler) {
    try {
      Class<?> signalType = Class.forName("sun.misc.Signal");
      Class<?> handlerType = Class.forName("sun.misc.SignalHandler");
      Method handle = signalType.getMethod("handle", signalType, handlerType);
      Method number = signalType.getMethod("getNumber");
      for (String name : new String[] {"TERM", "INT"}) {
        InvocationHandler onSignal =
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "handle" -> {
                    handler.accept(new StopSignal(name, (Integer) number.invoke(args[0])));
                    yield null;
                  }
                  case "hashCode" -> System.identityHashCode(proxy);
                  case "equals" -> proxy == args[0];
                  default -> "kit stop-signal handler for SIG" + name;
                };
        Object signalHandler =
            Proxy.newProxyInstance(
                Main.class.getClassLoader(), new Class<?>[] {handlerType}, onSignal);
        handle.invoke(
            null, signalType.getConstructor(String.class).newInstance(name), signalHandler);
      }
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot handle SIGTERM/SIGINT: " + e, e);
    }
  }
}
