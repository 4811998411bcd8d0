package kit.grpcjava;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import kit.worker.Worker;

/**
 * The kit's process protocol (docs/process-protocol.md), the child's side: stdout carries only
 * protocol lines (the ready line, then exactly one final line; a client worker writes a result
 * line per trial before it), each a message of protos/worker.proto printed by protobuf's
 * JsonFormat with the .proto's field names; anything else written to System.out goes to stderr.
 * Exit codes: 0 done, 1 failed, 2 bad job, 3 cannot start, 4 the measurement failed, 128+N
 * stopped by signal N.
 */
final class Protocol {
  static final int OK = 0;
  static final int FAILED = 1;
  static final int BAD_JOB = 2;
  static final int CANNOT_START = 3;
  static final int MEASUREMENT = 4;

  private static final JsonFormat.Printer PRINTER =
      JsonFormat.printer().preservingProtoFieldNames().omittingInsignificantWhitespace();

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

  /** One message as one line of canonical JSON, the .proto's field names. */
  static String text(MessageOrBuilder message) {
    try {
      return PRINTER.print(message);
    } catch (InvalidProtocolBufferException e) { // only for Any without a type registry
      throw new IllegalStateException(e);
    }
  }

  static String readyText(long pid, int port, boolean worker) {
    return text(
        Worker.Ready.newBuilder()
            .setReady(true)
            .setPid((int) pid)
            .setPort(port)
            .setStack(Main.STACK)
            .setVersion(Main.version())
            .setWorker(worker));
  }

  /** A client's answer; {@code trial} 0 for a process of its own, else its worker trial. */
  static String clientAnswerText(Worker.ClientResult result, int trial) {
    return text(Worker.ClientAnswer.newBuilder().setResult(result).setClientTrial(trial));
  }

  static String serverAnswerText(Worker.ServerResult result) {
    return text(Worker.ServerAnswer.newBuilder().setResult(result));
  }

  /** The error line: one line of text (whitespace runs made one space) and its exit code. */
  static String failureText(String message, int exitCode) {
    String text = String.join(" ", message.trim().split("\\s+"));
    return text(
        Worker.Failure.newBuilder()
            .setError(text.isEmpty() ? "failed" : text)
            .setExitCode(exitCode));
  }

  /** The ready line; a client worker's says {@code "worker": true}. */
  static void ready(long pid, int port, boolean worker) {
    String line = readyText(pid, port, worker);
    synchronized (LOCK) {
      if (!finalSent) {
        write(line);
      }
    }
  }

  /** A client's result line; false if a final line was already written (a signal came first). */
  static boolean clientResult(Worker.ClientResult result) {
    return finalLine(clientAnswerText(result, 0), OK);
  }

  /** A server's result line. */
  static boolean serverResult(Worker.ServerResult result) {
    return finalLine(serverAnswerText(result), OK);
  }

  /** A client worker's result line for its trial {@code trial} (1 = its first): not final, more
   * trials may follow; false if a final line was already written (a signal came first). */
  static boolean trialResult(Worker.ClientResult result, int trial) {
    String line = clientAnswerText(result, trial);
    synchronized (LOCK) {
      if (finalSent) {
        return false;
      }
      write(line);
      return true;
    }
  }

  static boolean error(String message, int exitCode) {
    return finalLine(failureText(message, exitCode), exitCode);
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
