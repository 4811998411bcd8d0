'use strict';
// The child side of the kit's process protocol (docs/process-protocol.md): protocol lines on
// stdout (written synchronously to fd 1: a line is out before the process exits), one final
// line, its exit code (a client worker writes a result line per trial before it).
// process.stdout is never touched, so nothing else lands on fd 1.

const fs = require('fs');

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_BAD_CONFIG = 2;
const EXIT_CANNOT_START = 3;
const EXIT_MEASUREMENT = 4;
const SIGNAL_NUMBERS = { SIGINT: 2, SIGTERM: 15 };

class KitError extends Error {
  constructor(message, exitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

const oneLine = (text) => String(text).split(/\s+/).filter(Boolean).join(' ');

// JSON with BigInts (CLOCK_MONOTONIC nanoseconds) written as exact integers.
function toJson(obj) {
  return JSON.stringify(obj, (_k, v) => (typeof v === 'bigint' ? `\u0000${v}\u0000` : v)).replace(
    /"\\u0000(-?\d+)\\u0000"/g,
    '$1'
  );
}

function emit(obj) {
  const data = Buffer.from(toJson(obj) + '\n');
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

// A client worker's ready line says so: it reads one trial per line of stdin.
function ready(port, stack, version, worker = false) {
  emit({ ready: true, pid: process.pid, port, stack, version, ...(worker ? { worker: true } : {}) });
}

// A client worker's result for its trial number `trial` (1 = its first): not a final line.
function trialResult(value, trial) {
  if (!finished) emit({ result: value, client_trial: trial });
}

// The one final line, then exit. Later calls (a signal racing a result) do nothing.
function finish(line, code) {
  if (finished) return;
  finished = true;
  emit(line);
  process.exit(code);
}

function result(value) {
  finish({ result: value }, EXIT_OK);
}

function failure(message, code) {
  finish({ error: oneLine(message) || 'failed', exit_code: code }, code);
}

module.exports = {
  toJson,
  EXIT_OK,
  EXIT_FAILED,
  EXIT_BAD_CONFIG,
  EXIT_CANNOT_START,
  EXIT_MEASUREMENT,
  SIGNAL_NUMBERS,
  KitError,
  emit,
  ready,
  result,
  trialResult,
  failure,
  isFinished: () => finished,
};
