package kit.grpcjava;

import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.ChannelOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The named options (ClientConfig / ServerConfig channel_options): grpc-java's own builder
 * methods that matter for flow control and throughput, by their grpc-java names. An unknown
 * key, or a value of the wrong type or range, is a bad config (exit 2).
 */
final class Options {
  private Options() {}

  /** One option: its name, what it takes, and how it is applied to the builder. */
  record Knob<B>(String name, String takes, long low, long high, Apply<B> apply) {}

  interface Apply<B> {
    String apply(B builder, long value);
  }

  /** The client's options (NettyChannelBuilder). */
  static final Map<String, Knob<NettyChannelBuilder>> CLIENT = new LinkedHashMap<>();
  /** The server's options (NettyServerBuilder). */
  static final Map<String, Knob<NettyServerBuilder>> SERVER = new LinkedHashMap<>();

  private static final long INT_MAX = Integer.MAX_VALUE;

  private static <B> void add(Map<String, Knob<B>> table, Knob<B> knob) {
    table.put(knob.name(), knob);
  }

  static {
    add(CLIENT, new Knob<>("flowControlWindow", "bytes", 1, INT_MAX, (b, v) -> {
      b.flowControlWindow((int) v);
      return "flowControlWindow(" + v + "): auto flow control off";
    }));
    add(CLIENT, new Knob<>("initialFlowControlWindow", "bytes", 1, INT_MAX, (b, v) -> {
      b.initialFlowControlWindow((int) v);
      return "initialFlowControlWindow(" + v + "): auto flow control on, from " + v;
    }));
    add(CLIENT, new Knob<>("maxInboundMessageSize", "bytes", 1, INT_MAX, (b, v) -> {
      b.maxInboundMessageSize((int) v);
      return "maxInboundMessageSize(" + v + ")";
    }));
    add(CLIENT, new Knob<>("maxInboundMetadataSize", "bytes", 1, INT_MAX, (b, v) -> {
      b.maxInboundMetadataSize((int) v);
      return "maxInboundMetadataSize(" + v + ")";
    }));
    add(CLIENT, new Knob<>("keepAliveTime", "milliseconds", 1, 1L << 40, (b, v) -> {
      b.keepAliveTime(v, TimeUnit.MILLISECONDS);
      return "keepAliveTime(" + v + " ms)" + (v < 10_000 ? " (grpc-java raises it to 10 s)" : "");
    }));
    add(CLIENT, new Knob<>("keepAliveTimeout", "milliseconds", 1, 1L << 40, (b, v) -> {
      b.keepAliveTimeout(v, TimeUnit.MILLISECONDS);
      return "keepAliveTimeout(" + v + " ms)";
    }));
    add(CLIENT, new Knob<>("SO_RCVBUF", "bytes", 1, INT_MAX, (b, v) -> {
      b.withOption(ChannelOption.SO_RCVBUF, (int) v);
      return "withOption(SO_RCVBUF, " + v + ")";
    }));
    add(CLIENT, new Knob<>("SO_SNDBUF", "bytes", 1, INT_MAX, (b, v) -> {
      b.withOption(ChannelOption.SO_SNDBUF, (int) v);
      return "withOption(SO_SNDBUF, " + v + ")";
    }));
    add(CLIENT, new Knob<>("useNioTransport", "0 or 1", 0, 1, (b, v) -> {
      if (v == 0) {
        return "";
      }
      return "useNioTransport (NIO, not epoll)"; // the event loops are made for it (EventLoops)
    }));

    add(SERVER, new Knob<>("flowControlWindow", "bytes", 1, INT_MAX, (b, v) -> {
      b.flowControlWindow((int) v);
      return "flowControlWindow(" + v + "): auto flow control off";
    }));
    add(SERVER, new Knob<>("initialFlowControlWindow", "bytes", 1, INT_MAX, (b, v) -> {
      b.initialFlowControlWindow((int) v);
      return "initialFlowControlWindow(" + v + "): auto flow control on, from " + v;
    }));
    add(SERVER, new Knob<>("maxConcurrentCallsPerConnection", "calls", 1, INT_MAX, (b, v) -> {
      b.maxConcurrentCallsPerConnection((int) v);
      return "maxConcurrentCallsPerConnection(" + v + ")";
    }));
    add(SERVER, new Knob<>("maxInboundMessageSize", "bytes", 1, INT_MAX, (b, v) -> {
      b.maxInboundMessageSize((int) v);
      return "maxInboundMessageSize(" + v + ")";
    }));
    add(SERVER, new Knob<>("maxInboundMetadataSize", "bytes", 1, INT_MAX, (b, v) -> {
      b.maxInboundMetadataSize((int) v);
      return "maxInboundMetadataSize(" + v + ")";
    }));
    add(SERVER, new Knob<>("SO_RCVBUF", "bytes", 1, INT_MAX, (b, v) -> {
      b.withChildOption(ChannelOption.SO_RCVBUF, (int) v);
      return "withChildOption(SO_RCVBUF, " + v + ")";
    }));
    add(SERVER, new Knob<>("SO_SNDBUF", "bytes", 1, INT_MAX, (b, v) -> {
      b.withChildOption(ChannelOption.SO_SNDBUF, (int) v);
      return "withChildOption(SO_SNDBUF, " + v + ")";
    }));
    add(SERVER, new Knob<>("useNioTransport", "0 or 1", 0, 1, (b, v) -> {
      if (v == 0) {
        return "";
      }
      return "useNioTransport (NIO, not epoll)"; // the event loops are made for it (EventLoops)
    }));
  }

  /** The window knobs: they are the window mode's in static mode. */
  static final List<String> WINDOW_KNOBS = List.of("flowControlWindow", "initialFlowControlWindow");

  /** Netty's DefaultHttp2LocalFlowController.windowUpdateRatio: set by NettyFlow, not a builder
   * method (grpc-java fixes it at 0.5); a string, for the kit's options are integers or text. */
  static final String WINDOW_UPDATE_RATIO = "windowUpdateRatio";

  /** The checked options: builder values (later ones winning, as the kit's grpcio programs
   * merge them) and Netty's window-update ratio, if given. */
  record Checked(Map<String, Long> values, Float windowUpdateRatio) {}

  static <B> Checked check(
      Map<String, Knob<B>> table, List<Config.Option> options, String windowMode) {
    Map<String, Long> values = new LinkedHashMap<>();
    Float ratio = null;
    for (Config.Option option : options) {
      if (option.key().equals(WINDOW_UPDATE_RATIO)) {
        ratio = ratio(option);
        continue;
      }
      Knob<B> knob = table.get(option.key());
      if (knob == null) {
        throw Config.usage(
            "option '" + option.key() + "' is not one of " + String.join(", ", table.keySet())
                + ", " + WINDOW_UPDATE_RATIO);
      }
      long value;
      try {
        if (!option.isInt()) {
          throw new NumberFormatException();
        }
        value = Long.parseLong(option.value().getAsString());
      } catch (NumberFormatException e) {
        throw Config.usage(
            "option " + knob.name() + " takes an integer (" + knob.takes() + ", "
                + knob.low() + ".." + knob.high() + "), not " + Config.repr(option.value()));
      }
      if (value < knob.low() || value > knob.high()) {
        throw Config.usage(
            "option " + knob.name() + "=" + value + " is outside " + knob.low() + ".."
                + knob.high() + " (" + knob.takes() + ")");
      }
      if (windowMode.equals("static") && WINDOW_KNOBS.contains(knob.name())) {
        throw Config.usage(
            "option " + knob.name() + " sets the window itself; a static window is "
                + "flowControlWindow(window_bytes) already (use window mode dynamic with "
                + knob.name() + ")");
      }
      values.remove(knob.name());
      values.put(knob.name(), value);
    }
    return new Checked(values, ratio);
  }

  private static Float ratio(Config.Option option) {
    String text = option.value().getAsString().trim();
    float value;
    try {
      if (!option.value().isString()) {
        throw new NumberFormatException();
      }
      value = Float.parseFloat(text);
    } catch (NumberFormatException e) {
      throw Config.usage(
          "option " + WINDOW_UPDATE_RATIO + " takes a ratio in (0, 1) as text, e.g. \"0.75\", not "
              + Config.repr(option.value()));
    }
    if (!(value > 0 && value < 1)) {
      throw Config.usage(
          "option " + WINDOW_UPDATE_RATIO + "=" + text + " is outside (0, 1) (Netty sends a "
              + "WINDOW_UPDATE once 1 - ratio of a window has been consumed; grpc-java's is 0.5)");
    }
    return value;
  }

  /** Apply checked values; what each call was, for the notes. */
  static <B> List<String> apply(Map<String, Knob<B>> table, Map<String, Long> values, B builder) {
    List<String> applied = new ArrayList<>();
    for (Map.Entry<String, Long> e : values.entrySet()) {
      String what = table.get(e.getKey()).apply().apply(builder, e.getValue());
      if (!what.isEmpty()) {
        applied.add(what);
      }
    }
    return applied;
  }
}
