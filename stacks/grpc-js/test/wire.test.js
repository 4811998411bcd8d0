'use strict';
// The hand-written wire format (lib/wire.js) against protobufjs loading the kit's proto
// through @grpc/proto-loader: the same bytes both ways, the same method paths and kinds.
const test = require('node:test');
const assert = require('node:assert');
const path = require('path');
const protoLoader = require('@grpc/proto-loader');
const wire = require('../lib/wire');

const PROTO = path.join(__dirname, '..', '..', '..', 'protos', 'throughput.proto');
const service = protoLoader.loadSync(PROTO, { keepCase: true, longs: Number, defaults: true })[wire.SERVICE];

test('the service definition matches protos/throughput.proto', () => {
  assert.deepStrictEqual(Object.keys(wire.SERVICE_DEFINITION).sort(), Object.keys(service).sort());
  for (const [name, def] of Object.entries(wire.SERVICE_DEFINITION)) {
    assert.strictEqual(def.path, service[name].path);
    assert.strictEqual(def.requestStream, service[name].requestStream);
    assert.strictEqual(def.responseStream, service[name].responseStream);
  }
});

test('DownloadRequest encodes as protobufjs does, and decodes what it writes', () => {
  for (const [count, bytes] of [[0, 0], [1, 1], [16, 65536], [2 ** 40, 2 ** 32 - 1], [0, 262144]]) {
    const ours = wire.encodeDownloadRequest({ messageCount: count, messageBytes: bytes });
    const theirs = service.Download.requestSerialize({ message_count: count, message_bytes: bytes });
    if (count && bytes) assert.deepStrictEqual(ours, theirs);
    assert.deepStrictEqual(wire.decodeDownloadRequest(theirs), { messageCount: count, messageBytes: bytes });
    assert.deepStrictEqual(service.Download.requestDeserialize(ours), { message_count: count, message_bytes: bytes });
  }
});

test('Chunk, PingRequest and PingReply: one bytes field', () => {
  for (const size of [0, 1, 127, 128, 16383, 16384, 262144, 2 ** 21 + 3]) {
    const payload = Buffer.alloc(size, 0x5a);
    const ours = wire.encodePayload(payload);
    const theirs = service.Upload.requestSerialize({ payload });
    if (size) assert.deepStrictEqual(ours, theirs);
    if (size) assert.deepStrictEqual(ours, service.Ping.requestSerialize({ payload }));
    assert.deepStrictEqual(wire.decodePayload(theirs), payload);
    assert.deepStrictEqual(wire.chunk(size), ours);
    assert.strictEqual(wire.payloadLength(ours), size);
    assert.deepStrictEqual(Buffer.from(service.Ping.responseDeserialize(ours).payload), payload);
    assert.deepStrictEqual(wire.decodePayload(ours), payload);
  }
});

test('unknown fields are skipped; the last payload field wins', () => {
  const extra = Buffer.concat([Buffer.from([0x10, 0x05]), wire.encodePayload(Buffer.from('ab')), wire.encodePayload(Buffer.from('xyz'))]);
  assert.deepStrictEqual(wire.decodePayload(extra), Buffer.from('xyz'));
  assert.strictEqual(wire.payloadLength(extra), 3);
  assert.throws(() => wire.decodePayload(Buffer.from([0x0a, 0x05, 0x01])), wire.WireError);
});

test('UploadSummary both ways', () => {
  for (const [messages, payloadBytes] of [[0, 0], [3, 100010], [2 ** 33, 2 ** 50]]) {
    const ours = wire.encodeUploadSummary({ messages, payloadBytes });
    const theirs = service.Upload.responseSerialize({ messages, payload_bytes: payloadBytes });
    if (messages && payloadBytes) assert.deepStrictEqual(ours, theirs);
    assert.deepStrictEqual(wire.decodeUploadSummary(theirs), { messages, payloadBytes });
    assert.deepStrictEqual(service.Upload.responseDeserialize(ours), { messages, payload_bytes: payloadBytes });
  }
});
