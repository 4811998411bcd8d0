package kit.grpcjava;

import java.util.ArrayList;
import java.util.List;
import kit.worker.Worker;

/** The result's notes: what was applied, in grpc-java's terms. */
final class Notes {
  private Notes() {}

  static final int DEFAULT_WINDOW = 1024 * 1024; // NettyChannelBuilder/NettyServerBuilder
  static final String BDP_MAX = "8 MiB"; // AbstractNettyHandler.FlowControlPinger.MAX_WINDOW_SIZE

  static boolean clientAutoFlowControlDefault() {
    // NettyChannelBuilder's DEFAULT_AUTO_FLOW_CONTROL, read the same way.
    String env = System.getenv("GRPC_EXPERIMENTAL_AUTOFLOWCONTROL");
    return env == null || Boolean.parseBoolean(env);
  }

  static String transport(boolean nio) {
    return nio || !io.netty.channel.epoll.Epoll.isAvailable() ? "NIO" : "epoll"; // as EventLoops
  }

  private static String head(boolean nio) {
    return Main.STACK + " " + Main.version() + " (Netty " + Main.nettyVersion() + ", "
        + transport(nio) + "): ";
  }

  private static boolean isWindowCall(String applied) {
    return applied.startsWith("flowControlWindow(")
        || applied.startsWith("initialFlowControlWindow(");
  }

  private static String windowOption(List<String> applied) {
    String last = null;
    for (String a : applied) {
      if (isWindowCall(a)) {
        last = a;
      }
    }
    return last;
  }

  private static List<String> others(List<String> applied, Float ratio) {
    List<String> rest = new ArrayList<>();
    if (ratio != null) {
      rest.add(ratioText(ratio));
    }
    for (String a : applied) {
      if (!isWindowCall(a)) {
        rest.add(a);
      }
    }
    return rest;
  }

  /** The client's notes: its windows (and who set them), then its options and credit rule. */
  static List<String> client(
      Worker.ClientJob job, List<String> applied, Integer connTarget, Float ratio, boolean nio) {
    Worker.Windows w = job.getWindows();
    String text;
    if (w.getStatic()) {
      long stream = w.getStreamBytes();
      text = "flowControlWindow(" + stream + "): stream window " + stream
          + ", BDP auto flow control off; ";
      if (connTarget != null && connTarget != stream) {
        text += "connection window " + connTarget + " set on Netty's flow controller"
            + " (grpc-java alone: " + stream + ", the stream window)";
      } else {
        text += "connection window " + stream + " (grpc-java's own: it follows flowControlWindow)";
      }
    } else {
      String option = windowOption(applied);
      if (option != null) {
        text = option + "; the connection window follows the stream window";
      } else if (clientAutoFlowControlDefault()) {
        text = "as shipped: BDP auto flow control on; stream and connection windows start at "
            + DEFAULT_WINDOW + " and grow to at most " + BDP_MAX + ", the connection window equal"
            + " to the stream window";
      } else {
        text = "as shipped, with GRPC_EXPERIMENTAL_AUTOFLOWCONTROL=false: auto flow control off,"
            + " stream and connection windows " + DEFAULT_WINDOW;
      }
    }
    List<String> notes = new ArrayList<>();
    notes.add(head(nio) + text);
    List<String> rest = others(applied, ratio);
    String second = rest.isEmpty() ? "" : "options: " + String.join(", ", rest);
    if (ratio == null && w.getStatic() && !job.hasUpload()) {
      second += (second.isEmpty() ? "" : "; ") + HALF_WINDOW;
    }
    if (!second.isEmpty()) {
      notes.add(second);
    }
    return notes;
  }

  /** What a reader of a static-window result must know (measured: 0.41-0.54 x window/RTT). */
  static final String HALF_WINDOW =
      "Netty returns credit once half a window is consumed (windowUpdateRatio 0.5, grpc-java's"
          + " fixed choice): with 16 KiB frames a static window moves about half of it per RTT";

  static String ratioText(float ratio) {
    return "windowUpdateRatio " + ratio + " set on Netty's flow controller (grpc-java's: 0.5):"
        + " a WINDOW_UPDATE once 1 - " + ratio + " of a window has been consumed";
  }

  /** Slow readers: how they read, in grpc-java's terms. */
  static String slowStreams(Worker.Download download, int messageBytes) {
    int n = download.getSlowStreams();
    double rate = download.getPacing().getRateBytesS();
    return (n == 1 ? "stream 1" : "streams 1.." + n) + " read one message per "
        + Math.round(messageBytes / rate * 1000) + " ms (" + num(rate * 8 / 1e6)
        + " Mbit/s): request(1) once due; grpc-java holds what arrives meanwhile and returns its"
        + " credit only as messages are read";
  }

  /** The server's line on stderr: its windows, limits and options. */
  static String server(Worker.ServerJob job, List<String> applied, Integer connTarget,
      Float ratio, boolean nio) {
    Worker.Windows w = job.getWindows();
    String text;
    if (w.getStatic()) {
      text = "flowControlWindow(" + w.getStreamBytes() + "): stream window "
          + w.getStreamBytes() + ", auto flow control (BDP) off; connection window "
          + (connTarget != null ? connTarget + " set on Netty's flow controller"
              : w.getStreamBytes() + " (it follows flowControlWindow)");
    } else {
      String option = windowOption(applied);
      text = option != null
          ? option + "; the connection window follows the stream window"
          : "as shipped: BDP auto flow control on; stream and connection windows start at "
              + DEFAULT_WINDOW + " and grow to at most " + BDP_MAX;
    }
    text += "; maxConcurrentCallsPerConnection(" + job.getMaxConcurrentStreams() + ")"
        + "; downloads hold at most " + job.getDownloadBudgetBytes() + " bytes together"
        + " (RESOURCE_EXHAUSTED beyond), messages up to " + job.getSharedMessageMaxBytes()
        + " bytes shared (cache " + job.getMessageCacheBytes() + " bytes)";
    List<String> rest = others(applied, ratio);
    return head(nio) + text + (rest.isEmpty() ? "" : "; options: " + String.join(", ", rest));
  }

  static String num(double v) {
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return Double.toString(v);
  }
}
