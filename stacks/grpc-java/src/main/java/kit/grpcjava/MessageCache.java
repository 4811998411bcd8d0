package kit.grpcjava;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The server's Download messages: one serialized Chunk per size up to shared_message_max_bytes,
 * built once and shared by every call asking for that size (a cache of at most
 * message_cache_bytes, least recently used out first); a larger one (or one the cache cannot
 * hold) is serialized per call as it is sent (Wire.ChunkStream), never held whole.
 */
final class MessageCache {
  private final long sharedMaxBytes;
  private final long maxBytes;
  private final LinkedHashMap<Integer, byte[]> chunks = new LinkedHashMap<>(16, 0.75f, true);
  private long bytes;

  MessageCache(long sharedMaxBytes, long maxBytes) {
    this.sharedMaxBytes = sharedMaxBytes;
    this.maxBytes = maxBytes;
  }

  /** What a call sends for messages of {@code payloadBytes}. */
  Wire.Outgoing get(int payloadBytes) {
    byte[] chunk = shared(payloadBytes);
    if (chunk == null) {
      return () -> new Wire.ChunkStream(payloadBytes);
    }
    return () -> new Wire.BytesStream(chunk);
  }

  /** The shared serialized Chunk of this size, built now if need be; null: not shared. */
  synchronized byte[] shared(int payloadBytes) {
    if (payloadBytes > sharedMaxBytes) {
      return null;
    }
    byte[] chunk = chunks.get(payloadBytes);
    if (chunk != null) {
      return chunk;
    }
    long size = Wire.chunkHeader(Math.max(1, payloadBytes)).length + (long) payloadBytes;
    if (size > maxBytes) {
      return null;
    }
    chunk = Wire.chunk(payloadBytes);
    chunks.put(payloadBytes, chunk);
    bytes += chunk.length;
    Iterator<Map.Entry<Integer, byte[]>> eldest = chunks.entrySet().iterator();
    while (bytes > maxBytes && eldest.hasNext()) {
      bytes -= eldest.next().getValue().length;
      eldest.remove();
    }
    return chunk;
  }

  synchronized long cachedBytes() {
    return bytes;
  }

  synchronized int sizes() {
    return chunks.size();
  }
}
