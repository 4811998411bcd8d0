'use strict';
// The kit's grpc-js server: node server.js --config '<ServerJob JSON>' (protos/worker.proto).
// The process protocol (docs/process-protocol.md): a ready line once it listens; SIGTERM or
// SIGINT stop it (tryShutdown, forceShutdown after a short grace), then its ServerAnswer
// ({"result": {"rpcs": N, "refused": M}}) and exit 0. It keeps the limits of the job, as the
// grpcio server does (servers/grpcio_server.py): the download budget, messages shared per
// size, the largest download message and echo, SETTINGS_MAX_CONCURRENT_STREAMS.

const protocol = require('./lib/protocol');
const { KitError, EXIT_BAD_JOB, EXIT_CANNOT_START, EXIT_FAILED } = protocol;

const STACK = 'grpc-js';
const WHO = 'grpc-js server';
const USAGE = "usage: server.js --config '<ServerJob as JSON>'";
const GRACE_MS = 300; // tryShutdown's grace before forceShutdown (stop within a second)
// A Chunk's or PingRequest's field header (tag and length varint) beside its payload.
const FIELD_HEADER_BYTES = 16;

let announced = false;
// SIGTERM/SIGINT: the server's normal end. Before it listens there is nothing to stop.
let stop = null;
let stopRequested = false;
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    if (stopRequested) return;
    stopRequested = true;
    if (stop) stop();
    else protocol.serverAnswer({});
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
const { UsageError, jobFromArgv } = require('./lib/job');
const { channelOptions } = require('./lib/options');
const { DownloadBudget, MessageCache } = require('./lib/budget');

// What grpc-js is handed: the job's limits, then the job's options (they win).
function serverOptions(job) {
  const base = {
    // grpc-js's default is 4 MiB: the largest upload message and echo the job allows.
    'grpc.max_receive_message_length': Math.max(Number(job.maxMessageBytes), Number(job.maxEchoBytes)) + FIELD_HEADER_BYTES,
    'grpc.max_send_message_length': -1,
  };
  if (job.maxConcurrentStreams) base['grpc.max_concurrent_streams'] = job.maxConcurrentStreams;
  const options = { ...base, ...channelOptions('server', job.options) };
  if (options['grpc.max_concurrent_streams'] === 0) {
    throw new UsageError(
      "option 'grpc.max_concurrent_streams' is 0: SETTINGS_MAX_CONCURRENT_STREAMS 0 lets no call start " +
        '(clients would wait for their deadline)'
    );
  }
  return options;
}

// grpc-js 1.14's Server has no receive-window option (its client has
// grpc-node.flow_control_window; the server never reads it). A static server window is set
// under it, in node:http2, with the two calls grpc-js's client makes for that option
// (transport.ts): SETTINGS_INITIAL_WINDOW_SIZE in the server's settings, and the connection
// window per session (session.setLocalWindowSize). grpc-js creates its http2 server with
// http2.createServer(options) when it binds: that is where the settings go in.
function applyStaticWindow(http2, streamBytes, connBytes) {
  const create = http2.createServer;
  http2.createServer = function createServer(options, ...rest) {
    const settings = { ...(options && options.settings), initialWindowSize: streamBytes };
    const server = create.call(this, { ...options, settings }, ...rest);
    server.on('session', (session) => {
      try {
        session.setLocalWindowSize(connBytes);
      } catch (err) {
        process.stderr.write(`${WHO}: setLocalWindowSize(${connBytes}) failed: ${err.message}\n`);
      }
    });
    return server;
  };
}

function sizeText(n) {
  for (const [unit, size] of [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]]) {
    if (n >= size) return `${Number((n / size).toFixed(2))} ${unit}`;
  }
  return `${n} B`;
}

function handlers(grpc, wire, job, counter) {
  const maxMessageBytes = Number(job.maxMessageBytes);
  const maxEchoBytes = Number(job.maxEchoBytes);
  const budget = new DownloadBudget(Number(job.downloadBudgetBytes), Number(job.sharedMessageMaxBytes));
  const cache = new MessageCache(Number(job.messageCacheBytes), budget.sharedMaxBytes, wire.chunk);
  counter.budget = budget;
  const fail = (code, details) => ({ code, details });
  return {
    Download(call) {
      counter.rpcs += 1;
      let request;
      try {
        request = wire.decodeDownloadRequest(call.request);
      } catch (err) {
        call.emit('error', fail(grpc.status.INVALID_ARGUMENT, `DownloadRequest: ${err.message}`));
        return;
      }
      if (request.messageBytes > maxMessageBytes) {
        const details = `message_bytes ${request.messageBytes} is above this server's maximum ${maxMessageBytes}`;
        call.emit('error', fail(grpc.status.INVALID_ARGUMENT, details));
        return;
      }
      const size = Math.max(1, request.messageBytes);
      const heldBefore = budget.held;
      const release = budget.take(size);
      if (release === null) {
        const details =
          `this download would hold ${sizeText(budget.charge(size))}; the server's calls already hold ` +
          `${sizeText(heldBefore)} of its ${sizeText(budget.maxBytes)} budget (download_budget_bytes)`;
        call.emit('error', fail(grpc.status.RESOURCE_EXHAUSTED, details));
        return;
      }
      let stopped = false;
      const ended = () => {
        stopped = true;
        release();
      };
      // However it ends: sent and finished, cancelled by the client or its connection, failed.
      for (const event of ['finish', 'close', 'cancelled', 'error']) call.once(event, ended);
      const message = size <= budget.sharedMaxBytes ? cache.get(size) : wire.chunk(size);
      let remaining = request.messageCount || Infinity;
      // Backpressure: grpc-js serializes one message at a time (a copy with the gRPC frame
      // header) and takes the next when HTTP/2 has taken it; write() says false once its queue
      // (of references to the one message) is full, and 'drain' says when to go on.
      const pump = () => {
        while (!stopped && remaining > 0) {
          remaining -= 1;
          if (!call.write(message)) {
            if (remaining > 0) call.once('drain', pump);
            else call.end();
            return;
          }
        }
        if (!stopped) call.end();
      };
      pump();
    },

    Ping(call, callback) {
      counter.rpcs += 1;
      let payload;
      try {
        payload = wire.decodePayload(call.request);
      } catch (err) {
        callback(fail(grpc.status.INVALID_ARGUMENT, `PingRequest: ${err.message}`));
        return;
      }
      if (payload.length > maxEchoBytes) {
        const details = `ping payload of ${payload.length} bytes is above the echo maximum ${maxEchoBytes}`;
        callback(fail(grpc.status.INVALID_ARGUMENT, details));
        return;
      }
      callback(null, wire.encodePayload(payload));
    },

    Upload(call, callback) {
      counter.rpcs += 1;
      let messages = 0;
      let payloadBytes = 0;
      let failed = false;
      call.on('data', (message) => {
        if (failed) return;
        try {
          payloadBytes += wire.payloadLength(message);
          messages += 1;
        } catch (err) {
          failed = true;
          callback(fail(grpc.status.INVALID_ARGUMENT, `Chunk: ${err.message}`));
        }
      });
      call.on('end', () => {
        if (!failed) callback(null, wire.encodeUploadSummary({ messages, payloadBytes }));
      });
      call.on('error', () => {});
    },
  };
}

function startupWarning(host) {
  const loopback = host === 'localhost' || /^127\./.test(host) || host === '::1';
  if (!loopback) {
    process.stderr.write(
      `WARNING: the server listens on ${host}, which is NOT a loopback address: ` +
        'anyone who can reach this host can connect to it.\n'
    );
  }
}

function serve(job, options, version) {
  const http2 = require('http2');
  const windows = job.windows;
  if (windows && windows.static) {
    const conn = windows.connBytes || windows.streamBytes;
    applyStaticWindow(http2, windows.streamBytes, conn);
    process.stderr.write(
      `${WHO}: static receive windows: stream ${windows.streamBytes} (node:http2 settings.initialWindowSize), ` +
        `connection ${conn} (session.setLocalWindowSize), under grpc-js (its Server has no window option)\n`
    );
  }
  const grpc = require('@grpc/grpc-js');
  const wire = require('./lib/wire');
  const counter = { rpcs: 0, budget: null };
  const server = new grpc.Server(options);
  server.addService(wire.SERVICE_DEFINITION, handlers(grpc, wire, job, counter));
  const host = job.listenHost;
  const address = host.includes(':') ? `[${host}]:${job.listenPort}` : `${host}:${job.listenPort}`;
  startupWarning(host);
  server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) => {
    if (err || !bound) {
      const hint = job.listenPort ? '; is the port in use?' : '';
      protocol.failure(`${WHO}: cannot listen on ${address} (${err ? err.message : 'no port bound'})${hint}`, EXIT_CANNOT_START);
      return;
    }
    stop = () => {
      const done = () => protocol.serverAnswer({ rpcs: BigInt(counter.rpcs), refused: BigInt(counter.budget.refused) });
      const force = setTimeout(() => {
        server.forceShutdown();
        done();
      }, GRACE_MS);
      server.tryShutdown(() => {
        clearTimeout(force);
        done();
      });
    };
    if (stopRequested) return stop();
    protocol.ready(bound, STACK, version);
    announced = true;
  });
}

function main() {
  let job;
  let options;
  try {
    job = jobFromArgv(process.argv.slice(2), pb.ServerJobSchema, USAGE);
    options = serverOptions(job);
  } catch (err) {
    if (err instanceof UsageError) return protocol.failure(`${WHO}: ${err.message}`, EXIT_BAD_JOB);
    throw err;
  }
  const version = require('@grpc/grpc-js/package.json').version;
  serve(job, options, version);
}

main();
