package kit.grpcjava;

import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.ChannelOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import kit.worker.Worker;

/**
 * The named options (a job's {@code options}): each name, the kind of value it takes, and the
 * grpc-java call it makes (and how that call reads in the notes). No ranges: the kit checked the
 * values (kit/plan/stack_options.py); grpc-java's own checks (a builder's IllegalArgumentException)
 * still refuse a value it cannot take. Applied in order, after what the job itself sets.
 */
final class Options {
  private Options() {}

  /** The kind of value a knob takes: one variant of Option.value. */
  enum Takes {
    INT("an integer (int)"),
    FLAG("a flag (flag)"),
    RATIO("a ratio (ratio)");

    final String words;

    Takes(String words) {
      this.words = words;
    }
  }

  interface Apply<B> {
    /** Applies the value; what the call was, for the notes ("" to leave it out). */
    String apply(B builder, Worker.Option value);
  }

  record Knob<B>(Takes takes, Apply<B> apply) {}

  /** The client's options (NettyChannelBuilder), by name (sorted: the refusal lists them). */
  static final Map<String, Knob<NettyChannelBuilder>> CLIENT = new TreeMap<>();
  /** The server's options (NettyServerBuilder). */
  static final Map<String, Knob<NettyServerBuilder>> SERVER = new TreeMap<>();

  /** Netty's DefaultHttp2LocalFlowController.windowUpdateRatio: set by NettyFlow, not a builder
   * method (grpc-java fixes it at 0.5). */
  static final String WINDOW_UPDATE_RATIO = "windowUpdateRatio";
  /** The NIO event loops InternalNettyChannelBuilder.useNioTransport would pick (EventLoops). */
  static final String USE_NIO = "useNioTransport";

  /** A builder call taking an int, a long with a unit, a flag (their results are ignored). */
  interface IntCall<B> {
    void call(B builder, int value);
  }

  interface MillisCall<B> {
    void call(B builder, long value, TimeUnit unit);
  }

  interface FlagCall<B> {
    void call(B builder, boolean value);
  }

  /** {@code note}: the call as the notes say it, # standing for the value. */
  private static <B> Knob<B> ints(String note, IntCall<B> set) {
    return new Knob<>(Takes.INT, (b, o) -> {
      set.call(b, Math.toIntExact(o.getInt()));
      return note.replace("#", Long.toString(o.getInt()));
    });
  }

  private static <B> Knob<B> millis(String call, MillisCall<B> set, long floorMs) {
    return new Knob<>(Takes.INT, (b, o) -> {
      set.call(b, o.getInt(), TimeUnit.MILLISECONDS);
      return call + "(" + o.getInt() + " ms)" + clamped(o.getInt(), floorMs);
    });
  }

  private static <B> Knob<B> flag(String call, FlagCall<B> set) {
    return new Knob<>(Takes.FLAG, (b, o) -> {
      set.call(b, o.getFlag());
      return call + "(" + o.getFlag() + ")";
    });
  }

  private static void both(String name, Knob<NettyChannelBuilder> client,
      Knob<NettyServerBuilder> server) {
    CLIENT.put(name, client);
    SERVER.put(name, server);
  }

  static {
    String off = "flowControlWindow(#): auto flow control off";
    both("flowControlWindow", ints(off, NettyChannelBuilder::flowControlWindow),
        ints(off, NettyServerBuilder::flowControlWindow));
    String on = "initialFlowControlWindow(#): auto flow control on, from #";
    both("initialFlowControlWindow", ints(on, NettyChannelBuilder::initialFlowControlWindow),
        ints(on, NettyServerBuilder::initialFlowControlWindow));
    both("maxInboundMessageSize",
        ints("maxInboundMessageSize(#)", NettyChannelBuilder::maxInboundMessageSize),
        ints("maxInboundMessageSize(#)", NettyServerBuilder::maxInboundMessageSize));
    both("maxInboundMetadataSize",
        ints("maxInboundMetadataSize(#)", NettyChannelBuilder::maxInboundMetadataSize),
        ints("maxInboundMetadataSize(#)", NettyServerBuilder::maxInboundMetadataSize));
    both("SO_RCVBUF",
        ints("withOption(SO_RCVBUF, #)", (b, v) -> b.withOption(ChannelOption.SO_RCVBUF, v)),
        ints("withChildOption(SO_RCVBUF, #)",
            (b, v) -> b.withChildOption(ChannelOption.SO_RCVBUF, v)));
    both("SO_SNDBUF",
        ints("withOption(SO_SNDBUF, #)", (b, v) -> b.withOption(ChannelOption.SO_SNDBUF, v)),
        ints("withChildOption(SO_SNDBUF, #)",
            (b, v) -> b.withChildOption(ChannelOption.SO_SNDBUF, v)));
    // Not builder calls: read by check() (NettyFlow, EventLoops), said by Notes.
    both(USE_NIO, new Knob<>(Takes.INT, (b, o) -> ""), new Knob<>(Takes.INT, (b, o) -> ""));
    both(WINDOW_UPDATE_RATIO,
        new Knob<>(Takes.RATIO, (b, o) -> ""), new Knob<>(Takes.RATIO, (b, o) -> ""));
    // Keepalive: grpc-java raises a time under 10 s to 10 s and a timeout under 10 ms to 10 ms
    // (KeepAliveManager.clampKeepAliveTimeInNanos / clampKeepAliveTimeoutInNanos).
    both("keepAliveTime",
        millis("keepAliveTime", NettyChannelBuilder::keepAliveTime, 10_000),
        millis("keepAliveTime", NettyServerBuilder::keepAliveTime, 10_000));
    both("keepAliveTimeout",
        millis("keepAliveTimeout", NettyChannelBuilder::keepAliveTimeout, 10),
        millis("keepAliveTimeout", NettyServerBuilder::keepAliveTimeout, 10));
    CLIENT.put("keepAliveWithoutCalls",
        flag("keepAliveWithoutCalls", NettyChannelBuilder::keepAliveWithoutCalls));
    SERVER.put("permitKeepAliveTime",
        millis("permitKeepAliveTime", NettyServerBuilder::permitKeepAliveTime, 0));
    SERVER.put("permitKeepAliveWithoutCalls",
        flag("permitKeepAliveWithoutCalls", NettyServerBuilder::permitKeepAliveWithoutCalls));
    SERVER.put("maxConcurrentCallsPerConnection", ints("maxConcurrentCallsPerConnection(#)",
        NettyServerBuilder::maxConcurrentCallsPerConnection));
  }

  private static String clamped(long ms, long floorMs) {
    return ms < floorMs ? " (grpc-java raises it to " + floorMs + " ms)" : "";
  }

  /** A job's options, checked: the names and value kinds, and that grpc-java takes the values
   * (each applied once to a scratch builder); the two that are not builder calls read out. */
  record Checked(List<Worker.Option> options, Float windowUpdateRatio, boolean nio) {}

  static <B> Checked check(
      Map<String, Knob<B>> table, List<Worker.Option> options, B scratch) {
    Float ratio = null;
    boolean nio = false;
    for (Worker.Option option : options) {
      Knob<B> knob = table.get(option.getName());
      if (knob == null) {
        throw Protocol.fail(
            Protocol.BAD_JOB,
            "option '" + option.getName() + "' is not one of " + String.join(", ", table.keySet()));
      }
      Takes given = takes(option);
      if (given != knob.takes()) {
        throw Protocol.fail(
            Protocol.BAD_JOB,
            "option " + option.getName() + " takes " + knob.takes().words + ", not "
                + valueText(option));
      }
      switch (option.getName()) {
        case WINDOW_UPDATE_RATIO -> ratio = (float) option.getRatio();
        case USE_NIO -> nio = option.getInt() != 0;
        default -> apply(knob, option, scratch);
      }
    }
    return new Checked(List.copyOf(options), ratio, nio);
  }

  /** Apply checked options in order; what each call was, for the notes. */
  static <B> List<String> apply(Map<String, Knob<B>> table, Checked checked, B builder) {
    List<String> applied = new ArrayList<>();
    for (Worker.Option option : checked.options()) {
      String what = apply(table.get(option.getName()), option, builder);
      if (!what.isEmpty()) {
        applied.add(what);
      }
    }
    return applied;
  }

  private static <B> String apply(Knob<B> knob, Worker.Option option, B builder) {
    try {
      return knob.apply().apply(builder, option);
    } catch (ArithmeticException e) {
      throw Protocol.fail(
          Protocol.BAD_JOB,
          "option " + option.getName() + "=" + option.getInt() + ": grpc-java takes an int here");
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw Protocol.fail(
          Protocol.BAD_JOB, "option " + option.getName() + " (" + valueText(option)
              + "): grpc-java refuses it: " + e.getMessage());
    }
  }

  private static Takes takes(Worker.Option option) {
    return switch (option.getValueCase()) {
      case INT -> Takes.INT;
      case FLAG -> Takes.FLAG;
      case RATIO -> Takes.RATIO;
      default -> null; // text, or no value: no knob here takes it
    };
  }

  static String valueText(Worker.Option option) {
    return switch (option.getValueCase()) {
      case INT -> "int " + option.getInt();
      case FLAG -> "flag " + option.getFlag();
      case RATIO -> "ratio " + option.getRatio();
      case TEXT -> "text '" + option.getText() + "'";
      default -> "no value";
    };
  }
}
