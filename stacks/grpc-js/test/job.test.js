'use strict';
// Jobs decoded by @bufbuild/protobuf (lib/job.js), and the job's options (lib/options.js).
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const path = require('path');
const pb = require('../lib/worker_pb');
const { UsageError, jobFromLine, parseJob, byteLines } = require('../lib/job');
const { channelOptions, TABLES } = require('../lib/options');

const JOBS = path.join(__dirname, 'jobs');
const refuses = (fn, says) => assert.throws(fn, (e) => e instanceof UsageError && e.message.includes(says), says);

test("the kit's example jobs decode", () => {
  const works = {};
  for (const name of fs.readdirSync(JOBS)) {
    const schema = name.startsWith('client-') ? pb.ClientJobSchema : pb.ServerJobSchema;
    const job = parseJob(fs.readFileSync(path.join(JOBS, name), 'utf8'), schema);
    works[name] = job.work ? job.work.case : 'server';
  }
  assert.strictEqual(works['client-tonic-unary.json'], 'unary');
  assert.strictEqual(works['client-grpc-java-upload.json'], 'upload');
  const slow = parseJob(fs.readFileSync(path.join(JOBS, 'client-grpc-go-dynamic-slow.json'), 'utf8'), pb.ClientJobSchema);
  assert.strictEqual(slow.work.value.messagesPerStream, 32n); // 64-bit integers arrive as strings
  assert.strictEqual(slow.work.value.pacing.seed, 1n);
  assert.strictEqual(slow.work.value.pacing.rateBytesS, 1e6);
  const server = parseJob(fs.readFileSync(path.join(JOBS, 'server-grpc-go-static.json'), 'utf8'), pb.ServerJobSchema);
  assert.strictEqual(server.downloadBudgetBytes, 268435456n);
  assert.strictEqual(server.windows.streamBytes, 524288);
});

test('both field-name forms; 64-bit integers as strings or numbers', () => {
  const a = parseJob('{"target_port": 5, "download": {"messages_per_stream": "7"}}', pb.ClientJobSchema);
  const b = parseJob('{"targetPort": 5, "download": {"messagesPerStream": 7}}', pb.ClientJobSchema);
  assert.strictEqual(a.targetPort, b.targetPort);
  assert.strictEqual(a.work.value.messagesPerStream, b.work.value.messagesPerStream);
});

test('bad jobs: the library says why', () => {
  const client = (text) => () => parseJob(text, pb.ClientJobSchema);
  refuses(client('{"unary": {}, "bogus": 1}'), 'bad job: cannot decode message kit.worker.ClientJob from JSON: key "bogus" is unknown');
  refuses(client('{"unary": {}, "connections": "two"}'), 'ClientJob.connections');
  refuses(client('{"unary": {}, "connections": -1}'), 'out of range');
  refuses(client('{"unary": {}, "warmup": 1}'), 'ClientJob.warmup');
  refuses(client('{"unary": {}, "download": {}}'), 'oneof');
  refuses(client('{"target_port": 1}'), 'bad job: no work (download, unary or upload)');
  refuses(client('{x'), 'bad job: ');
  refuses(client('[]'), 'bad job: ');
  refuses(() => parseJob('{"listen_port": 1, "trial": {}}', pb.ServerJobSchema), 'key "trial" is unknown');
});

test('worker lines: blank ones skipped, bytes that are not UTF-8 refused', async () => {
  assert.strictEqual(jobFromLine(Buffer.from('  \r'), pb.ClientJobSchema), null);
  assert.strictEqual(jobFromLine(Buffer.from('{"unary": {"calls": 3}}'), pb.ClientJobSchema).work.value.calls, 3);
  refuses(() => jobFromLine(Buffer.from([0x7b, 0xff, 0x7d]), pb.ClientJobSchema), 'worker line: not UTF-8');
  const { Readable } = require('stream');
  const lines = [];
  for await (const line of byteLines(Readable.from([Buffer.from('a\nb'), Buffer.from('c\n\nd')]))) lines.push(line.toString());
  assert.deepStrictEqual(lines, ['a', 'bc', '', 'd']);
});

const option = (name, value) => parseJob(JSON.stringify({ options: [{ name, ...value }], unary: {} }), pb.ClientJobSchema).options;

test('options: grpc-js channel option names, integers, applied in order', () => {
  assert.deepStrictEqual(channelOptions('client', option('grpc.keepalive_time_ms', { int: '10000' })), {
    'grpc.keepalive_time_ms': 10000,
  });
  assert.deepStrictEqual(channelOptions('server', []), {});
  const names = [...TABLES.client].sort().join(', ');
  refuses(() => channelOptions('client', option('Foo', { int: '1' })), `option 'Foo' is not one of ${names}`);
  refuses(() => channelOptions('server', option('grpc.enable_retries', { int: '1' })), "option 'grpc.enable_retries' is not one of");
  refuses(() => channelOptions('client', option('grpc.enable_retries', { text: 'no' })), 'takes an integer (int), not a text');
  refuses(() => channelOptions('client', option('grpc.use_local_subchannel_pool', { int: '0' })), 'the program sets it');
  refuses(() => channelOptions('server', option('grpc-node.flow_control_window', { int: '65536' })), 'does not read it');
});
