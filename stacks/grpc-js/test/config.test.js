'use strict';
// The config decoder (lib/config.js) refuses what kit.results.codec refuses, in its words.
const test = require('node:test');
const assert = require('node:assert');
const config = require('../lib/config');
const { checkOptions, CLIENT_OPTIONS, CLIENT_REFUSED, SERVER_OPTIONS, SERVER_REFUSED } = require('../lib/options');

const parse = (json) => config.parseConfigArgv(['--config', JSON.stringify(json)], config.ClientProcess);
const refuses = (json, says) => assert.throws(() => parse(json), (e) => e instanceof config.UsageError && e.message.includes(says));

test('defaults fill what is left out', () => {
  const c = parse({ target_port: 5 });
  assert.strictEqual(c.target_host, '127.0.0.1');
  assert.strictEqual(c.trial.workload.message_bytes, 262144);
  assert.strictEqual(c.trial.client.kind, 'grpcio');
  assert.deepStrictEqual(c.trial.client.channel_options, []);
});

test('bad configs are refused with the field named', () => {
  refuses({ target_port: 1, nonsense: 1 }, 'ClientProcess: unknown field(s) nonsense');
  refuses({}, 'missing field(s) target_port');
  refuses({ target_port: 1, trial: { client: { kind: 'h3' } } }, "ClientProcess.trial.client.kind: 'h3' is not one of");
  refuses({ target_port: 1, trial: { workload: { streams: 0 } } }, 'ClientProcess.trial.workload: --streams: 0 is outside 1..1024');
  refuses({ target_port: 1, trial: { workload: { warmup: 1 } } }, 'is not true or false');
  refuses({ target_port: 1, trial: { client: { window_mode: 'static' } } }, 'a static window needs a size');
  refuses({ target_port: 1, trial: { client: { kind: 'grpc-js', window_mode: 'bdp-off' } } }, 'grpc-js is static or dynamic');
  refuses({ target_port: 1, trial: { client: { channel_options: [['a']] } } }, 'an array of 2 items');
  refuses({ target_port: 70000 }, 'target_port: 70000 is outside 1..65535');
  refuses({ target_port: 1, trial: { link: { rate_down_bits_s: 1000 }, workload: { timeout_s: 10 } } }, 'one 16 KiB frame takes 131 s');
  assert.throws(() => config.parseConfigArgv([], config.ClientProcess), /usage/);
  assert.throws(() => config.parseConfigArgv(['--config', '{x'], config.ClientProcess), /not JSON/);
});

test('a packet link with rate steps is accepted, a bad loss refused', () => {
  const steps = [{ rate_bits_s: 1e6, duration_ms: 100 }, { rate_bits_s: 0, duration_ms: 50 }];
  const link = { kind: 'packet', loss: 0.01, loss_burst_len: 2, queue_bytes: 65536, mtu: 1400, congestion: 'cubic', rate_steps: steps };
  const c = parse({ target_port: 1, trial: { link } });
  assert.deepStrictEqual(c.trial.link.rate_steps, steps);
  assert.strictEqual(c.trial.link.mtu, 1400);
  refuses({ target_port: 1, trial: { link: { kind: 'packet', loss: 0.9 } } }, 'ClientProcess.trial.link: loss: 0.9 is outside 0..0.5');
});

test('the derived values are the kit\'s', () => {
  const w = parse({ target_port: 1, trial: { workload: { bytes_per_stream: 1048577, message_bytes: 65536 } } }).trial.workload;
  assert.strictEqual(config.messagesPerStream(w), 17);
  assert.strictEqual(config.timedDurationS({ duration_s: null }, 200), 4);
  assert.strictEqual(config.timedDurationS({ duration_s: null }, 20), 2);
});

test('options: only the table, integers in range', () => {
  assert.deepStrictEqual(checkOptions([['grpc-node.max_session_memory', 10]], CLIENT_OPTIONS, CLIENT_REFUSED), {
    'grpc-node.max_session_memory': 10,
  });
  assert.throws(() => checkOptions([['Foo', 1]], CLIENT_OPTIONS, CLIENT_REFUSED), /option 'Foo' is not one of grpc-node.flow_control_window/);
  assert.throws(() => checkOptions([['grpc.enable_retries', 'no']], CLIENT_OPTIONS, CLIENT_REFUSED), /takes an integer in 0..1/);
  assert.throws(() => checkOptions([['grpc.use_local_subchannel_pool', 0]], CLIENT_OPTIONS, CLIENT_REFUSED), /the kit sets it/);
  assert.throws(() => checkOptions([['grpc-node.flow_control_window', 65536]], SERVER_OPTIONS, SERVER_REFUSED), /does not read it/);
});
