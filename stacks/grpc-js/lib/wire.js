'use strict';
// The kit's Throughput service (protos/throughput.proto) on the wire, by hand: five tiny
// messages of one or two fields. Bulk Chunks go through as raw bytes (built once, reused;
// the client reads only the 2..6-byte header), so CPU goes to HTTP/2, as in the kit's Python
// server and clients. test/wire.test.js checks every encoder and decoder here against
// protobufjs loading protos/throughput.proto through @grpc/proto-loader.

const SERVICE = 'kit.throughput.Throughput';
const PATHS = {
  Download: `/${SERVICE}/Download`,
  Ping: `/${SERVICE}/Ping`,
  Upload: `/${SERVICE}/Upload`,
};

class WireError extends Error {}

function varintLength(n) {
  let len = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    len += 1;
  }
  return len;
}

function writeVarint(buf, offset, n) {
  while (n >= 128) {
    buf[offset++] = (n % 128) | 128;
    n = Math.floor(n / 128);
  }
  buf[offset++] = n;
  return offset;
}

function readVarint(buf, offset) {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i += 1) {
    if (offset >= buf.length) throw new WireError('truncated varint');
    const byte = buf[offset++];
    value += (byte & 127) * scale;
    if (byte < 128) return [value, offset];
    scale *= 128;
  }
  throw new WireError('varint longer than 10 bytes');
}

// Walk every field; ``onField(number, wireType, value)`` gets a number for varints and a
// [start, end) pair for length-delimited fields. Unknown fields are skipped, as protobuf does.
function walk(buf, onField) {
  let offset = 0;
  while (offset < buf.length) {
    let key;
    [key, offset] = readVarint(buf, offset);
    const number = Math.floor(key / 8);
    const type = key % 8;
    if (type === 0) {
      let value;
      [value, offset] = readVarint(buf, offset);
      onField(number, type, value);
    } else if (type === 2) {
      let len;
      [len, offset] = readVarint(buf, offset);
      if (offset + len > buf.length) throw new WireError('truncated length-delimited field');
      onField(number, type, [offset, offset + len]);
      offset += len;
    } else if (type === 1) {
      offset += 8;
    } else if (type === 5) {
      offset += 4;
    } else {
      throw new WireError(`wire type ${type} is not supported`);
    }
    if (offset > buf.length) throw new WireError('truncated field');
  }
}

// A message whose one field 1 is ``bytes payload`` (Chunk, PingRequest, PingReply).
function encodePayload(payload) {
  if (payload.length === 0) return Buffer.alloc(0); // proto3: an empty bytes field is not sent
  const head = 1 + varintLength(payload.length);
  const out = Buffer.allocUnsafe(head + payload.length);
  out[0] = 0x0a;
  writeVarint(out, 1, payload.length);
  payload.copy(out, head);
  return out;
}

function decodePayload(buf) {
  let range = null;
  walk(buf, (number, type, value) => {
    if (number === 1 && type === 2) range = value; // the last one wins, as in protobuf
  });
  return range === null ? Buffer.alloc(0) : buf.subarray(range[0], range[1]);
}

// A Chunk's payload length, fast: Chunks come from the kit's servers as exactly field 1.
function payloadLength(buf) {
  if (buf.length === 0) return 0;
  if (buf[0] === 0x0a) {
    const [len, offset] = readVarint(buf, 1);
    if (offset + len === buf.length) return len;
  }
  return decodePayload(buf).length;
}

// A Chunk of ``size`` bytes of 0x5a, serialized: one allocation of exactly its length.
function chunk(size) {
  if (size === 0) return Buffer.alloc(0);
  const head = 1 + varintLength(size);
  const out = Buffer.allocUnsafe(head + size);
  out[0] = 0x0a;
  writeVarint(out, 1, size);
  out.fill(0x5a, head);
  return out;
}

function encodeTwoVarints(a, b) {
  // fields 1 and 2, both varints (DownloadRequest, UploadSummary); zeros are not sent
  const parts = [];
  if (a) parts.push([0x08, a]);
  if (b) parts.push([0x10, b]);
  const out = Buffer.allocUnsafe(parts.reduce((n, [, v]) => n + 1 + varintLength(v), 0));
  let offset = 0;
  for (const [tag, v] of parts) {
    out[offset++] = tag;
    offset = writeVarint(out, offset, v);
  }
  return out;
}

function decodeTwoVarints(buf) {
  const values = [0, 0];
  walk(buf, (number, type, value) => {
    if ((number === 1 || number === 2) && type === 0) values[number - 1] = value;
  });
  return values;
}

const encodeDownloadRequest = ({ messageCount, messageBytes }) => encodeTwoVarints(messageCount, messageBytes);
function decodeDownloadRequest(buf) {
  const [messageCount, messageBytes] = decodeTwoVarints(buf);
  // uint32 message_bytes: protobuf truncates a larger varint to its low 32 bits
  return { messageCount, messageBytes: messageBytes % 2 ** 32 };
}
const encodeUploadSummary = ({ messages, payloadBytes }) => encodeTwoVarints(messages, payloadBytes);
function decodeUploadSummary(buf) {
  const [messages, payloadBytes] = decodeTwoVarints(buf);
  return { messages, payloadBytes };
}

const identity = (b) => b;

// grpc-js method definitions (the shape proto-loader produces), raw Buffers in and out:
// each handler and caller encodes and decodes with the functions above.
const SERVICE_DEFINITION = {
  Download: { path: PATHS.Download, requestStream: false, responseStream: true },
  Ping: { path: PATHS.Ping, requestStream: false, responseStream: false },
  Upload: { path: PATHS.Upload, requestStream: true, responseStream: false },
};
for (const [name, def] of Object.entries(SERVICE_DEFINITION)) {
  Object.assign(def, {
    originalName: name,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  });
}

module.exports = {
  SERVICE,
  PATHS,
  SERVICE_DEFINITION,
  WireError,
  identity,
  encodePayload,
  decodePayload,
  payloadLength,
  chunk,
  encodeDownloadRequest,
  decodeDownloadRequest,
  encodeUploadSummary,
  decodeUploadSummary,
};
