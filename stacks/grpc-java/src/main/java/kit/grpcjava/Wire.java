package kit.grpcjava;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.MethodDescriptor.Marshaller;
import io.grpc.MethodDescriptor.MethodType;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * The kit's Throughput service (protos/throughput.proto) on the wire, without generated code.
 *
 * <p>As the kit's grpcio programs do, bulk messages travel as raw bytes: the server sends one
 * pre-serialized Chunk again and again, the client reads each Chunk's bytes (one copy, as a
 * protobuf parse into a ByteString would) and counts them. The four small messages are encoded
 * and decoded here in proto3 wire format (unknown fields skipped), so the build needs no protoc.
 */
final class Wire {
  static final String SERVICE = "kit.throughput.Throughput";
  static final int MIB = 1024 * 1024;

  private Wire() {}

  // --- marshallers ---------------------------------------------------------------------------

  /** Pre-serialized bytes out, the whole message in. */
  static final Marshaller<byte[]> BYTES =
      new Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new BytesStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  /** A received Chunk: its bytes read (into a scratch buffer) and counted. */
  static final Marshaller<Integer> DRAIN =
      new Marshaller<>() {
        @Override
        public InputStream stream(Integer value) {
          throw new UnsupportedOperationException("DRAIN only reads");
        }

        @Override
        public Integer parse(InputStream stream) {
          byte[] scratch = SCRATCH.get();
          int total = 0;
          try {
            for (int n; (n = stream.read(scratch)) > 0; ) {
              total += n;
            }
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
          return total;
        }
      };

  /** An uploaded Chunk, read through: its payload length (what the server counts). */
  static final Marshaller<Long> CHUNK_PAYLOAD =
      new Marshaller<>() {
        @Override
        public InputStream stream(Long value) {
          throw new UnsupportedOperationException("CHUNK_PAYLOAD only reads");
        }

        @Override
        public Long parse(InputStream stream) {
          try {
            return chunkPayloadLength(stream);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  /** A message the server sends again and again: each send opens a stream over it. */
  interface Outgoing {
    InputStream open();
  }

  /** Outgoing messages out (grpc-java's framer drains each into its transport buffers). */
  static final Marshaller<Outgoing> OUTGOING =
      new Marshaller<>() {
        @Override
        public InputStream stream(Outgoing value) {
          return value.open();
        }

        @Override
        public Outgoing parse(InputStream stream) {
          throw new UnsupportedOperationException("OUTGOING only writes");
        }
      };

  private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[65536]);

  /** A byte array as the stream grpc-java's framer drains in one write (no extra copy). */
  static final class BytesStream extends InputStream implements KnownLength, Drainable {
    private final byte[] bytes;
    private int pos;

    BytesStream(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
      int n = bytes.length - pos;
      target.write(bytes, pos, n);
      pos = bytes.length;
      return n;
    }

    @Override
    public int read() {
      return pos < bytes.length ? bytes[pos++] & 0xff : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (pos >= bytes.length) {
        return -1;
      }
      int n = Math.min(len, bytes.length - pos);
      System.arraycopy(bytes, pos, b, off, n);
      pos += n;
      return n;
    }

    @Override
    public int available() {
      return bytes.length - pos;
    }
  }

  /**
   * Chunk{payload = n bytes of 0x5a}, serialized as it is read: nothing of it is held beyond a
   * shared 64 KiB run of 0x5a (a message too large to share is written straight into the
   * transport's buffers, the one copy of it there is).
   */
  static final class ChunkStream extends InputStream implements KnownLength, Drainable {
    private static final byte[] RUN = filled(65536);
    private final byte[] header;
    private final long total;
    private long pos;

    ChunkStream(int payloadBytes) {
      header = payloadBytes == 0 ? new byte[0] : chunkHeader(payloadBytes);
      total = header.length + (long) payloadBytes;
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
      long start = pos;
      while (pos < total) {
        if (pos < header.length) {
          target.write(header, (int) pos, header.length - (int) pos);
          pos = header.length;
        } else {
          int n = (int) Math.min(RUN.length, total - pos);
          target.write(RUN, 0, n);
          pos += n;
        }
      }
      return (int) (pos - start);
    }

    @Override
    public int read() {
      if (pos >= total) {
        return -1;
      }
      int b = pos < header.length ? header[(int) pos] & 0xff : 0x5a;
      pos++;
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (pos >= total) {
        return -1;
      }
      int n = (int) Math.min(len, total - pos);
      for (int i = 0; i < n; i++) {
        b[off + i] = pos + i < header.length ? header[(int) (pos + i)] : 0x5a;
      }
      pos += n;
      return n;
    }

    @Override
    public int available() {
      return (int) (total - pos);
    }
  }

  private static byte[] filled(int n) {
    byte[] run = new byte[n];
    java.util.Arrays.fill(run, (byte) 0x5a);
    return run;
  }

  /** A Chunk's bytes before its payload: field 1's tag and the payload's length. */
  static byte[] chunkHeader(int payloadBytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(6);
    out.write((1 << 3) | 2);
    varint(out, payloadBytes);
    return out.toByteArray();
  }

  // --- the methods ---------------------------------------------------------------------------

  static <Q, R> MethodDescriptor<Q, R> method(
      String name, MethodType type, Marshaller<Q> request, Marshaller<R> response) {
    return MethodDescriptor.<Q, R>newBuilder()
        .setType(type)
        .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
        .setRequestMarshaller(request)
        .setResponseMarshaller(response)
        .build();
  }

  // --- messages ------------------------------------------------------------------------------

  /** DownloadRequest {uint64 message_count = 1; uint32 message_bytes = 2;} */
  static byte[] downloadRequest(long messageCount, int messageBytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(24);
    if (messageCount != 0) {
      out.write(1 << 3);
      varint(out, messageCount);
    }
    if (messageBytes != 0) {
      out.write(2 << 3);
      varint(out, messageBytes & 0xffffffffL);
    }
    return out.toByteArray();
  }

  /** The fields of a DownloadRequest: {message_count, message_bytes (as uint32)}. */
  static long[] parseDownloadRequest(byte[] data) {
    long[] fields = new long[2];
    Reader in = new Reader(data);
    while (in.more()) {
      long tag = in.varint();
      int field = (int) (tag >>> 3);
      int type = (int) (tag & 7);
      if (field == 1 && type == 0) {
        fields[0] = in.varint();
      } else if (field == 2 && type == 0) {
        fields[1] = in.varint() & 0xffffffffL;
      } else {
        in.skip(type);
      }
    }
    return fields;
  }

  /** A message whose field 1 is bytes: Chunk, PingRequest, PingReply. */
  static byte[] bytesField1(byte[] payload, int length) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(length + 6);
    if (length > 0) {
      out.write((1 << 3) | 2);
      varint(out, length);
      out.write(payload, 0, length);
    }
    return out.toByteArray();
  }

  /** Chunk{payload = n bytes of 0x5a}, serialized. */
  static byte[] chunk(int payloadBytes) {
    byte[] payload = new byte[payloadBytes];
    java.util.Arrays.fill(payload, (byte) 0x5a);
    return bytesField1(payload, payloadBytes);
  }

  /** Field 1 (bytes) of a PingRequest / PingReply; empty when absent. */
  static byte[] parseBytesField1(byte[] data) {
    byte[] value = new byte[0];
    Reader in = new Reader(data);
    while (in.more()) {
      long tag = in.varint();
      int field = (int) (tag >>> 3);
      int type = (int) (tag & 7);
      if (field == 1 && type == 2) {
        int length = in.length();
        value = java.util.Arrays.copyOfRange(data, in.pos, in.pos + length);
        in.pos += length;
      } else {
        in.skip(type);
      }
    }
    return value;
  }

  /** UploadSummary {uint64 messages = 1; uint64 payload_bytes = 2;} */
  static byte[] uploadSummary(long messages, long payloadBytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(24);
    if (messages != 0) {
      out.write(1 << 3);
      varint(out, messages);
    }
    if (payloadBytes != 0) {
      out.write(2 << 3);
      varint(out, payloadBytes);
    }
    return out.toByteArray();
  }

  static long[] parseUploadSummary(byte[] data) {
    return parseDownloadRequestLike(data);
  }

  private static long[] parseDownloadRequestLike(byte[] data) {
    long[] fields = new long[2];
    Reader in = new Reader(data);
    while (in.more()) {
      long tag = in.varint();
      int field = (int) (tag >>> 3);
      int type = (int) (tag & 7);
      if ((field == 1 || field == 2) && type == 0) {
        fields[field - 1] = in.varint();
      } else {
        in.skip(type);
      }
    }
    return fields;
  }

  /** The payload length of one Chunk read from a stream (every byte read, none kept). */
  static long chunkPayloadLength(InputStream in) throws IOException {
    byte[] scratch = SCRATCH.get();
    long payload = 0;
    while (true) {
      int first = in.read();
      if (first < 0) {
        return payload;
      }
      long tag = streamVarint(in, first);
      int field = (int) (tag >>> 3);
      int type = (int) (tag & 7);
      long skip;
      switch (type) {
        case 0 -> {
          streamVarint(in, in.read());
          continue;
        }
        case 1 -> skip = 8;
        case 5 -> skip = 4;
        case 2 -> {
          skip = streamVarint(in, in.read());
          if (field == 1) {
            payload = skip; // proto3: the last value of a repeated scalar field wins
          }
        }
        default -> throw new IOException("Chunk: wire type " + type + " is not valid here");
      }
      while (skip > 0) {
        int n = in.read(scratch, 0, (int) Math.min(scratch.length, skip));
        if (n < 0) {
          throw new EOFException("Chunk: truncated");
        }
        skip -= n;
      }
    }
  }

  private static long streamVarint(InputStream in, int first) throws IOException {
    long value = 0;
    int shift = 0;
    for (int b = first; ; b = in.read()) {
      if (b < 0) {
        throw new EOFException("truncated varint");
      }
      value |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
      shift += 7;
      if (shift >= 64) {
        throw new IOException("varint too long");
      }
    }
  }

  private static void varint(ByteArrayOutputStream out, long value) {
    while ((value & ~0x7fL) != 0) {
      out.write((int) ((value & 0x7f) | 0x80));
      value >>>= 7;
    }
    out.write((int) value);
  }

  /** A bounds-checked reader over one serialized message. */
  private static final class Reader {
    final byte[] data;
    int pos;

    Reader(byte[] data) {
      this.data = data;
    }

    boolean more() {
      return pos < data.length;
    }

    long varint() {
      long value = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        if (pos >= data.length) {
          throw new IllegalArgumentException("truncated varint");
        }
        int b = data[pos++];
        value |= (long) (b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
          return value;
        }
      }
      throw new IllegalArgumentException("varint too long");
    }

    int length() {
      long n = varint();
      if (n < 0 || n > data.length - pos) {
        throw new IllegalArgumentException("truncated field");
      }
      return (int) n;
    }

    void skip(int type) {
      switch (type) {
        case 0 -> varint();
        case 1 -> advance(8);
        case 2 -> advance(length());
        case 5 -> advance(4);
        default -> throw new IllegalArgumentException("wire type " + type + " is not valid here");
      }
    }

    private void advance(int n) {
      if (n > data.length - pos) {
        throw new IllegalArgumentException("truncated field");
      }
      pos += n;
    }
  }
}
