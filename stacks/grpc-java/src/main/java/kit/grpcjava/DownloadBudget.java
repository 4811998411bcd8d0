package kit.grpcjava;

/**
 * What the server's Download calls hold together, bounded (ServerJob.download_budget_bytes):
 * a call is charged its message (the copy grpc-java's transport holds while it is sent) and,
 * for a message above shared_message_max_bytes, that message again (it is not shared). A call
 * that would go beyond is refused before it allocates anything; a charge is given back once,
 * when its call ends, however it ends. Pure: no grpc-java in here.
 */
final class DownloadBudget {
  private final long maxBytes;
  private final long sharedMaxBytes;
  private long held;
  private long refused;

  DownloadBudget(long maxBytes, long sharedMaxBytes) {
    this.maxBytes = maxBytes;
    this.sharedMaxBytes = sharedMaxBytes;
  }

  /** What a call sending messages of {@code messageBytes} is charged. */
  long chargeOf(long messageBytes) {
    return messageBytes + (messageBytes > sharedMaxBytes ? messageBytes : 0);
  }

  /** One call's charge, taken; or null (the call is refused, and counted). */
  synchronized Charge take(long messageBytes) {
    long charge = chargeOf(messageBytes);
    if (charge > maxBytes - held) {
      refused++;
      return null;
    }
    held += charge;
    return new Charge(charge);
  }

  synchronized long held() {
    return held;
  }

  synchronized long refused() {
    return refused;
  }

  long maxBytes() {
    return maxBytes;
  }

  /** One call's charge: given back at most once. */
  final class Charge {
    final long bytes;
    private boolean given;

    private Charge(long bytes) {
      this.bytes = bytes;
    }

    void giveBack() {
      synchronized (DownloadBudget.this) {
        if (!given) {
          given = true;
          held -= bytes;
        }
      }
    }
  }
}
