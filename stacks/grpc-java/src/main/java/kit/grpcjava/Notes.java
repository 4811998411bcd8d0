package kit.grpcjava;

import java.util.ArrayList;
import java.util.List;

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

  static String transport(List<String> applied) {
    boolean nio =
        applied.stream().anyMatch(a -> a.startsWith("useNioTransport"))
            || !io.netty.channel.epoll.Epoll.isAvailable(); // as EventLoops chooses
    return nio ? "NIO" : "epoll";
  }

  private static String head(List<String> applied) {
    return Main.STACK + " " + Main.version() + " (Netty " + Main.nettyVersion() + ", "
        + transport(applied) + "): ";
  }

  private static String windowOption(List<String> applied) {
    String last = null;
    for (String a : applied) {
      if (a.startsWith("flowControlWindow(") || a.startsWith("initialFlowControlWindow(")) {
        last = a;
      }
    }
    return last;
  }

  private static List<String> others(List<String> applied) {
    List<String> rest = new ArrayList<>();
    for (String a : applied) {
      if (!(a.startsWith("flowControlWindow(") || a.startsWith("initialFlowControlWindow(")
          || a.startsWith("useNioTransport"))) {
        rest.add(a);
      }
    }
    return rest;
  }

  static List<String> client(
      Config.Trial trial, List<String> applied, Integer connTarget, Float ratio) {
    Config.ClientConfig c = trial.client();
    String text;
    if (c.windowMode().equals("static")) {
      long w = c.windowBytes();
      text = "flowControlWindow(" + w + "): stream window " + w + ", BDP auto flow control off; ";
      if (connTarget != null && connTarget != w) {
        text += "connection window " + connTarget + " set on Netty's flow controller"
            + " (grpc-java alone: " + w + ", the stream window)";
      } else {
        text += "connection window " + w + " (grpc-java's own: it follows flowControlWindow)";
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
    notes.add(head(applied) + text);
    List<String> rest = others(applied);
    if (ratio != null) {
      rest.add(0, ratioText(ratio));
    }
    String second = rest.isEmpty() ? "" : "options: " + String.join(", ", rest);
    if (ratio == null && c.windowMode().equals("static")
        && !trial.workload().kind().equals("upload")) {
      second += (second.isEmpty() ? "" : "; ") + HALF_WINDOW;
    }
    if (trial.workload().kind().equals("upload")) {
      second += (second.isEmpty() ? "" : "; ")
          + "an upload is governed by the server's receive window (" + trial.server().kind() + " "
          + trial.server().windowMode()
          + (trial.server().windowBytes() != null ? " " + trial.server().windowBytes() : "") + ")";
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

  static String server(Config.ServerConfig config, List<String> applied, Float ratio) {
    String text;
    if (config.windowMode().equals("static")) {
      long w = config.windowBytes();
      text = "flowControlWindow(" + w + "): stream and connection windows " + w
          + ", auto flow control (BDP) off";
    } else {
      String option = windowOption(applied);
      text = option != null
          ? option + "; the connection window follows the stream window"
          : "as shipped: BDP auto flow control on; stream and connection windows start at "
              + DEFAULT_WINDOW + " and grow to at most " + BDP_MAX;
    }
    List<String> rest = others(applied);
    if (ratio != null) {
      rest.add(0, ratioText(ratio));
    }
    return head(applied) + text + (rest.isEmpty() ? "" : "; options: " + String.join(", ", rest));
  }
}
