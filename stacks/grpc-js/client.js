'use strict';
// The kit's grpc-js client: node client.js --config '<ClientJob JSON>' (protos/worker.proto),
// or --worker: one ClientJob per line of stdin.
// The process protocol (docs/process-protocol.md): a ready line once the job is decoded, then
// one ClientAnswer line or one Failure line. It connects `connections` channels, warms each
// with one Ping, keeps them idle for idle_s, then runs the job's work; timeout_s bounds it all.

const protocol = require('./lib/protocol');
const { KitError, EXIT_BAD_JOB, EXIT_MEASUREMENT, EXIT_FAILED, EXIT_CANNOT_START } = protocol;

const STACK = 'grpc-js';
const WHO = 'grpc-js client';
const USAGE = "usage: client.js --config '<ClientJob as JSON>' | client.js --worker";
let announced = false;

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    protocol.failure(`${WHO}: interrupted by ${sig}`, 128 + protocol.SIGNAL_NUMBERS[sig]);
  });
}
process.on('uncaughtException', (err) => {
  const code = err instanceof KitError ? err.exitCode : announced ? EXIT_FAILED : EXIT_CANNOT_START;
  protocol.failure(err instanceof KitError ? err.message : `${WHO}: ${err && err.message ? err.message : err}`, code);
});
process.on('unhandledRejection', (err) => {
  throw err;
});

const pb = require('./lib/worker_pb');
const { UsageError, jobFromArgv, jobFromLine, byteLines } = require('./lib/job');
const { channelOptions, written } = require('./lib/options');
const { ReadPacer } = require('./lib/pacing');

const CONNECT_TIMEOUT_S = 10.0; // the most one connection may take, within the trial's timeout
const WHY_PROBE_MS = 250; // after a failed connect: a call without waitForReady, for the reason
const NODE_DEFAULT_WINDOW = 65535;
const FIELD_HEADER_BYTES = 16; // a Chunk's tag and length varint beside its payload
const MAX_TIMER_MS = 2 ** 31 - 1; // setTimeout's largest delay
const UPLOAD_IN_FLIGHT = 1; // messages handed to grpc-js and not yet written into HTTP/2 (more only adds tail)

const now = () => process.hrtime.bigint(); // uv_hrtime: CLOCK_MONOTONIC on Linux
const nsToS = (ns) => Number(ns) / 1e9;
const sToNs = (s) => BigInt(Math.round(s * 1e9));
const secondsText = (s) => String(Number(s.toPrecision(3)));

function failed(message) {
  return new KitError(`${WHO}: ${message}`, EXIT_MEASUREMENT);
}

// --- what the job asks of grpc-js ------------------------------------------------------------

// The grpc-js channel options for every connection (the job's, then its options) and the
// notes that say what was applied. Errors are UsageErrors (a job it cannot act on).
function plan(job, version) {
  if (job.h2) throw new UsageError("bad job: h2 is the kit's h2 client's receive policy; grpc-js has its own");
  const work = job.work;
  if (work.case === 'download' && work.value.streams === 0) throw new UsageError('bad job: a download on 0 streams');
  if (work.case === 'download' && work.value.slowStreams > 0 && !(work.value.pacing && work.value.pacing.rateBytesS > 0)) {
    throw new UsageError('bad job: slow streams without a read rate (download.pacing.rate_bytes_s)');
  }
  const user = channelOptions('client', job.options);
  const base = {
    // grpc-js's default is 4 MiB: the job's messages (and a Ping's reply) must fit.
    'grpc.max_receive_message_length': Math.max(job.messageBytes, 64) + FIELD_HEADER_BYTES,
  };
  const windows = job.windows;
  if (windows && windows.static) base['grpc-node.flow_control_window'] = windows.streamBytes;
  const options = { ...base, ...user };
  return { options, notes: notes(job, version, options, user) };
}

const CREDIT_NOTE =
  'Node http2 (nghttp2) returns credit only in steps of half a window or more, one WINDOW_UPDATE at a time: ' +
  'up to half the window stays unreturned, expect about 0.5-0.6 x window/RTT';

function notes(job, version, options, user) {
  const out = [];
  const work = job.work;
  if (work.case === 'upload') {
    const buffer = options['grpc.per_rpc_retry_buffer_size'];
    if (buffer === 0) {
      out.push(`grpc-js ${version} upload: one outstanding write; grpc.per_rpc_retry_buffer_size 0: each write waits for HTTP/2`);
    } else {
      const ahead = buffer === undefined ? '1 MiB (its default)' : `${buffer} bytes`;
      out.push(
        `grpc-js ${version} upload: one outstanding write; grpc-js takes up to ${ahead} of messages ahead of HTTP/2 ` +
          '(grpc.per_rpc_retry_buffer_size, retries on or off): the call ends up to that much sending after its deadline'
      );
    }
  } else if (options['grpc-node.flow_control_window'] !== undefined) {
    const W = options['grpc-node.flow_control_window'];
    const connWindow = Math.max(W, NODE_DEFAULT_WINDOW);
    const conn = W > NODE_DEFAULT_WINDOW ? `connection window ${W} (session.setLocalWindowSize)` : 'connection window 65535 (raised only above 65535)';
    out.push(`grpc-js ${version}: grpc-node.flow_control_window=${W}: SETTINGS_INITIAL_WINDOW_SIZE ${W}, ${conn}; no BDP estimator`);
    const asked = job.windows && job.windows.static ? job.windows.connBytes : 0;
    if (asked && asked !== connWindow) {
      out.push(`the connection window cannot be set apart in grpc-js: ${connWindow}, not the job's ${asked}; ${CREDIT_NOTE}`);
    } else {
      out.push(CREDIT_NOTE);
    }
  } else {
    out.push(
      `grpc-js ${version} as shipped (Node ${process.versions.node}): stream and connection windows 65535, ` +
        'no BDP estimator: they never grow'
    );
    out.push(CREDIT_NOTE);
  }
  for (const [key, value] of Object.entries(user)) out.push(written('client', key, value));
  if (work.case === 'download' && work.value.slowStreams > 0) {
    const d = work.value;
    const bitsS = d.pacing.rateBytesS * 8;
    const which = d.slowStreams === 1 ? 'stream 1' : `streams 1..${d.slowStreams}`;
    out.push(
      `${which} read one message per ${((job.messageBytes / d.pacing.rateBytesS) * 1000).toFixed(0)} ms ` +
        `(${Number((bitsS / 1e6).toPrecision(6))} Mbit/s); grpc-js holds what they have not read (its stream buffer, ` +
        'up to 16 messages, and the window; not counted here)'
    );
  }
  return out;
}

// --- calls -----------------------------------------------------------------------------------

function deadlineIn(s) {
  return new Date(Date.now() + Math.max(1, Math.round(s * 1000)));
}

function statusName(grpc, code) {
  return Object.keys(grpc.status).find((k) => grpc.status[k] === code) || String(code);
}

// A failed call in one line; a DEADLINE_EXCEEDED names the limit that set the deadline.
function callError(grpc, err, what, limit) {
  if (err.code === grpc.status.DEADLINE_EXCEEDED && limit) {
    return `${what}: DEADLINE_EXCEEDED: the call's deadline, ${limit}, passed`;
  }
  return `${what}: ${statusName(grpc, err.code)}: ${err.details || err.message}`;
}

// Why a channel is not ready, from a call that does not wait for it: grpc-js fails it at once
// with the last connection error (or the resolver's), or it is still connecting.
function whyNotReady(grpc, wire, client) {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      wire.PATHS.Ping,
      wire.identity,
      wire.identity,
      wire.encodePayload(Buffer.from('why')),
      { deadline: new Date(Date.now() + WHY_PROBE_MS) },
      (err) => {
        if (!err) return resolve('it answered only just now');
        if (err.code === grpc.status.DEADLINE_EXCEEDED) return resolve('still connecting: no answer');
        return resolve(connectionError(String(err.details || err.message)));
      }
    );
  });
}

const ERRNO_TEXT = {
  EMFILE: 'too many open files (EMFILE)',
  ENFILE: 'too many open files in the system (ENFILE)',
  ECONNREFUSED: 'connection refused (ECONNREFUSED)',
  ECONNRESET: 'connection reset (ECONNRESET)',
  EHOSTUNREACH: 'host unreachable (EHOSTUNREACH)',
  ENETUNREACH: 'network unreachable (ENETUNREACH)',
  ETIMEDOUT: 'connection timed out (ETIMEDOUT)',
  EADDRNOTAVAIL: 'no local address for it (EADDRNOTAVAIL)',
};

// grpc-js's "No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:9.
// Resolution note: " as "connection refused (ECONNREFUSED): connect ECONNREFUSED 127.0.0.1:9".
function connectionError(details) {
  const last = /Last error: (?:Error: )?(.*?)\.?(?: Resolution note: .*)?$/.exec(details);
  const text = last ? last[1] : details.replace(/\.? Resolution note: $/, '');
  const errno = /\b(E[A-Z]+)\b/.exec(text);
  return errno && ERRNO_TEXT[errno[1]] ? `${ERRNO_TEXT[errno[1]]}: ${text}` : text;
}

function connect(grpc, wire, target, options, index, waitS, waitLimit) {
  // Each channel its own subchannel pool, and a distinct option besides: grpc-js shares a
  // subchannel (one TCP connection) between channels with the same target and options.
  const channel = { ...options, 'grpc.use_local_subchannel_pool': 1, 'kit.channel_index': index };
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), channel);
  return new Promise((resolve, reject) => {
    client.waitForReady(deadlineIn(waitS), (err) => {
      if (!err) return resolve(client);
      whyNotReady(grpc, wire, client).then((why) => {
        client.close();
        reject(failed(`cannot reach ${target} within ${secondsText(waitS)} s, ${waitLimit} (${why}); is the server running?`));
      });
    });
  });
}

function ping(grpc, wire, client, payload, deadline, what, limit) {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(wire.PATHS.Ping, wire.identity, wire.identity, payload, { deadline }, (err, reply) =>
      err ? reject(failed(callError(grpc, err, what, limit))) : resolve(reply)
    );
  });
}

// --- download --------------------------------------------------------------------------------

// Streams round-robin over the channels. Timed (messages_per_stream 0): every stream reads
// until timed_s after the timed start, when a timer stops whatever still runs (a paused slow
// reader too). Fixed: each stream asks for messages_per_stream messages; the last full-speed
// stream's last message ends the timed phase and stops the slow readers.
function download(grpc, wire, clients, job, workS, limit, runNotes) {
  const d = job.work.value;
  const messageBytes = job.messageBytes;
  const fixed = Number(d.messagesPerStream);
  const request = wire.encodeDownloadRequest({ messageCount: fixed, messageBytes });
  const tallies = [];
  return new Promise((resolve, reject) => {
    const cpu0 = process.cpuUsage();
    const start = now();
    const timedEnd = start + sToNs(d.timedS);
    const deadline = deadlineIn(workS);
    let pending = d.streams;
    let fastPending = 0;
    let phaseTimer = null;

    const stopAll = (which) => {
      for (const t of tallies) if (!t.done && which(t)) t.stop();
    };

    const allDone = () => {
      if (phaseTimer) clearTimeout(phaseTimer);
      const cpu = process.cpuUsage(cpu0);
      const errors = tallies.filter((t) => t.error).map((t) => t.error);
      if (errors.length) return reject(failed(errors[0]));
      const fast = tallies.filter((t) => t.pacer === null);
      const timing = fixed && fast.length ? fast : tallies;
      const endNs = timing.reduce((m, t) => (t.finishNs > m ? t.finishNs : m), start);
      resolve({
        client: STACK,
        bytes: BigInt(tallies.reduce((n, t) => n + t.bytes, 0)),
        messages: BigInt(tallies.reduce((n, t) => n + t.messages, 0)),
        elapsedS: nsToS(endNs - start),
        tStartNs: start,
        tEndNs: endNs,
        streamBytes: tallies.map((t) => BigInt(t.bytes)),
        streamFinishS: tallies.map((t) => nsToS(t.finishNs - start)),
        cpuS: (cpu.user + cpu.system) / 1e6,
        notes: runNotes,
        slowStreams: d.slowStreams,
      });
    };

    if (!fixed) {
      phaseTimer = setTimeout(() => {
        phaseTimer = null;
        stopAll(() => true);
      }, Math.min(MAX_TIMER_MS, Math.ceil(d.timedS * 1000)));
    }

    for (let i = 0; i < d.streams; i += 1) {
      const client = clients[i % clients.length];
      const slow = i < d.slowStreams;
      const t = {
        messages: 0,
        bytes: 0,
        finishNs: start,
        error: '',
        pacer: slow ? new ReadPacer(d.pacing.rateBytesS, start, d.pacing.seed + BigInt(i), messageBytes, d.pacing.jitter) : null,
        done: false,
        ended: false,
        timer: null,
        stop: null,
      };
      if (!slow) fastPending += 1;
      tallies.push(t);
      const what = `Download stream ${i + 1} of ${d.streams}`;
      const call = client.makeServerStreamRequest(wire.PATHS.Download, wire.identity, wire.identity, request, { deadline });
      const finish = () => {
        if (t.done) return;
        t.done = true;
        if (t.timer) clearTimeout(t.timer);
        t.timer = null;
        if (!t.ended) {
          t.ended = true;
          call.cancel();
        }
        if (t.error) stopAll(() => true); // a failed stream fails the run: stop the others now
        if (t.pacer === null) {
          fastPending -= 1;
          if (fastPending === 0) stopAll(() => true); // only slow readers are left
        }
        pending -= 1;
        if (pending === 0) allDone();
      };
      t.stop = () => {
        if (t.done) return;
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
        if (!fixed && at >= timedEnd) return finish();
        if (t.pacer === null) return;
        // A slow reader: the next message is read at its due time (grpc-js buffers meanwhile).
        const waitNs = t.pacer.dueNs - at;
        if (waitNs > 0n) {
          call.pause();
          t.timer = setTimeout(() => {
            t.timer = null;
            if (t.done) return;
            const woke = now();
            t.pacer.take(woke > t.pacer.dueNs ? woke : t.pacer.dueNs, messageBytes);
            call.resume();
          }, Math.min(MAX_TIMER_MS, Math.ceil(Number(waitNs) / 1e6)));
        } else {
          t.pacer.take(at, messageBytes);
        }
      });
      call.on('error', (err) => {
        if (t.done) return;
        t.ended = true;
        t.error = callError(grpc, err, what, limit);
        if (t.messages === 0) t.error += ' before its first message (did the call start? the server may allow fewer concurrent streams)';
        finish();
      });
      call.on('end', () => {
        if (t.done) return;
        t.ended = true;
        if (fixed && t.messages < fixed) t.error = `${what}: the stream ended after ${t.messages} of ${fixed} messages`;
        finish();
      });
    }
  });
}

// --- unary -----------------------------------------------------------------------------------

async function unary(grpc, wire, client, job, workS, limit, runNotes) {
  const payload = wire.encodePayload(Buffer.alloc(16, 'x'));
  const calls = job.work.value.calls;
  const deadline = deadlineIn(workS);
  const latencies = [];
  const cpu0 = process.cpuUsage();
  const start = now();
  for (let i = 0; i < calls; i += 1) {
    const t0 = now();
    await ping(grpc, wire, client, payload, deadline, `Ping call ${i + 1} of ${calls}`, limit);
    latencies.push(Number(now() - t0) / 1e6);
  }
  const end = now();
  const cpu = process.cpuUsage(cpu0);
  return {
    client: STACK,
    messages: BigInt(latencies.length),
    elapsedS: nsToS(end - start),
    tStartNs: start,
    tEndNs: end,
    cpuS: (cpu.user + cpu.system) / 1e6,
    latenciesMs: latencies,
    notes: runNotes,
  };
}

// --- upload ----------------------------------------------------------------------------------

// One client-streaming call: write until timed_s after the timed start (or `messages`
// messages), one outstanding write at a time, then half-close and wait for the summary. The
// call's deadline is call_timeout_s after the timed start.
function upload(grpc, wire, client, job, runNotes) {
  const u = job.work.value;
  const messageBytes = job.messageBytes;
  const chunk = wire.chunk(messageBytes);
  const limit = Number(u.messages);
  return new Promise((resolve, reject) => {
    const cpu0 = process.cpuUsage();
    const start = now();
    const timedEnd = start + sToNs(u.timedS);
    let sent = 0;
    let inFlight = 0;
    let ended = false;
    let timer = null;
    const call = client.makeClientStreamRequest(
      wire.PATHS.Upload,
      wire.identity,
      wire.identity,
      { deadline: deadlineIn(u.callTimeoutS) },
      (err, reply) => {
        const end = now();
        if (timer) clearTimeout(timer);
        if (err) {
          if (err.code === grpc.status.DEADLINE_EXCEEDED) {
            return reject(
              failed(`Upload: DEADLINE_EXCEEDED: the server stopped taking the upload (no summary within the call's ` +
                `${secondsText(u.callTimeoutS)} s, upload.call_timeout_s)`)
            );
          }
          return reject(failed(callError(grpc, err, 'Upload', null)));
        }
        const summary = wire.decodeUploadSummary(reply);
        const cpu = process.cpuUsage(cpu0);
        resolve({
          client: STACK,
          bytes: BigInt(summary.payloadBytes),
          messages: BigInt(summary.messages),
          elapsedS: nsToS(end - start),
          tStartNs: start,
          tEndNs: end,
          streamBytes: [BigInt(summary.payloadBytes)],
          streamFinishS: [nsToS(end - start)],
          cpuS: (cpu.user + cpu.system) / 1e6,
          notes: runNotes,
          sentBytes: BigInt(sent) * BigInt(messageBytes),
        });
      }
    );
    call.on('error', () => {}); // the callback above reports it
    const more = () => (limit ? sent < limit : now() < timedEnd);
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
    if (!limit) timer = setTimeout(halfClose, Math.min(MAX_TIMER_MS, Math.ceil(u.timedS * 1000)));
    pump();
  });
}

// --- the run ---------------------------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(job, planned) {
  const grpc = require('@grpc/grpc-js');
  const wire = require('./lib/wire');
  const host = job.targetHost;
  const target = host.includes(':') ? `[${host}]:${job.targetPort}` : `${host}:${job.targetPort}`;
  const started = Date.now();
  const timeoutS = job.timeoutS;
  const trialLimit = `the trial's timeout_s of ${secondsText(timeoutS)} s`;
  const leftS = () => timeoutS - (Date.now() - started) / 1000;
  const work = job.work.case;
  const streams = work === 'download' ? job.work.value.streams : 1;
  const count = Math.max(1, Math.min(job.connections, streams));
  const waitS = Math.max(0.05, Math.min(CONNECT_TIMEOUT_S, leftS()));
  const waitLimit = waitS < leftS() ? "the client's connect limit" : trialLimit;
  const clients = [];
  try {
    const connecting = [];
    for (let i = 0; i < count; i += 1) connecting.push(connect(grpc, wire, target, planned.options, i, waitS, waitLimit));
    const settled = await Promise.allSettled(connecting);
    for (const s of settled) if (s.status === 'fulfilled') clients.push(s.value);
    const failure = settled.find((s) => s.status === 'rejected');
    if (failure) throw failure.reason;
    const trialDeadline = new Date(started + timeoutS * 1000);
    if (job.warmup) {
      const warm = wire.encodePayload(Buffer.from('warm'));
      for (let i = 0; i < clients.length; i += 1) {
        await ping(grpc, wire, clients[i], warm, trialDeadline, `warm-up Ping on connection ${i + 1}`, trialLimit);
      }
    }
    if (job.idleS > 0) {
      if (job.idleS >= leftS()) {
        await sleep(Math.max(0, leftS() * 1000));
        throw failed(`the idle gap of ${secondsText(job.idleS)} s (idle_s) ran past ${trialLimit}`);
      }
      await sleep(job.idleS * 1000);
    }
    // The work gets what is left of the trial's timeout (at least a second, as grpcio's).
    const workS = Math.max(1.0, leftS());
    const limit = `what was left of ${trialLimit} (${secondsText(workS)} s)`;
    if (work === 'unary') return await unary(grpc, wire, clients[0], job, workS, limit, planned.notes);
    if (work === 'upload') return await upload(grpc, wire, clients[0], job, planned.notes);
    return await download(grpc, wire, clients, job, workS, limit, planned.notes);
  } finally {
    for (const client of clients) client.close();
  }
}

function grpcVersion() {
  return require('@grpc/grpc-js/package.json').version;
}

// node client.js --worker: a client worker (docs/process-protocol.md). One job per line of
// stdin, each on channels (TCP connections) of its own, one answer line each; the first error
// (a bad line too) is the final line and ends it; stdin's end: exit 0.
async function worker() {
  const v = grpcVersion();
  protocol.ready(0, STACK, v, true);
  announced = true;
  let trials = 0;
  try {
    for await (const bytes of byteLines(process.stdin)) {
      const job = jobFromLine(bytes, pb.ClientJobSchema);
      if (job === null) continue;
      const result = await run(job, plan(job, v));
      trials += 1;
      protocol.clientAnswer(result, trials);
    }
  } catch (err) {
    if (err instanceof UsageError) return protocol.failure(`${WHO}: ${err.message}`, EXIT_BAD_JOB);
    if (err instanceof KitError) return protocol.failure(err.message, err.exitCode);
    return protocol.failure(`${WHO}: ${err && err.message ? err.message : err}`, EXIT_FAILED);
  }
  return process.exit(protocol.EXIT_OK);
}

function main() {
  const args = process.argv.slice(2);
  if (args.length === 1 && args[0] === '--worker') return worker();
  let job;
  let planned;
  const v = grpcVersion();
  try {
    job = jobFromArgv(args, pb.ClientJobSchema, USAGE);
    planned = plan(job, v);
  } catch (err) {
    if (err instanceof UsageError) return protocol.failure(`${WHO}: ${err.message}`, EXIT_BAD_JOB);
    throw err;
  }
  protocol.ready(0, STACK, v);
  announced = true;
  return run(job, planned).then(
    (result) => protocol.clientAnswer(result, 0),
    (err) => {
      if (err instanceof KitError) return protocol.failure(err.message, err.exitCode);
      return protocol.failure(`${WHO}: ${err && err.message ? err.message : err}`, EXIT_FAILED);
    }
  );
}

main();
