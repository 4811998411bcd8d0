package kit.grpcjava;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The server's download budget and its shared messages, as pure units. */
class DownloadBudgetTest {
  static final long MIB = 1 << 20;

  @Test
  void aCallIsChargedItsMessageAndAnUnsharedOneTwice() {
    DownloadBudget budget = new DownloadBudget(256 * MIB, 16 * MIB);
    assertEquals(256 * 1024, budget.chargeOf(256 * 1024));
    assertEquals(16 * MIB, budget.chargeOf(16 * MIB));
    assertEquals(2 * (16 * MIB + 1), budget.chargeOf(16 * MIB + 1));
    assertEquals(128 * MIB, budget.chargeOf(64 * MIB));
  }

  @Test
  void fortyCallsOf64MibNeverReadGetTwoThroughAndThirtyEightRefused() {
    DownloadBudget budget = new DownloadBudget(256 * MIB, 16 * MIB);
    List<DownloadBudget.Charge> taken = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      DownloadBudget.Charge charge = budget.take(64 * MIB);
      if (charge != null) {
        taken.add(charge);
      }
    }
    assertEquals(2, taken.size());
    assertEquals(38, budget.refused());
    assertEquals(256 * MIB, budget.held());
  }

  @Test
  void aChargeComesBackOnceHoweverTheCallEnds() {
    DownloadBudget budget = new DownloadBudget(4 * MIB, 16 * MIB);
    DownloadBudget.Charge a = budget.take(3 * MIB);
    assertNotNull(a);
    assertNull(budget.take(2 * MIB)); // would go beyond: refused before anything is allocated
    assertEquals(1, budget.refused());
    a.giveBack();
    a.giveBack(); // onCancel after onComplete, say: once only
    assertEquals(0, budget.held());
    assertNotNull(budget.take(4 * MIB)); // exactly the budget fits
    assertNull(budget.take(1));
    assertEquals(2, budget.refused());
  }

  @Test
  void twoThousandCallsOf1MibHoldAtMostTheBudget() {
    DownloadBudget budget = new DownloadBudget(256 * MIB, 16 * MIB);
    int taken = 0;
    for (int i = 0; i < 2000; i++) {
      taken += budget.take(MIB) != null ? 1 : 0;
    }
    assertEquals(256, taken);
    assertEquals(1744, budget.refused());
  }

  static byte[] drain(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ((io.grpc.Drainable) in).drainTo(out);
    return out.toByteArray();
  }

  @Test
  void messagesUpToTheSharedSizeAreBuiltOncePerSizeLeastRecentlyUsedOut() throws IOException {
    MessageCache cache = new MessageCache(4 * MIB, 5 * MIB);
    byte[] one = cache.shared((int) MIB);
    assertSame(one, cache.shared((int) MIB)); // one copy per size, whatever the calls
    assertArrayEquals(Wire.chunk((int) MIB), one);
    cache.shared(2 * (int) MIB);
    cache.shared((int) MIB); // used again: the 2 MiB one is the least recently used now
    cache.shared(3 * (int) MIB); // beyond 5 MiB: the 2 MiB one goes
    assertEquals(2, cache.sizes());
    assertEquals(one.length + Wire.chunk(3 * (int) MIB).length, cache.cachedBytes());
    assertSame(one, cache.shared((int) MIB));
    assertNull(cache.shared(4 * (int) MIB + 1)); // above the shared size: per call
    assertEquals(2, cache.sizes());
    assertArrayEquals(one, drain(cache.get((int) MIB).open()));
  }

  @Test
  void anUnsharedMessageIsWrittenAsItIsSentTheSameBytes() throws IOException {
    for (int size : new int[] {1, 127, 128, 65536, 65537, 3 * 65536 + 5}) {
      MessageCache none = new MessageCache(0, 0);
      InputStream stream = none.get(size).open();
      assertEquals(Wire.chunk(size).length, stream.available());
      assertArrayEquals(Wire.chunk(size), drain(stream), "size " + size);
      byte[] read = new Wire.ChunkStream(size).readAllBytes();
      assertArrayEquals(Wire.chunk(size), read, "read, size " + size);
    }
  }
}
