'use strict';
// The programs as the kit runs them: one line and exit 2 for a bad job, and a server and a
// client over loopback (a fixed download, a worker's three trials, a slow reader that stops
// with the timed phase, the server's limits as gRPC statuses).
const test = require('node:test');
const assert = require('node:assert');
const path = require('path');
const { spawn, spawnSync } = require('child_process');

const CLIENT = path.join(__dirname, '..', 'client.js');
const SERVER = path.join(__dirname, '..', 'server.js');
const MIB = 2 ** 20;

function runToEnd(args, input) {
  const out = spawnSync(process.execPath, args, { input: input || '', encoding: 'utf8', timeout: 30000 });
  const lines = out.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { code: out.status, lines, stderr: out.stderr };
}

function oneError(args, code, says, input) {
  const r = runToEnd(args, input);
  const last = r.lines[r.lines.length - 1];
  assert.strictEqual(r.code, code, JSON.stringify(r));
  assert.deepStrictEqual(Object.keys(last).sort(), ['error', 'exit_code'], JSON.stringify(r));
  assert.strictEqual(last.exit_code, code);
  assert.ok(last.error.includes(says), `${last.error} does not say ${says}`);
  return r;
}

test('bad jobs: one error line, exit 2', () => {
  oneError([CLIENT, '--config', '{"unary": {}, "nope": 1}'], 2, 'grpc-js client: bad job: cannot decode message kit.worker.ClientJob');
  oneError([CLIENT, '--config={"unary": {}, "timeout_s": "soon"}'], 2, 'grpc-js client: bad job: ');
  oneError([CLIENT, '--config', '{}'], 2, 'grpc-js client: bad job: no work');
  oneError([CLIENT], 2, 'grpc-js client: usage: ');
  oneError([CLIENT, '--config', '{}', 'extra'], 2, 'grpc-js client: usage: ');
  oneError([SERVER, '--config', '{"listen_port": "x"}'], 2, 'grpc-js server: bad job: ');
  oneError([CLIENT, '--config', '{"unary": {}, "options": [{"name": "Foo", "int": "1"}]}'], 2, "grpc-js client: option 'Foo' is not one of grpc-node.flow_control_window, ");
  oneError([SERVER, '--config', '{"options": [{"name": "grpc.max_concurrent_streams", "int": "0"}]}'], 2, "option 'grpc.max_concurrent_streams' is 0");
  const bytes = (program) => spawnSync('/bin/sh', ['-c', `exec "$0" "$1" --config "$(printf '{"target_host": "\\377", "unary": {}}')"`, process.execPath, program], { encoding: 'utf8' });
  for (const [program, who] of [[CLIENT, 'client'], [SERVER, 'server']]) {
    const r = bytes(program);
    assert.strictEqual(r.status, 2);
    assert.deepStrictEqual(JSON.parse(r.stdout), { error: `grpc-js ${who}: --config: not UTF-8`, exit_code: 2 });
  }
  const worker = oneError([CLIENT, '--worker'], 2, 'grpc-js client: worker line: not UTF-8', Buffer.from([0x7b, 0xff, 0x7d, 0x0a]));
  assert.strictEqual(worker.lines[0].worker, true);
});

function startServer(job) {
  const proc = spawn(process.execPath, [SERVER, '--config', JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => {
    out += d;
  });
  const ready = new Promise((resolve, reject) => {
    proc.stdout.on('data', () => {
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
    });
    proc.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  const stop = () =>
    new Promise((resolve) => {
      proc.removeAllListeners('exit');
      proc.on('exit', (code) => resolve({ code, lines: out.split('\n').filter(Boolean).map((l) => JSON.parse(l)) }));
      proc.kill('SIGTERM');
    });
  return { ready, stop };
}

const SERVER_JOB = {
  listen_host: '127.0.0.1',
  download_budget_bytes: String(MIB),
  shared_message_max_bytes: String(256 * 1024),
  message_cache_bytes: String(4 * MIB),
  max_message_bytes: String(4 * MIB),
  max_echo_bytes: '1024',
  max_concurrent_streams: 100,
};

test('server and client over loopback', async () => {
  const server = startServer(SERVER_JOB);
  const { port } = await server.ready;
  const job = (work, extra) => ({ target_host: '127.0.0.1', target_port: port, connections: 2, warmup: true, timeout_s: 20, message_bytes: 65536, ...work, ...extra });
  try {
    // a fixed download: each stream its messages, the bytes counted
    const fixed = runToEnd([CLIENT, '--config', JSON.stringify(job({ download: { streams: 3, messages_per_stream: '8' } }))]);
    assert.strictEqual(fixed.code, 0, JSON.stringify(fixed));
    const result = fixed.lines[1].result;
    assert.strictEqual(result.bytes, String(3 * 8 * 65536));
    assert.deepStrictEqual(result.stream_bytes, ['524288', '524288', '524288']);
    assert.strictEqual(result.client, 'grpc-js');
    // a worker: three trials, one answer each, numbered; EOF ends it with 0
    const line = JSON.stringify(job({ unary: { calls: 3 } }));
    const worker = runToEnd([CLIENT, '--worker'], `${line}\n\n${line}\n${line}\n`);
    assert.strictEqual(worker.code, 0, JSON.stringify(worker));
    assert.deepStrictEqual(worker.lines.slice(1).map((l) => l.client_trial), [1, 2, 3]);
    // a slow reader at 125 B/s (one message per 524 s) stops when the 1 s timed phase ends
    const slowJob = job({ download: { streams: 2, slow_streams: 1, timed_s: 1, pacing: { rate_bytes_s: 125, jitter: 0.5, seed: '1' } } });
    const t0 = Date.now();
    const slow = runToEnd([CLIENT, '--config', JSON.stringify(slowJob)]);
    assert.strictEqual(slow.code, 0, JSON.stringify(slow));
    assert.ok(Date.now() - t0 < 8000, `${Date.now() - t0} ms`);
    const s = slow.lines[1].result;
    assert.ok(s.elapsed_s >= 1 && s.elapsed_s < 1.5, String(s.elapsed_s));
    assert.strictEqual(s.stream_bytes[0], '65536'); // its first message, then nothing was due
    // the server's limits: a message above max_message_bytes, a call beyond the budget
    const big = runToEnd([CLIENT, '--config', JSON.stringify(job({ message_bytes: 8 * MIB, download: { streams: 1, timed_s: 1 } }))]);
    assert.strictEqual(big.code, 4);
    assert.match(big.lines[1].error, /INVALID_ARGUMENT: message_bytes 8388608 is above this server's maximum 4194304/);
    const over = runToEnd([CLIENT, '--config', JSON.stringify(job({ message_bytes: 768 * 1024, download: { streams: 1, timed_s: 1 } }))]);
    assert.strictEqual(over.code, 4);
    assert.match(over.lines[1].error, /RESOURCE_EXHAUSTED: this download would hold 1.5 MiB; .* budget \(download_budget_bytes\)/);
    // file descriptors run out: the line says so
    const many = JSON.stringify(job({ timeout_s: 2, connections: 100, download: { streams: 100, timed_s: 1 } }));
    const emfile = spawnSync('/bin/sh', ['-c', 'ulimit -n 40 && exec "$0" "$1" --config "$2"', process.execPath, CLIENT, many], { encoding: 'utf8' });
    assert.strictEqual(emfile.status, 4, emfile.stdout);
    assert.match(emfile.stdout, /cannot reach 127\.0\.0\.1:\d+ within 2 s, the trial's timeout_s of 2 s \(too many open files \(EMFILE\)/);
  } finally {
    const stopped = await server.stop();
    assert.strictEqual(stopped.code, 0);
    const answer = stopped.lines[stopped.lines.length - 1];
    assert.strictEqual(answer.result.refused, '1');
    assert.ok(Number(answer.result.rpcs) >= 10, JSON.stringify(answer));
  }
});
