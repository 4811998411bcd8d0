package kit.grpcjava;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code java -jar kit-grpc-java.jar client|server --config '<JSON>'}: the kit's grpc-java
 * client and server (docs/process-protocol.md).
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
    Protocol.init();
    // grpc-java and Netty log through java.util.logging to stderr: warnings and worse only.
    GRPC_LOG.setLevel(Level.WARNING);
    NETTY_LOG.setLevel(Level.WARNING);
    SERVER_HANDLER_LOG.setLevel(Level.SEVERE);
    String role = args.length > 0 ? args[0] : "";
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
                STACK + ": usage: java -jar kit-grpc-java.jar client|server --config '<JSON>'",
                Protocol.BAD_CONFIG);
      }
    } catch (Throwable t) {
      Protocol.die(STACK + " " + role + ": " + t, Protocol.CANNOT_START);
    }
  }

  /** The grpc-java linked, read from the library (GrpcUtil.IMPLEMENTATION_VERSION). */
  static String version() {
    return io.grpc.internal.GrpcUtil.IMPLEMENTATION_VERSION;
  }

  static String nettyVersion() {
    var versions = io.netty.util.Version.identify(Main.class.getClassLoader());
    var codec = versions.get("netty-codec-http2");
    return codec != null ? codec.artifactVersion() : "?";
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

  /** SIGTERM and SIGINT call {@code handler} (no shutdown hooks, no default exit). */
  @SuppressWarnings("removal")
  static void onStopSignals(Consumer<StopSignal> handler) {
    for (String name : new String[] {"TERM", "INT"}) {
      sun.misc.Signal.handle(
          new sun.misc.Signal(name),
          signal -> handler.accept(new StopSignal(name, signal.getNumber())));
    }
  }
}
