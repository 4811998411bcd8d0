package kit.grpcjava;

import com.google.gson.JsonObject;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The kit's process protocol (docs/process-protocol.md), the child's side: stdout carries only
 * protocol lines (the ready line, then exactly one final line; a client worker writes a result
 * line per trial before it); anything else written to System.out goes to stderr. Exit codes: 0 done, 1 failed, 2 bad config, 3 cannot start, 4 the
 * measurement failed, 128+N stopped by signal N.
 */
final class Protocol {
  static final int OK = 0;
  static final int FAILED = 1;
  static final int BAD_CONFIG = 2;
  static final int CANNOT_START = 3;
  static final int MEASUREMENT = 4;

  private static final Object LOCK = new Object();
  private static PrintStream protocolOut;
  private static boolean finalSent;
  private static int finalCode;

  private Protocol() {}

  /** Keep the real stdout for protocol lines; everything else that prints goes to stderr. */
  static void init() {
    protocolOut =
        new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    System.setOut(System.err);
  }

  /** An error that ends the process with one error line and its exit code. */
  static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int exitCode;

    Failure(int exitCode, String message) {
      super(message, null, false, false);
      this.exitCode = exitCode;
    }
  }

  static Failure fail(int exitCode, String message) {
    return new Failure(exitCode, message);
  }

  static void ready(long pid, int port, String stack, String version) {
    ready(pid, port, stack, version, false);
  }

  /** The ready line; a client worker's says {@code "worker": true}. */
  static void ready(long pid, int port, String stack, String version, boolean worker) {
    JsonObject line = new JsonObject();
    line.addProperty("ready", true);
    line.addProperty("pid", pid);
    line.addProperty("port", port);
    line.addProperty("stack", stack);
    line.addProperty("version", version);
    if (worker) {
      line.addProperty("worker", true);
    }
    synchronized (LOCK) {
      if (!finalSent) {
        write(line.toString());
      }
    }
  }

  /** The result line; false if a final line was already written (a signal came first). */
  static boolean result(JsonObject result) {
    JsonObject line = new JsonObject();
    line.add("result", result);
    return finalLine(line.toString(), OK);
  }

  /** A client worker's result line for its trial {@code trial} (1 = its first): not final, more
   * trials may follow; false if a final line was already written (a signal came first). */
  static boolean trialResult(JsonObject result, int trial) {
    JsonObject line = new JsonObject();
    line.add("result", result);
    line.addProperty("client_trial", trial);
    synchronized (LOCK) {
      if (finalSent) {
        return false;
      }
      write(line.toString());
      return true;
    }
  }

  static boolean error(String message, int exitCode) {
    JsonObject line = new JsonObject();
    String text = String.join(" ", message.trim().split("\\s+"));
    line.addProperty("error", text.isEmpty() ? "failed" : text);
    line.addProperty("exit_code", exitCode);
    return finalLine(line.toString(), exitCode);
  }

  private static boolean finalLine(String text, int exitCode) {
    synchronized (LOCK) {
      if (finalSent) {
        return false;
      }
      finalSent = true;
      finalCode = exitCode;
      write(text);
      return true;
    }
  }

  /** The exit code of the final line written (the code to exit with). */
  static int finalCode() {
    synchronized (LOCK) {
      return finalCode;
    }
  }

  private static void write(String text) {
    protocolOut.print(text);
    protocolOut.print('\n');
    protocolOut.flush();
  }

  /** Exit now: no shutdown hooks, no waiting for the library's threads (their event loops are
   * stopped first, briefly: HotSpot's exit would wait 300 ms for them). */
  static void halt(int code) {
    EventLoops.shutdownAll(200);
    System.err.flush();
    protocolOut.flush();
    Runtime.getRuntime().halt(code);
  }

  /** Write the error line (unless a final line is out already) and exit with its code. */
  static void die(String message, int exitCode) {
    error(message, exitCode);
    halt(finalCode());
  }
}
