'use strict';
// The kit's grpc-js client: node client.js --config '<ClientProcess as JSON>' (or --worker:
// one trial per line of stdin).
// The process protocol (docs/process-protocol.md): a ready line once the config is valid,
// then one result line (a ClientResult, kit/results/client.py) or one error line.
// Semantics are the kit's grpcio client's (kit/clients/grpcio_client.py), except the
// warm-up: exactly one Ping per connection.

const protocol = require('./lib/protocol');
const { KitError, EXIT_BAD_CONFIG, EXIT_MEASUREMENT, EXIT_FAILED, EXIT_CANNOT_START } = protocol;

const STACK = 'grpc-js';
const WHO = 'grpc-js client';
let announced = false;

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    protocol.failure(`${WHO}: interrupted by ${sig}`, 128 + protocol.SIGNAL_NUMBERS[sig]);
  });
}
process.on('uncaughtException', (err) => {
  const code = err instanceof KitError ? err.exitCode : announced ? EXIT_FAILED : EXIT_CANNOT_START;
  protocol.failure(err instanceof KitError ? err.message : `${WHO}: ${err && err.stack ? err.stack : err}`, code);
});
process.on('unhandledRejection', (err) => {
  throw err;
});

const config = require('./lib/config');
const { CLIENT_OPTIONS, CLIENT_REFUSED, checkOptions } = require('./lib/options');
const { ReadPacer } = require('./lib/pacing');

const MIB = config.MIB;
const MAX_MESSAGE_BYTES = 128 * MIB;
const CONNECT_TIMEOUT_S = 10.0;
const NODE_DEFAULT_WINDOW = 65535;
const UPLOAD_IN_FLIGHT = 1; // messages handed to grpc-js and not yet written into HTTP/2 (more only adds tail)

const now = () => process.hrtime.bigint(); // uv_hrtime: CLOCK_MONOTONIC on Linux
const nsToS = (ns) => Number(ns) / 1e9;
const sToNs = (s) => BigInt(Math.round(s * 1e9));

function bad(message) {
  return new KitError(`${WHO}: ${message}`, EXIT_BAD_CONFIG);
}
function failed(message) {
  return new KitError(`${WHO}: ${message}`, EXIT_MEASUREMENT);
}

// --- what the trial asks of grpc-js ----------------------------------------------------------

function plan(trial) {
  const c = trial.client;
  if (c.kind !== STACK) throw bad(`trial.client.kind is ${config.pyRepr(c.kind)}; this program is the grpc-js client`);
  if (c.window_mode !== 'static' && c.window_mode !== 'dynamic') {
    throw bad(`window mode ${c.window_mode}: grpc-js is static or dynamic`);
  }
  if (c.credit_policy !== null) {
    throw bad(
      `credit_policy ${config.pyRepr(c.credit_policy)} is the kit's h2 client's; ` +
        'grpc-js (Node http2, nghttp2) returns credit its own way'
    );
  }
  if (c.max_frame_bytes !== null) {
    throw bad(
      `max_frame_bytes is the kit's h2 client's; grpc-js has no option for SETTINGS_MAX_FRAME_SIZE ` +
        '(it advertises Node\'s default, 16384)'
    );
  }
  if (c.pool_bytes !== null) throw bad("pool_bytes is the kit's h2 client's receive pool");
  if (c.conn_credit !== 'receipt') throw bad(`conn_credit ${c.conn_credit} is the kit's h2 client's`);
  const options = checkOptions(c.channel_options, CLIENT_OPTIONS, CLIENT_REFUSED);
  const fcw = options['grpc-node.flow_control_window'];
  if (c.window_mode === 'dynamic' && fcw !== undefined) {
    throw bad(
      "option 'grpc-node.flow_control_window' sets a static window: use window_mode static with " +
        `window_bytes ${fcw} (dynamic is grpc-js as shipped)`
    );
  }
  if (c.window_mode === 'static' && fcw !== undefined && fcw !== c.window_bytes) {
    throw bad(
      `option 'grpc-node.flow_control_window'=${fcw} contradicts the static window ${c.window_bytes} ` +
        '(the kit applies the window through that option)'
    );
  }
  if (c.conn_window_bytes !== null && !(c.window_mode === 'static' && c.conn_window_bytes === c.window_bytes)) {
    throw bad(
      `conn_window_bytes ${c.conn_window_bytes}: grpc-js sets the connection window only together with ` +
        'the stream window, to the same value (grpc-node.flow_control_window); it cannot be set separately'
    );
  }
  if (c.window_mode === 'static') options['grpc-node.flow_control_window'] = c.window_bytes;
  return options;
}

function streamsPerConnection(trial) {
  return Math.max(1, Math.ceil(trial.workload.streams / trial.client.connections));
}

const CREDIT_NOTE =
  'Node http2 (nghttp2) returns credit only in steps of half a window or more, one WINDOW_UPDATE at a time: ' +
  'up to half the window stays unreturned, expect about 0.5-0.6 x window/RTT';

function notes(trial, version, extra) {
  const c = trial.client;
  const w = trial.workload;
  const out = [];
  if (w.kind === 'upload') {
    const s = trial.server;
    const size = s.window_bytes !== null ? ` ${s.window_bytes}` : '';
    out.push(
      `grpc-js ${version} upload: the server's receive window governs it (server ${s.kind} ${s.window_mode}${size}); ` +
        'grpc-js takes up to 1 MiB of messages ahead of HTTP/2 (grpc.per_rpc_retry_buffer_size, retries on or off): ' +
        'the call ends up to 1 MiB of sending after its deadline'
    );
  } else if (c.window_mode === 'static') {
    const W = c.window_bytes;
    const conn = W > NODE_DEFAULT_WINDOW ? `connection window ${W} (session.setLocalWindowSize)` : 'connection window 65535 (raised only above 65535)';
    out.push(`grpc-js ${version}: grpc-node.flow_control_window=${W}: SETTINGS_INITIAL_WINDOW_SIZE ${W}, ${conn}; no BDP estimator`);
    const spc = Math.min(streamsPerConnection(trial), w.streams);
    let second = CREDIT_NOTE;
    if (spc > 1) {
      const rule = Math.min(W * spc, config.HTTP2_MAX_WINDOW_BYTES);
      second = `the connection window cannot be set apart: ${Math.max(W, NODE_DEFAULT_WINDOW)}, not ${W} x ${spc} streams = ${rule}; ${CREDIT_NOTE}`;
    }
    out.push(second);
  } else {
    out.push(
      `grpc-js ${version} as shipped (Node ${process.versions.node}): stream and connection windows 65535, ` +
        'no BDP estimator: they never grow'
    );
    out.push(CREDIT_NOTE);
  }
  const user = c.channel_options.map(([k, v]) => `${k}=${v}`);
  if (user.length) out.push(`channel options: ${user.join(', ')}`);
  return out.concat(extra || []);
}

// --- channels --------------------------------------------------------------------------------

function channelOptions(options, index) {
  return {
    // Each channel its own subchannel pool, and a distinct option besides: grpc-js shares a
    // subchannel (one TCP connection) between channels with the same target and options.
    'grpc.use_local_subchannel_pool': 1,
    'kit.channel_index': index,
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    ...options,
  };
}

function deadlineIn(s) {
  return new Date(Date.now() + Math.max(1, Math.round(s * 1000)));
}

function statusText(grpc, err) {
  const name = Object.keys(grpc.status).find((k) => grpc.status[k] === err.code) || String(err.code);
  return `${name}: ${err.details || err.message}`;
}

function connect(grpc, target, options, index, waitS) {
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), channelOptions(options, index));
  return new Promise((resolve, reject) => {
    client.waitForReady(deadlineIn(waitS), (err) => {
      if (err) {
        client.close();
        reject(failed(`cannot reach ${target} within ${waitS} s`));
      } else {
        resolve(client);
      }
    });
  });
}

function ping(grpc, wire, client, payload, timeoutS) {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      wire.PATHS.Ping,
      wire.identity,
      wire.identity,
      payload,
      { deadline: deadlineIn(timeoutS) },
      (err, reply) => (err ? reject(failed(statusText(grpc, err))) : resolve(reply))
    );
  });
}

// --- download --------------------------------------------------------------------------------

function download(grpc, wire, clients, trial, version) {
  const w = trial.workload;
  const rttMs = trial.link.delay_up_ms + trial.link.delay_down_ms;
  const fixed = config.messagesPerStream(w);
  const durationS = fixed ? w.timeout_s : config.timedDurationS(w, rttMs);
  const request = wire.encodeDownloadRequest({ messageCount: fixed || 0, messageBytes: w.message_bytes });
  const rate = w.read_rate_bits_s === null ? null : w.read_rate_bits_s / 8;
  const tallies = [];
  return new Promise((resolve, reject) => {
    const cpu0 = process.cpuUsage();
    const start = now();
    const deadline = start + sToNs(durationS);
    let pending = w.streams;
    let fastPending = 0;
    const watchdog = setTimeout(() => reject(failed('download timed out')), (w.timeout_s + 5) * 1000);

    const allDone = () => {
      clearTimeout(watchdog);
      const cpu = process.cpuUsage(cpu0);
      const errors = tallies.filter((t) => t.error).map((t) => t.error);
      if (errors.length) return reject(failed(`download failed: ${errors[0]}`));
      const fast = tallies.filter((t) => t.pacer === null);
      const timing = fixed && fast.length ? fast : tallies;
      const endNs = timing.reduce((m, t) => (t.finishNs > m ? t.finishNs : m), start);
      const messages = tallies.reduce((n, t) => n + t.messages, 0);
      const extra = [];
      if (w.slow_streams) {
        extra.push(
          `streams 1..${w.slow_streams} read one message per ${((w.message_bytes * 8) / w.read_rate_bits_s * 1000).toFixed(0)} ms ` +
            `(${w.read_rate_bits_s / 1e6} Mbit/s); grpc-js holds what they have not read (its stream buffer, up to 16 messages, ` +
            'and the window; not counted here)'
        );
      }
      resolve({
        client: STACK,
        bytes: tallies.reduce((n, t) => n + t.bytes, 0),
        messages,
        elapsed_s: nsToS(endNs - start),
        t_start_ns: start,
        t_end_ns: endNs,
        stream_bytes: tallies.map((t) => t.bytes),
        stream_finish_s: tallies.map((t) => nsToS(t.finishNs - start)),
        cpu_s: (cpu.user + cpu.system) / 1e6,
        notes: notes(trial, version, extra),
        slow_streams: w.slow_streams,
      });
    };

    const stopSlowReaders = () => {
      for (const t of tallies) if (t.pacer !== null && !t.done) t.stop();
    };

    for (let i = 0; i < w.streams; i += 1) {
      const client = clients[i % clients.length];
      const t = {
        messages: 0,
        bytes: 0,
        finishNs: start,
        error: '',
        pacer: rate !== null && i < w.slow_streams ? new ReadPacer(rate, start, i + 1, w.message_bytes) : null,
        done: false,
        ended: false,
        timer: null,
      };
      if (t.pacer === null) fastPending += 1;
      tallies.push(t);
      const call = client.makeServerStreamRequest(wire.PATHS.Download, wire.identity, wire.identity, request, {
        deadline: deadlineIn(w.timeout_s),
      });
      const finish = () => {
        if (t.done) return;
        t.done = true;
        if (t.timer) clearTimeout(t.timer);
        if (!t.ended) {
          t.ended = true;
          call.cancel();
        }
        if (t.pacer === null) {
          fastPending -= 1;
          if (fastPending === 0 && fixed) stopSlowReaders();
        }
        pending -= 1;
        if (pending === 0) allDone();
      };
      t.stop = () => {
        t.finishNs = now();
        finish();
      };
      call.on('data', (message) => {
        if (t.done) return;
        const at = now();
        t.messages += 1;
        t.bytes += wire.payloadLength(message);
        t.finishNs = at;
        if (fixed && t.messages >= fixed) {
          t.ended = true; // the server ends the call itself: no RST_STREAM from us
          return finish();
        }
        if (!fixed && at >= deadline) return finish();
        if (t.pacer === null) return;
        // A slow reader: the next message is read at its due time (grpc-js buffers meanwhile).
        const waitNs = t.pacer.dueNs - at;
        if (waitNs > 0n) {
          call.pause();
          t.timer = setTimeout(() => {
            t.timer = null;
            t.pacer.take(now() > t.pacer.dueNs ? now() : t.pacer.dueNs, w.message_bytes);
            if (!t.done) call.resume();
          }, Math.ceil(Number(waitNs) / 1e6));
        } else {
          t.pacer.take(at, w.message_bytes);
        }
      });
      call.on('error', (err) => {
        if (t.done) return;
        t.ended = true;
        t.error = statusText(grpc, err);
        finish();
      });
      call.on('end', () => {
        if (t.done) return;
        t.ended = true;
        if (fixed && t.messages < fixed) t.error = `the stream ended after ${t.messages} of ${fixed} messages`;
        finish();
      });
    }
  });
}

// --- unary -----------------------------------------------------------------------------------

async function unary(grpc, wire, client, trial, version) {
  const payload = wire.encodePayload(Buffer.alloc(16, 'x'));
  const latencies = [];
  const cpu0 = process.cpuUsage();
  const start = now();
  for (let i = 0; i < trial.workload.calls; i += 1) {
    const t0 = now();
    await ping(grpc, wire, client, payload, trial.workload.timeout_s);
    latencies.push(Number(now() - t0) / 1e6);
  }
  const end = now();
  const cpu = process.cpuUsage(cpu0);
  return {
    client: STACK,
    messages: latencies.length,
    elapsed_s: nsToS(end - start),
    t_start_ns: start,
    t_end_ns: end,
    cpu_s: (cpu.user + cpu.system) / 1e6,
    latencies_ms: latencies,
    notes: notes(trial, version),
  };
}

// --- upload ----------------------------------------------------------------------------------

function upload(grpc, wire, client, trial, version) {
  const w = trial.workload;
  const chunk = wire.chunk(w.message_bytes);
  const limit = config.messagesPerStream(w);
  const rttMs = trial.link.delay_up_ms + trial.link.delay_down_ms;
  const durationS = config.timedDurationS(w, rttMs);
  const callTimeoutS = config.uploadCallTimeoutS(trial);
  return new Promise((resolve, reject) => {
    const cpu0 = process.cpuUsage();
    const start = now();
    const deadline = start + sToNs(durationS);
    let sent = 0;
    let inFlight = 0;
    let ended = false;
    let timer = null;
    const call = client.makeClientStreamRequest(
      wire.PATHS.Upload,
      wire.identity,
      wire.identity,
      { deadline: deadlineIn(callTimeoutS) },
      (err, reply) => {
        const end = now();
        if (timer) clearTimeout(timer);
        if (err) {
          if (err.code === grpc.status.DEADLINE_EXCEEDED) {
            return reject(failed(`the server stopped taking the upload (no summary within ${callTimeoutS} s)`));
          }
          return reject(failed(statusText(grpc, err)));
        }
        const summary = wire.decodeUploadSummary(reply);
        const cpu = process.cpuUsage(cpu0);
        resolve({
          client: STACK,
          bytes: summary.payloadBytes,
          messages: summary.messages,
          elapsed_s: nsToS(end - start),
          t_start_ns: start,
          t_end_ns: end,
          stream_bytes: [summary.payloadBytes],
          stream_finish_s: [nsToS(end - start)],
          cpu_s: (cpu.user + cpu.system) / 1e6,
          notes: notes(trial, version),
          sent_bytes: sent * w.message_bytes,
        });
      }
    );
    call.on('error', () => {}); // the callback above reports it
    const more = () => (limit === null ? now() < deadline : sent < limit);
    const halfClose = () => {
      if (!ended) {
        ended = true;
        call.end();
      }
    };
    const pump = () => {
      while (!ended && inFlight < UPLOAD_IN_FLIGHT && more()) {
        sent += 1;
        inFlight += 1;
        call.write(chunk, () => {
          inFlight -= 1;
          pump();
        });
      }
      if (!ended && !more()) halfClose();
    };
    if (limit === null) timer = setTimeout(halfClose, durationS * 1000);
    pump();
  });
}

// --- the run ---------------------------------------------------------------------------------

async function run(processConfig, options, version) {
  const grpc = require('@grpc/grpc-js');
  const wire = require('./lib/wire');
  const trial = processConfig.trial;
  const host = processConfig.target_host;
  const target = host.includes(':') && !host.startsWith('[') ? `[${host}]:${processConfig.target_port}` : `${host}:${processConfig.target_port}`;
  const started = Date.now();
  const leftS = () => Math.max(0.05, trial.workload.timeout_s - (Date.now() - started) / 1000);
  const count = Math.min(trial.client.connections, trial.workload.streams);
  const waitS = Math.min(CONNECT_TIMEOUT_S, leftS());
  const clients = [];
  try {
    const connecting = [];
    for (let i = 0; i < count; i += 1) connecting.push(connect(grpc, target, options, i, waitS));
    const settled = await Promise.allSettled(connecting);
    for (const s of settled) if (s.status === 'fulfilled') clients.push(s.value);
    const failure = settled.find((s) => s.status === 'rejected');
    if (failure) throw failure.reason;
    if (trial.workload.warmup) {
      const warm = wire.encodePayload(Buffer.from('warm'));
      for (const client of clients) await ping(grpc, wire, client, warm, leftS());
    }
    const remaining = { ...trial, workload: { ...trial.workload, timeout_s: Math.max(1.0, leftS()) } };
    if (remaining.workload.kind === 'unary') return await unary(grpc, wire, clients[0], remaining, version);
    if (remaining.workload.kind === 'upload') return await upload(grpc, wire, clients[0], remaining, version);
    return await download(grpc, wire, clients, remaining, version);
  } finally {
    for (const client of clients) client.close();
  }
}

// node client.js --worker: a client worker (docs/process-protocol.md). One trial per line of
// stdin, each on channels (TCP connections) of its own, one result line each; the first error
// (a bad line too) is the final line and ends it; stdin's end: exit 0.
async function worker() {
  const version = require('@grpc/grpc-js/package.json').version;
  protocol.ready(0, STACK, version, true);
  announced = true;
  const lines = require('readline').createInterface({ input: process.stdin, crlfDelay: Infinity });
  let trials = 0;
  try {
    for await (const line of lines) {
      if (!line.trim()) continue;
      const processConfig = config.parseConfig(line, config.ClientProcess, 'worker line');
      const result = await run(processConfig, plan(processConfig.trial), version);
      trials += 1;
      protocol.trialResult(result, trials);
    }
  } catch (err) {
    if (err instanceof config.UsageError) return protocol.failure(`${WHO}: ${err.message}`, EXIT_BAD_CONFIG);
    if (err instanceof KitError) return protocol.failure(err.message, err.exitCode);
    return protocol.failure(`${WHO}: ${err && err.message ? err.message : err}`, EXIT_FAILED);
  }
  return process.exit(protocol.EXIT_OK);
}

function main() {
  if (process.argv.length === 3 && process.argv[2] === '--worker') return worker();
  let processConfig;
  let options;
  try {
    processConfig = config.parseConfigArgv(process.argv.slice(2), config.ClientProcess);
    options = plan(processConfig.trial);
  } catch (err) {
    if (err instanceof config.UsageError) return protocol.failure(`${WHO}: ${err.message}`, EXIT_BAD_CONFIG);
    if (err instanceof KitError) return protocol.failure(err.message, err.exitCode);
    throw err;
  }
  const version = require('@grpc/grpc-js/package.json').version;
  protocol.ready(0, STACK, version);
  announced = true;
  run(processConfig, options, version).then(
    (result) => protocol.result(result),
    (err) => {
      if (err instanceof KitError) return protocol.failure(err.message, err.exitCode);
      return protocol.failure(`${WHO}: ${err && err.message ? err.message : err}`, EXIT_FAILED);
    }
  );
}

main();
