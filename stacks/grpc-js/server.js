'use strict';
// The kit's grpc-js server: node server.js --config '<ServerProcess as JSON>'.
// The process protocol (docs/process-protocol.md): a ready line once it listens; SIGTERM or
// SIGINT stop it (tryShutdown, forceShutdown after a short grace), then its result line
// ({"rpcs": N}) and exit 0. Semantics are the kit's grpcio server's (servers/grpcio_server.py).

const protocol = require('./lib/protocol');
const { KitError, EXIT_BAD_CONFIG, EXIT_CANNOT_START, EXIT_FAILED } = protocol;

const STACK = 'grpc-js';
const WHO = 'grpc-js server';
let announced = false;
// SIGTERM/SIGINT: the server's normal end. Before it listens there is nothing to stop.
let stop = null;
let stopRequested = false;
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    if (stopRequested) return;
    stopRequested = true;
    if (stop) stop();
    else protocol.result({ rpcs: 0 });
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
const { SERVER_OPTIONS, SERVER_REFUSED, checkOptions } = require('./lib/options');

const MIB = config.MIB;
const MAX_MESSAGE_BYTES = 128 * MIB;
const MAX_DOWNLOAD_MESSAGE_BYTES = config.MAX_WORKLOAD_MESSAGE_BYTES;
const MAX_ECHO_BYTES = MIB;
const CACHE_MAX_BYTES = 64 * MIB;
const GRACE_MS = 300; // tryShutdown's grace before forceShutdown (stop within a second)

function plan(processConfig) {
  const c = processConfig.config;
  const bad = (m) => new KitError(`${WHO}: ${m}`, EXIT_BAD_CONFIG);
  if (c.kind !== STACK) throw bad(`config.kind is ${config.pyRepr(c.kind)}; this program is the grpc-js server`);
  if (c.window_mode !== 'static' && c.window_mode !== 'dynamic') {
    throw bad(`window mode ${c.window_mode}: the grpc-js server is static or dynamic`);
  }
  return checkOptions(c.channel_options, SERVER_OPTIONS, SERVER_REFUSED);
}

// grpc-js 1.14's Server has no receive-window option (its client has
// grpc-node.flow_control_window; the server never reads it). A static server window is set
// under it, in node:http2, with the two calls grpc-js's client makes for that option
// (transport.ts): SETTINGS_INITIAL_WINDOW_SIZE in the server's settings, and the connection
// window per session (session.setLocalWindowSize). grpc-js creates its http2 server with
// http2.createServer(options) when it binds: that is where the settings go in.
function applyStaticWindow(http2, windowBytes) {
  const create = http2.createServer;
  http2.createServer = function createServer(options, ...rest) {
    const settings = { ...(options && options.settings), initialWindowSize: windowBytes };
    const server = create.call(this, { ...options, settings }, ...rest);
    server.on('session', (session) => {
      try {
        session.setLocalWindowSize(windowBytes);
      } catch (err) {
        process.stderr.write(`${WHO}: setLocalWindowSize(${windowBytes}) failed: ${err.message}\n`);
      }
    });
    return server;
  };
}

class ChunkCache {
  // Serialized download messages by size, least recently used first out, bounded in bytes.
  constructor(wire, maxBytes) {
    this.wire = wire;
    this.maxBytes = maxBytes;
    this.chunks = new Map();
    this.bytes = 0;
  }

  get(size) {
    const hit = this.chunks.get(size);
    if (hit) {
      this.chunks.delete(size);
      this.chunks.set(size, hit);
      return hit;
    }
    const chunk = this.wire.chunk(size);
    if (chunk.length <= this.maxBytes / 4) {
      this.chunks.set(size, chunk);
      this.bytes += chunk.length;
      while (this.bytes > this.maxBytes) {
        const [oldSize, old] = this.chunks.entries().next().value;
        this.chunks.delete(oldSize);
        this.bytes -= old.length;
      }
    }
    return chunk;
  }
}

function handlers(grpc, wire, counter) {
  const cache = new ChunkCache(wire, CACHE_MAX_BYTES);
  const invalid = (details) => ({ code: grpc.status.INVALID_ARGUMENT, details });
  return {
    Download(call) {
      counter.rpcs += 1;
      let request;
      try {
        request = wire.decodeDownloadRequest(call.request);
      } catch (err) {
        call.emit('error', invalid(`DownloadRequest: ${err.message}`));
        return;
      }
      if (request.messageBytes > MAX_DOWNLOAD_MESSAGE_BYTES) {
        call.emit(
          'error',
          invalid(`message_bytes ${request.messageBytes} is above this server's maximum ${MAX_DOWNLOAD_MESSAGE_BYTES}`)
        );
        return;
      }
      const chunk = cache.get(Math.max(1, request.messageBytes));
      let remaining = request.messageCount || Infinity;
      let stopped = false;
      call.on('cancelled', () => {
        stopped = true;
      });
      call.on('error', () => {
        stopped = true;
      });
      const pump = () => {
        while (!stopped && remaining > 0) {
          remaining -= 1;
          if (!call.write(chunk)) {
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
        callback(invalid(`PingRequest: ${err.message}`));
        return;
      }
      if (payload.length > MAX_ECHO_BYTES) {
        callback(invalid(`ping payload of ${payload.length} bytes is above the echo maximum ${MAX_ECHO_BYTES}`));
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
          callback(invalid(`Chunk: ${err.message}`));
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
  const loopback = host === 'localhost' || /^127\./.test(host) || host === '::1' || host === '[::1]';
  if (!loopback) {
    process.stderr.write(
      `WARNING: the server listens on ${host}, which is NOT a loopback address: ` +
        'anyone who can reach this host can connect to it.\n'
    );
  }
}

function serve(processConfig, options, version) {
  const http2 = require('http2');
  const c = processConfig.config;
  if (c.window_mode === 'static') {
    applyStaticWindow(http2, c.window_bytes);
    process.stderr.write(
      `${WHO}: static receive window ${c.window_bytes}: node:http2 settings.initialWindowSize and ` +
        'session.setLocalWindowSize under grpc-js (its Server has no window option)\n'
    );
  }
  const grpc = require('@grpc/grpc-js');
  const wire = require('./lib/wire');
  const counter = { rpcs: 0 };
  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    ...options,
  });
  server.addService(wire.SERVICE_DEFINITION, handlers(grpc, wire, counter));
  const host = processConfig.listen_host;
  const port = processConfig.listen_port;
  const address = host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
  startupWarning(host);
  server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) => {
    if (err || !bound) {
      const hint = port ? '; is the port in use?' : '';
      protocol.failure(`${WHO}: cannot listen on ${address} (${err ? err.message : 'no port bound'})${hint}`, EXIT_CANNOT_START);
      return;
    }
    stop = () => {
      const done = () => protocol.result({ rpcs: counter.rpcs });
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
  let processConfig;
  let options;
  try {
    processConfig = config.parseConfigArgv(process.argv.slice(2), config.ServerProcess);
    options = plan(processConfig);
  } catch (err) {
    if (err instanceof config.UsageError) return protocol.failure(`${WHO}: ${err.message}`, EXIT_BAD_CONFIG);
    if (err instanceof KitError) return protocol.failure(err.message, err.exitCode);
    throw err;
  }
  const version = require('@grpc/grpc-js/package.json').version;
  serve(processConfig, options, version);
}

main();
