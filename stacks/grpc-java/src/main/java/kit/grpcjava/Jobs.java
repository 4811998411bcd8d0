package kit.grpcjava;

import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import com.google.gson.stream.MalformedJsonException;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import kit.worker.Worker;
import kit.worker.Worker.ClientJob;
import kit.worker.Worker.ServerJob;

/**
 * The jobs (protos/worker.proto), decoded by protobuf's JsonFormat from the code generated in
 * kit.worker: strict (an unknown field, a wrong type, text that is not JSON are each a bad job,
 * exit 2, in the library's words). Every value was checked by the kit; what is refused here is
 * only what this program cannot act on.
 */
final class Jobs {
  private Jobs() {}

  private static final JsonFormat.Parser PARSER = JsonFormat.parser();

  static ClientJob clientJob(String text) {
    ClientJob.Builder job = ClientJob.newBuilder();
    merge(text, job);
    if (job.getWorkCase() == ClientJob.WorkCase.WORK_NOT_SET) {
      throw bad("a ClientJob needs one of download, unary or upload");
    }
    if (job.hasH2()) {
      throw bad("h2 is the kit's h2 client's receive policy; grpc-java cannot act on it");
    }
    if (job.getConnections() == 0) {
      throw bad("connections is 0: no connection to run the work on");
    }
    if (job.hasDownload() && job.getDownload().getStreams() == 0) {
      throw bad("download.streams is 0: nothing to download");
    }
    if (job.hasDownload() && job.getDownload().getSlowStreams() > 0) {
      Worker.ReadPacing pacing = job.getDownload().getPacing();
      try { // the pacer's own preconditions: a slow reader it cannot pace
        new ReadPacer(pacing.getRateBytesS(), 0, pacing.getSeed(),
            Math.max(1, job.getMessageBytes()), pacing.getJitter());
      } catch (IllegalArgumentException e) {
        throw bad("download.pacing: " + e.getMessage());
      }
    }
    return job.build();
  }

  static ServerJob serverJob(String text) {
    ServerJob.Builder job = ServerJob.newBuilder();
    merge(text, job);
    return job.build();
  }

  private static void merge(String text, Message.Builder builder) {
    strictJson(text);
    try {
      PARSER.merge(text, builder);
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      throw bad(String.valueOf(e.getMessage()));
    }
  }

  /**
   * JsonFormat reads JSON leniently (Gson's lenient reader: trailing text, single quotes, bare
   * words; a repeated key's last value wins): the text is first read as strict JSON (RFC 8259,
   * one value, no key twice in an object), as the other stacks' protobuf libraries read it.
   */
  static void strictJson(String text) {
    JsonReader reader = new JsonReader(new StringReader(text));
    reader.setStrictness(Strictness.STRICT);
    try {
      skipValue(reader);
      if (reader.peek() != JsonToken.END_DOCUMENT) {
        throw new MalformedJsonException("more text after the JSON value " + reader.getPath());
      }
    } catch (IOException | IllegalStateException e) {
      String why = String.valueOf(e.getMessage());
      why = why.replace("Use JsonReader.setStrictness(Strictness.LENIENT) to accept ", "");
      int see = why.indexOf("\nSee ");
      throw bad("not JSON: " + (see >= 0 ? why.substring(0, see) : why));
    }
  }

  private static void skipValue(JsonReader reader) throws IOException {
    switch (reader.peek()) {
      case BEGIN_OBJECT -> {
        reader.beginObject();
        Set<String> keys = new HashSet<>();
        while (reader.hasNext()) {
          String key = reader.nextName();
          if (!keys.add(key)) {
            throw bad("the key \"" + key + "\" twice in one object (" + reader.getPath() + ")");
          }
          skipValue(reader);
        }
        reader.endObject();
      }
      case BEGIN_ARRAY -> {
        reader.beginArray();
        while (reader.hasNext()) {
          skipValue(reader);
        }
        reader.endArray();
      }
      default -> reader.skipValue();
    }
  }

  static Protocol.Failure bad(String why) {
    return Protocol.fail(Protocol.BAD_JOB, "bad job: " + why);
  }

  static Protocol.Failure usage(String line) {
    return Protocol.fail(Protocol.BAD_JOB, line);
  }

  /** {@code bytes} as UTF-8, strictly; else "{@code source}: not UTF-8" (exit 2). */
  static String utf8(byte[] bytes, String source) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw Protocol.fail(Protocol.BAD_JOB, source + ": not UTF-8");
    }
  }

  /**
   * The JSON of {@code --config JSON} or {@code --config=JSON} ({@code args} without the role),
   * else the usage line (exit 2). The bytes come from /proc/self/cmdline: the JVM decodes its
   * arguments in the locale's charset (ASCII under LANG=C), which would hide bytes that are not
   * UTF-8 and mangle text that is.
   */
  static String configArg(String[] args, String usage) {
    byte[][] raw = rawArgs(args);
    byte[] json;
    if (args.length == 1 && args[0].startsWith("--config=")) {
      byte[] arg = raw[0];
      int skip = "--config=".length();
      json = java.util.Arrays.copyOfRange(arg, Math.min(skip, arg.length), arg.length);
    } else if (args.length == 2 && args[0].equals("--config")) {
      json = raw[1];
    } else {
      throw usage(usage);
    }
    return utf8(json, "--config");
  }

  /** The program's arguments as the kernel holds them: the tail of /proc/self/cmdline (the
   * JVM's own flags come first); the JVM's strings if that cannot be read. */
  static byte[][] rawArgs(String[] args) {
    byte[][] fallback = new byte[args.length][];
    for (int i = 0; i < args.length; i++) {
      fallback[i] = args[i].getBytes(StandardCharsets.UTF_8);
    }
    byte[] cmdline;
    try {
      cmdline = Files.readAllBytes(Path.of("/proc/self/cmdline"));
    } catch (IOException | RuntimeException e) {
      return fallback;
    }
    List<byte[]> all = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < cmdline.length; i++) {
      if (cmdline[i] == 0) {
        all.add(java.util.Arrays.copyOfRange(cmdline, start, i));
        start = i + 1;
      }
    }
    if (start < cmdline.length) {
      all.add(java.util.Arrays.copyOfRange(cmdline, start, cmdline.length));
    }
    if (all.size() < args.length) {
      return fallback;
    }
    byte[][] tail = all.subList(all.size() - args.length, all.size()).toArray(new byte[0][]);
    // The same arguments (their first, --config..., is ASCII in both), or not ours after all.
    if (args.length > 0 && !new String(tail[0], StandardCharsets.UTF_8).startsWith("--config")) {
      return fallback;
    }
    return tail;
  }
}
