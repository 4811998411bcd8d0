'use strict';
// The child side of the kit's process protocol (docs/process-protocol.md): protocol lines on
// stdout, each a message of protos/worker.proto printed by @bufbuild/protobuf (canonical JSON,
// the .proto's field names), written synchronously to fd 1 (a line is out before the process
// exits); one final line and its exit code (a client worker writes a ClientAnswer per trial
// before it). process.stdout is never touched, so nothing else lands on fd 1.

const fs = require('fs');
const { create, toJsonString } = require('@bufbuild/protobuf');
const pb = require('./worker_pb');

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_BAD_JOB = 2;
const EXIT_CANNOT_START = 3;
const EXIT_MEASUREMENT = 4;
const SIGNAL_NUMBERS = { SIGINT: 2, SIGTERM: 15 };

// An error that ends the program with this line and code ("grpc-js client: ..." already in it).
class KitError extends Error {
  constructor(message, exitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

const oneLine = (text) => String(text).split(/\s+/).filter(Boolean).join(' ');

// One message as one line of canonical JSON with the .proto's field names (zero values
// left out, as canonical JSON does; `implicit`: written too).
function line(schema, init, implicit = false) {
  return toJsonString(schema, create(schema, init), { useProtoFieldName: true, alwaysEmitImplicit: implicit });
}

function emit(text) {
  const data = Buffer.from(text + '\n');
  let offset = 0;
  for (let tries = 0; offset < data.length && tries < 1000; tries += 1) {
    try {
      offset += fs.writeSync(1, data, offset);
    } catch (err) {
      if (err.code !== 'EAGAIN') return; // a driver that is gone (a closed pipe) is not an error here
    }
  }
}

let finished = false;

// The ready line, every field written (a client's port 0 too, as docs/process-protocol.md
// shows it); port is a server's, worker marks a client worker.
function ready(port, stack, version, worker = false) {
  emit(line(pb.ReadySchema, { ready: true, pid: process.pid, port, stack, version, worker }, true));
}

// A client's answer: a worker's trial number `trial` (1 = its first) is not a final line.
function clientAnswer(result, trial) {
  if (finished) return;
  const text = line(pb.ClientAnswerSchema, { result, clientTrial: trial || 0 });
  if (trial) emit(text);
  else finish(text, EXIT_OK);
}

function serverAnswer(result) {
  finish(line(pb.ServerAnswerSchema, { result }), EXIT_OK);
}

// The one final line, then exit. Later calls (a signal racing a result) do nothing.
function finish(text, code) {
  if (finished) return;
  finished = true;
  emit(text);
  process.exit(code);
}

function failure(message, code) {
  finish(line(pb.FailureSchema, { error: oneLine(message) || 'failed', exitCode: code }), code);
}

module.exports = {
  EXIT_OK,
  EXIT_FAILED,
  EXIT_BAD_JOB,
  EXIT_CANNOT_START,
  EXIT_MEASUREMENT,
  SIGNAL_NUMBERS,
  KitError,
  line,
  emit,
  ready,
  clientAnswer,
  serverAnswer,
  failure,
  isFinished: () => finished,
};
