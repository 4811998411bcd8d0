package kit.grpcjava;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.JsonParser;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.IOException;
import java.io.StringReader;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The kit's config records (kit/plan/trial.py, kit/plan/processes.py), decoded from JSON as
 * strictly as kit.results.codec does it: an unknown or missing field, a value of the wrong type
 * and a value out of range are each a bad config (exit 2) naming where it is.
 */
final class Config {
  private Config() {}

  static final long HTTP2_MAX_WINDOW = (1L << 31) - 1;
  static final int MAX_STREAMS = 1024;
  static final int MIB = 1024 * 1024;

  static final List<String> CLIENT_KINDS = List.of("grpcio", "h2", "grpc-go", "grpc-java", "grpc-js");
  static final List<String> STACK_KINDS = List.of("grpc-go", "grpc-java", "grpc-js");
  static final List<String> SERVER_KINDS = List.of("grpcio", "grpc-go", "grpc-java", "grpc-js");
  static final List<String> WINDOW_MODES = List.of("dynamic", "static", "bdp-off", "pool");
  static final List<String> CREDIT_POLICIES = List.of("immediate", "half", "quarter");
  static final List<String> CONN_CREDITS = List.of("receipt", "read");
  static final List<String> WORKLOAD_KINDS = List.of("download", "unary", "upload");

  // --- the records -----------------------------------------------------------------------------

  record Option(String key, JsonPrimitive value) {
    boolean isInt() {
      return value.isNumber();
    }

    String text() {
      return key + "=" + (value.isString() ? value.getAsString() : value.toString());
    }
  }

  /** One step of a down rate that changes over time (0 bit/s: an outage). */
  record RateStep(double rateBitsS, double durationMs) {}

  record Link(
      double delayUpMs,
      double delayDownMs,
      Double rateUpBitsS,
      Double rateDownBitsS,
      double jitterMs,
      long seed,
      // The packet link's fields and the rate steps: decoded and checked as the kit's Link
      // checks them, never acted on here (the delay line or the packet forwarder applies
      // the link; the client only dials it).
      String kind,
      double loss,
      double lossBurstLen,
      Long queueBytes,
      long mtu,
      String congestion,
      List<RateStep> rateSteps) {
    double rttMs() {
      return delayUpMs + delayDownMs;
    }
  }

  record ClientConfig(
      String kind,
      String windowMode,
      Long windowBytes,
      Long connWindowBytes,
      String creditPolicy,
      Long maxFrameBytes,
      List<Option> channelOptions,
      int connections,
      String connCredit,
      Long poolBytes) {}

  record ServerConfig(String kind, String windowMode, Long windowBytes, List<Option> channelOptions) {}

  record Workload(
      String kind,
      int messageBytes,
      int streams,
      Double durationS,
      Long bytesPerStream,
      int calls,
      boolean warmup,
      double timeoutS,
      int slowStreams,
      Double readRateBitsS) {
    double timedDurationS(double rttMs) {
      return durationS != null ? durationS : Math.max(2.0, 20 * rttMs / 1000.0);
    }

    /** ceil(bytes / message_bytes) messages per stream, or null for a timed run. */
    Long messagesPerStream() {
      if (bytesPerStream == null) {
        return null;
      }
      return Math.max(1, -Math.floorDiv(-bytesPerStream, (long) messageBytes));
    }
  }

  record Trial(Link link, ClientConfig client, ServerConfig server, Workload workload, String label) {
    int streamsPerConnection() {
      return Math.max(1, -Math.floorDiv(-workload.streams(), client.connections()));
    }
  }

  record ClientProcess(String targetHost, int targetPort, Trial trial) {}

  record ServerProcess(ServerConfig config, String listenHost, int listenPort, int workers) {}

  // --- argv and JSON ---------------------------------------------------------------------------

  /** The JSON text of {@code --config JSON} or {@code --config=JSON}. */
  static JsonElement parseArgv(String[] args, String record) {
    String text;
    if (args.length == 1 && args[0].startsWith("--config=")) {
      text = args[0].substring("--config=".length());
    } else if (args.length == 2 && args[0].equals("--config")) {
      text = args[1];
    } else {
      throw usage(
          "usage: --config '<" + record + " as JSON>' (got " + args.length + " argument(s))");
    }
    return parseJson(text, "--config");
  }

  /** One JSON value (--config's, or a worker's line); {@code source} names it in the error. */
  static JsonElement parseJson(String text, String source) {
    try {
      JsonReader reader = new JsonReader(new StringReader(text));
      reader.setStrictness(Strictness.STRICT);
      // parseReader keeps a STRICT reader strict (it relaxes only the legacy default).
      JsonElement value = JsonParser.parseReader(reader);
      if (reader.peek() != JsonToken.END_DOCUMENT) {
        throw new IOException("extra data after the JSON value");
      }
      return value;
    } catch (IOException | RuntimeException e) {
      String why = String.valueOf(e.getMessage());
      int at = why.indexOf("at line ");
      if (at >= 0) {
        why = why.substring(at).split("\\s+See |\n")[0];
      }
      throw usage(source + ": not JSON (" + why + ")");
    }
  }

  static Protocol.Failure usage(String message) {
    return Protocol.fail(Protocol.BAD_CONFIG, message);
  }

  static void require(boolean ok, String message) {
    if (!ok) {
      throw usage(message);
    }
  }

  /** One JSON object being decoded as a record: field checks, typed getters, its path. */
  static final class Obj {
    final String where;
    final JsonObject json;

    Obj(JsonElement element, String where, String... fields) {
      this.where = where;
      if (element == null || !element.isJsonObject()) {
        throw usage(where + ": a JSON object, not " + typeName(element));
      }
      this.json = element.getAsJsonObject();
      Set<String> unknown = new TreeSet<>(json.keySet());
      unknown.removeAll(List.of(fields));
      if (!unknown.isEmpty()) {
        throw usage(where + ": unknown field(s) " + String.join(", ", unknown));
      }
    }

    void requirePresent(String... fields) {
      List<String> missing = new ArrayList<>();
      for (String f : fields) {
        if (!json.has(f)) {
          missing.add(f);
        }
      }
      if (!missing.isEmpty()) {
        throw usage(where + ": missing field(s) " + String.join(", ", missing));
      }
    }

    String path(String field) {
      return where + "." + field;
    }

    boolean has(String field) {
      return json.has(field);
    }

    JsonElement get(String field) {
      return json.get(field);
    }

    boolean isNull(String field) {
      return json.has(field) && json.get(field).isJsonNull();
    }

    String str(String field, String fallback) {
      if (!has(field)) {
        return fallback;
      }
      JsonElement e = get(field);
      if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isString()) {
        return e.getAsString();
      }
      throw usage(path(field) + ": " + repr(e) + " is not a string");
    }

    String literal(String field, String fallback, List<String> choices) {
      if (!has(field)) {
        return fallback;
      }
      JsonElement e = get(field);
      if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isString()) {
        String s = e.getAsString();
        if (choices.contains(s)) {
          return s;
        }
      }
      List<String> quoted = new ArrayList<>();
      for (String c : choices) {
        quoted.add("'" + c + "'");
      }
      throw usage(path(field) + ": " + repr(e) + " is not one of " + String.join(", ", quoted));
    }

    String optLiteral(String field, List<String> choices) {
      return isNull(field) || !has(field) ? null : literal(field, null, choices);
    }

    BigInteger bigInt(String field) {
      return integer(get(field), path(field));
    }

    long lng(String field, long fallback) {
      if (!has(field)) {
        return fallback;
      }
      return clampLong(bigInt(field));
    }

    Long optLong(String field) {
      if (!has(field) || isNull(field)) {
        return null;
      }
      return clampLong(bigInt(field));
    }

    double dbl(String field, double fallback) {
      if (!has(field)) {
        return fallback;
      }
      return number(get(field), path(field));
    }

    Double optDouble(String field) {
      if (!has(field) || isNull(field)) {
        return null;
      }
      return number(get(field), path(field));
    }

    boolean bool(String field, boolean fallback) {
      if (!has(field)) {
        return fallback;
      }
      JsonElement e = get(field);
      if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isBoolean()) {
        return e.getAsBoolean();
      }
      throw usage(path(field) + ": " + repr(e) + " is not true or false");
    }

    List<Option> options(String field) {
      List<Option> out = new ArrayList<>();
      if (!has(field)) {
        return out;
      }
      JsonElement e = get(field);
      if (!e.isJsonArray()) {
        throw usage(path(field) + ": a JSON array, not " + typeName(e));
      }
      JsonArray items = e.getAsJsonArray();
      for (int i = 0; i < items.size(); i++) {
        String at = path(field) + "[" + i + "]";
        JsonElement item = items.get(i);
        if (!item.isJsonArray()) {
          throw usage(at + ": a JSON array, not " + typeName(item));
        }
        JsonArray pair = item.getAsJsonArray();
        if (pair.size() != 2) {
          throw usage(at + ": an array of 2 items, not " + pair.size());
        }
        JsonElement key = pair.get(0);
        if (!(key.isJsonPrimitive() && key.getAsJsonPrimitive().isString())) {
          throw usage(at + "[0]: " + repr(key) + " is not a string");
        }
        JsonElement value = pair.get(1);
        boolean ok = false;
        if (value.isJsonPrimitive()) {
          JsonPrimitive p = value.getAsJsonPrimitive();
          ok = p.isString() || (p.isNumber() && isIntegerText(p.getAsString()));
        }
        if (!ok) {
          throw usage(at + "[1]: " + repr(value) + " fits no allowed type");
        }
        out.add(new Option(key.getAsString(), value.getAsJsonPrimitive()));
      }
      return out;
    }
  }

  static boolean isIntegerText(String text) {
    return !(text.contains(".") || text.contains("e") || text.contains("E"));
  }

  static BigInteger integer(JsonElement e, String where) {
    if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber()) {
      String text = e.getAsString();
      if (isIntegerText(text)) {
        return new BigInteger(text);
      }
    }
    throw usage(where + ": " + repr(e) + " is not a whole number");
  }

  static double number(JsonElement e, String where) {
    if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber()) {
      double value = new BigDecimal(e.getAsString()).doubleValue();
      if (Double.isFinite(value)) {
        return value;
      }
    }
    throw usage(where + ": " + repr(e) + " is not a finite number");
  }

  /** Whole numbers beyond a long are out of every range here: clamp, then range-check. */
  static long clampLong(BigInteger value) {
    if (value.bitLength() > 63) {
      return value.signum() > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
    }
    return value.longValue();
  }

  static String typeName(JsonElement e) {
    if (e == null || e.isJsonNull()) {
      return "NoneType";
    }
    if (e.isJsonObject()) {
      return "dict";
    }
    if (e.isJsonArray()) {
      return "list";
    }
    JsonPrimitive p = e.getAsJsonPrimitive();
    if (p.isBoolean()) {
      return "bool";
    }
    if (p.isString()) {
      return "str";
    }
    return isIntegerText(p.getAsString()) ? "int" : "float";
  }

  /** Roughly Python's repr of a JSON value, for messages. */
  static String repr(JsonElement e) {
    if (e == null || e.isJsonNull()) {
      return "None";
    }
    if (e.isJsonPrimitive()) {
      JsonPrimitive p = e.getAsJsonPrimitive();
      if (p.isString()) {
        return "'" + p.getAsString() + "'";
      }
      if (p.isBoolean()) {
        return p.getAsBoolean() ? "True" : "False";
      }
      return p.getAsString();
    }
    return e.toString();
  }

  static String num(double v) {
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return Double.toString(v);
  }

  // --- decoding each record (the checks of kit/plan/trial.py and processes.py) ---------------

  private static void checkInt(String name, long value, long low, long high) {
    require(low <= value && value <= high, name + ": " + value + " is outside " + low + ".." + high);
  }

  private static void checkWindow(String name, Long value) {
    if (value != null) {
      require(
          1 <= value && value <= HTTP2_MAX_WINDOW,
          name + ": " + value + " is outside HTTP/2's window range 1.." + HTTP2_MAX_WINDOW
              + " (2^31-1)");
    }
  }

  /** A nested record's own checks fail with its path in front, as the kit's codec says it. */
  private interface Check {
    void run();
  }

  private static void checked(String where, Check check) {
    try {
      check.run();
    } catch (Protocol.Failure f) {
      throw usage(where + ": " + f.getMessage());
    }
  }

  static Link link(JsonElement element, String where) {
    if (element == null) {
      return new Link(0, 0, null, null, 0, 1, "stream", 0, 0, null, 1500, "", List.of());
    }
    Obj o =
        new Obj(
            element,
            where,
            "delay_up_ms",
            "delay_down_ms",
            "rate_up_bits_s",
            "rate_down_bits_s",
            "jitter_ms",
            "seed",
            "kind",
            "loss",
            "loss_burst_len",
            "queue_bytes",
            "mtu",
            "congestion",
            "rate_steps");
    String kind = o.literal("kind", "stream", List.of("stream", "packet"));
    double loss = o.dbl("loss", 0);
    double burst = o.dbl("loss_burst_len", 0);
    Long queue = o.optLong("queue_bytes");
    long mtu = o.lng("mtu", 1500);
    String congestion = o.str("congestion", "");
    List<RateStep> steps = rateSteps(o);
    double up = o.dbl("delay_up_ms", 0);
    double down = o.dbl("delay_down_ms", 0);
    Double rateUp = o.optDouble("rate_up_bits_s");
    Double rateDown = o.optDouble("rate_down_bits_s");
    double jitter = o.dbl("jitter_ms", 0);
    BigInteger seed = o.has("seed") ? o.bigInt("seed") : BigInteger.ONE;
    checked(
        where,
        () -> {
          require(0 <= up && up <= 10_000, "delay_up_ms: " + num(up) + " ms is outside 0..10000 ms");
          require(
              0 <= down && down <= 10_000,
              "delay_down_ms: " + num(down) + " ms is outside 0..10000 ms");
          for (Object[] r : new Object[][] {{"--rate-up", rateUp}, {"--rate-down", rateDown}}) {
            Double rate = (Double) r[1];
            require(
                rate == null || (1_000 <= rate && rate <= 1e12),
                r[0] + ": " + (rate == null ? "None" : num(rate))
                    + " bit/s is outside 1 kbit/s .. 1 Tbit/s");
          }
          require(
              0 <= jitter && jitter <= 10_000,
              "--jitter: " + num(jitter) + " ms is outside 0..10000 ms");
          require(
              seed.signum() >= 0 && seed.bitLength() <= 63,
              "--seed: " + seed + " is not a whole number >= 0");
          checkPacketFields(loss, burst, queue, mtu, steps);
        });
    return new Link(
        up, down, rateUp, rateDown, jitter, seed.longValue(), kind, loss, burst, queue, mtu,
        congestion, steps);
  }

  static List<RateStep> rateSteps(Obj o) {
    List<RateStep> out = new ArrayList<>();
    if (!o.has("rate_steps")) {
      return out;
    }
    JsonElement e = o.get("rate_steps");
    if (!e.isJsonArray()) {
      throw usage(o.path("rate_steps") + ": a JSON array, not " + typeName(e));
    }
    JsonArray items = e.getAsJsonArray();
    for (int i = 0; i < items.size(); i++) {
      Obj s = new Obj(items.get(i), o.path("rate_steps") + "[" + i + "]", "rate_bits_s", "duration_ms");
      s.requirePresent("rate_bits_s", "duration_ms");
      out.add(new RateStep(s.dbl("rate_bits_s", 0), s.dbl("duration_ms", 0)));
    }
    return out;
  }

  /** The kit's _check_packet_fields and _check_rate_steps, in their words. */
  static void checkPacketFields(double loss, double burst, Long queue, long mtu, List<RateStep> steps) {
    require(0 <= loss && loss <= 0.5, "loss: " + num(loss) + " is outside 0..0.5 (a fraction of packets)");
    require(
        burst == 0 || (1 <= burst && burst <= 1000 && loss > 0),
        "loss_burst_len: " + num(burst) + " packets must be 1..1000, with a loss above 0");
    require(576 <= mtu && mtu <= 65_000, "mtu: " + mtu + " bytes is outside 576..65000");
    require(
        queue == null || queue >= mtu,
        "queue_bytes: " + queue + " bytes must hold at least one packet (the MTU, " + mtu + " bytes)");
    boolean positive = false;
    for (RateStep st : steps) {
      double r = st.rateBitsS();
      require(
          r == 0 || (1_000 <= r && r <= 1e12),
          "rate_steps: a rate of " + num(r) + " bit/s is outside 1 kbit/s .. 1 Tbit/s (or 0)");
      require(
          0 < st.durationMs() && st.durationMs() <= 3_600_000,
          "rate_steps: a step of " + num(st.durationMs()) + " ms is outside 0..1 h");
      positive |= r > 0;
    }
    require(
        steps.isEmpty() || (steps.size() <= 2000 && positive),
        "rate_steps: " + steps.size() + " steps; give 1..2000, at least one above 0");
  }

  static ClientConfig clientConfig(JsonElement element, String where) {
    if (element == null) {
      element = new JsonObject();
    }
    Obj o =
        new Obj(
            element,
            where,
            "kind",
            "window_mode",
            "window_bytes",
            "conn_window_bytes",
            "credit_policy",
            "max_frame_bytes",
            "channel_options",
            "connections",
            "conn_credit",
            "pool_bytes");
    String kind = o.literal("kind", "grpcio", CLIENT_KINDS);
    String mode = o.literal("window_mode", "dynamic", WINDOW_MODES);
    Long window = o.optLong("window_bytes");
    Long connWindow = o.optLong("conn_window_bytes");
    String credit = o.optLiteral("credit_policy", CREDIT_POLICIES);
    Long maxFrame = o.optLong("max_frame_bytes");
    List<Option> options = o.options("channel_options");
    long connections = o.lng("connections", 1);
    String connCredit = o.literal("conn_credit", "receipt", CONN_CREDITS);
    Long pool = o.optLong("pool_bytes");
    checked(
        where,
        () -> {
          if (pool != null) {
            require(
                mode.equals("pool"),
                "--pool: only the pool window policy takes a pool (add --window-policy pool)");
            require(
                16_384 <= pool && pool <= (1L << 30),
                "--pool: " + pool + " is outside 16384 B..1 GiB");
          }
          checkWindow("--window", window);
          checkWindow("--conn-window", connWindow);
          require(
              mode.equals("static") == (window != null),
              "--window: a static window needs a size, and only a static window takes one");
          require(
              maxFrame == null || (16_384 <= maxFrame && maxFrame <= (1 << 24) - 1),
              "max frame size: " + maxFrame + " is outside HTTP/2's 16384..16777215");
          require(
              1 <= connections && connections <= 256,
              "connections: " + connections + " is outside 1..256");
          if (kind.equals("grpcio")) {
            require(
                connWindow == null,
                "--conn-window: the grpcio client cannot set the connection window separately "
                    + "(C-core derives it from the stream window); use --client h2");
            require(
                credit == null || credit.equals("immediate"),
                "credit policy: only the h2 client has one");
            require(
                connCredit.equals("receipt"),
                "--conn-credit: only the h2 client has one (C-core returns credit itself)");
            require(
                !mode.equals("pool"),
                "--window-policy pool: the receive pool is the h2 client's (use --client h2)");
          } else if (STACK_KINDS.contains(kind)) {
            require(
                mode.equals("dynamic") || mode.equals("static"),
                "window mode: " + kind + " is static or dynamic, not " + mode);
            require(
                credit == null || credit.equals("immediate"),
                "credit policy: only the h2 client has one");
            require(connCredit.equals("receipt"), "--conn-credit: only the h2 client has one");
          } else {
            require(
                options.isEmpty(), "--option: channel options are for the grpcio client only");
            require(
                !mode.equals("bdp-off"),
                "window mode: bdp-off is a grpcio mode; the h2 client is static or dynamic");
          }
        });
    return new ClientConfig(
        kind, mode, window, connWindow, credit, maxFrame, options, (int) connections, connCredit,
        pool);
  }

  static ServerConfig serverConfig(JsonElement element, String where) {
    if (element == null) {
      element = new JsonObject();
    }
    Obj o = new Obj(element, where, "kind", "window_mode", "window_bytes", "channel_options");
    String kind = o.literal("kind", "grpcio", SERVER_KINDS);
    String mode = o.literal("window_mode", "dynamic", WINDOW_MODES);
    Long window = o.optLong("window_bytes");
    List<Option> options = o.options("channel_options");
    checked(
        where,
        () -> {
          checkWindow("--server-window", window);
          require(
              mode.equals("static") == (window != null),
              "--server-window: a static window needs a size, and only a static window takes one");
        });
    return new ServerConfig(kind, mode, window, options);
  }

  static Workload workload(JsonElement element, String where) {
    if (element == null) {
      element = new JsonObject();
    }
    Obj o =
        new Obj(
            element,
            where,
            "kind",
            "message_bytes",
            "streams",
            "duration_s",
            "bytes_per_stream",
            "calls",
            "warmup",
            "timeout_s",
            "slow_streams",
            "read_rate_bits_s");
    String kind = o.literal("kind", "download", WORKLOAD_KINDS);
    long messageBytes = o.lng("message_bytes", 256 * 1024);
    long streams = o.lng("streams", 1);
    Double duration = o.optDouble("duration_s");
    Long bytes = o.optLong("bytes_per_stream");
    long calls = o.lng("calls", 200);
    boolean warmup = o.bool("warmup", true);
    double timeout = o.dbl("timeout_s", 60.0);
    long slow = o.lng("slow_streams", 0);
    Double readRate = o.optDouble("read_rate_bits_s");
    checked(
        where,
        () -> {
          require(
              1 <= messageBytes && messageBytes <= 64L * MIB,
              "--message-size: " + messageBytes + " is outside 1..64 MiB");
          require(
              1 <= streams && streams <= MAX_STREAMS,
              "--streams: " + streams + " is outside 1.." + MAX_STREAMS);
          require(
              1 <= calls && calls <= 1_000_000, "--calls: " + calls + " is outside 1..1000000");
          if (duration != null) {
            require(
                0.01 <= duration && duration <= 3600,
                "--duration: " + num(duration) + " s is outside 0.01..3600 s");
          }
          if (bytes != null) {
            require(
                1 <= bytes && bytes <= (1L << 40), "--bytes: " + bytes + " is outside 1 B..1 TiB");
            require(
                bytes >= messageBytes,
                "--bytes: " + bytes + " B per stream is less than one message ("
                    + messageBytes + " B); ask for at least the message size, or a smaller "
                    + "--message-size");
          }
          require(
              1.0 <= timeout && timeout <= 7200,
              "--timeout: " + num(timeout) + " s is outside 1..7200 s");
          require(
              0 <= slow && slow <= streams,
              "--slow-streams: " + slow + " is outside 0.." + streams + " (--streams)");
          require(
              (slow > 0) == (readRate != null),
              "--read-rate: slow streams need a read rate, and only slow streams take one "
                  + "(give --slow-streams and --read-rate together)");
          if (readRate != null) {
            require(readRate > 0, "--read-rate: " + num(readRate) + " bit/s must be above 0");
            require(
                kind.equals("download"),
                "--slow-streams: slow readers are for downloads (--workload download)");
          }
        });
    return new Workload(
        kind, (int) messageBytes, (int) streams, duration, bytes, (int) calls, warmup, timeout,
        (int) slow, readRate);
  }

  static Trial trial(JsonElement element, String where) {
    if (element == null) {
      element = new JsonObject();
    }
    Obj o = new Obj(element, where, "link", "client", "server", "workload", "label");
    Link link = link(o.get("link"), o.path("link"));
    ClientConfig client = clientConfig(o.get("client"), o.path("client"));
    ServerConfig server = serverConfig(o.get("server"), o.path("server"));
    Workload workload = workload(o.get("workload"), o.path("workload"));
    String label = o.str("label", "");
    checked(
        where,
        () -> {
          boolean same = java.util.Objects.equals(link.rateUpBitsS(), link.rateDownBitsS());
          for (Object[] r :
              new Object[][] {{"--rate-up", link.rateUpBitsS()}, {"--rate-down", link.rateDownBitsS()}}) {
            Double rate = (Double) r[1];
            if (rate == null) {
              continue;
            }
            double frameS = 16_384 * 8 / rate;
            require(
                frameS <= workload.timeoutS(),
                (same ? "--rate" : r[0]) + ": at " + num(rate) + " bit/s one 16 KiB frame takes "
                    + Math.round(frameS) + " s, longer than the " + num(workload.timeoutS())
                    + " s timeout (raise the rate or --timeout)");
          }
        });
    return new Trial(link, client, server, workload, label);
  }

  static ClientProcess clientProcess(JsonElement element) {
    String where = "ClientProcess";
    Obj o = new Obj(element, where, "target_host", "target_port", "trial");
    o.requirePresent("target_port");
    String host = o.str("target_host", "127.0.0.1");
    long port = clampLong(o.bigInt("target_port"));
    Trial trial = trial(o.get("trial"), o.path("trial"));
    checked(
        where,
        () -> {
          require(!host.isEmpty(), "target_host: must not be empty");
          checkInt("target_port", port, 1, 65535);
        });
    return new ClientProcess(host, (int) port, trial);
  }

  static ServerProcess serverProcess(JsonElement element) {
    String where = "ServerProcess";
    Obj o = new Obj(element, where, "config", "listen_host", "listen_port", "workers");
    ServerConfig config = serverConfig(o.get("config"), o.path("config"));
    String host = o.str("listen_host", "127.0.0.1");
    long port = o.lng("listen_port", 0);
    long workers = o.lng("workers", MAX_STREAMS + 8);
    checked(
        where,
        () -> {
          require(!host.isEmpty(), "--listen: the host must not be empty");
          checkInt("listen port", port, 0, 65535);
          checkInt("workers", workers, 8, 4096);
        });
    return new ServerProcess(config, host, (int) port, (int) workers);
  }

  static boolean isLoopback(String host) {
    if (host.equals("localhost")) {
      return true;
    }
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (!h.matches("[0-9.]+|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*")) {
      return false; // a name: never resolved here
    }
    try {
      return java.net.InetAddress.getByName(h).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }
}
