'use strict';
// A job of protos/worker.proto (ClientJob, ServerJob) from its canonical JSON, decoded by
// @bufbuild/protobuf from the code in worker_pb.js (regen.sh): unknown fields, wrong types and
// out-of-range integers are the library's to refuse, in its words. Every value was checked by
// the kit (kit/plan/jobs.py); this file checks only that the text is UTF-8 and that a client
// job has work. Errors are UsageErrors: the program prints "grpc-js <role>: <message>", exit 2.

const fs = require('fs');
const { fromJsonString } = require('@bufbuild/protobuf');
const pb = require('./worker_pb');

class UsageError extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true });

// The bytes as text, or null when they are not UTF-8.
function decodeUtf8(bytes) {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

// The program's own arguments as the bytes it was given: Node turns bytes that are not UTF-8
// into U+FFFD in process.argv, so /proc/self/cmdline is read instead (null where there is none).
function rawArgs(count) {
  let cmdline;
  try {
    cmdline = fs.readFileSync('/proc/self/cmdline');
  } catch {
    return null;
  }
  const parts = [];
  let start = 0;
  for (let i = 0; i < cmdline.length; i += 1) {
    if (cmdline[i] === 0) {
      parts.push(cmdline.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < cmdline.length) parts.push(cmdline.subarray(start));
  return parts.length >= count ? parts.slice(parts.length - count) : null;
}

function parseJob(text, schema) {
  let job;
  try {
    job = fromJsonString(schema, text);
  } catch (err) {
    throw new UsageError(`bad job: ${err && err.message ? err.message : err}`);
  }
  if (schema === pb.ClientJobSchema && job.work.case === undefined) {
    throw new UsageError('bad job: no work (download, unary or upload)');
  }
  return job;
}

// --config '<JSON>' or --config=<JSON>: the job, or a UsageError.
function jobFromArgv(args, schema, usage) {
  let index;
  let prefix = 0;
  if (args.length === 1 && args[0].startsWith('--config=')) {
    index = 0;
    prefix = '--config='.length;
  } else if (args.length === 2 && args[0] === '--config') {
    index = 1;
  } else {
    throw new UsageError(usage);
  }
  const raw = rawArgs(args.length);
  if (raw !== null && decodeUtf8(raw[index]) === null) throw new UsageError('--config: not UTF-8');
  return parseJob(args[index].slice(prefix), schema);
}

// One worker line (its bytes, without the newline): the job, null for a blank line, or a
// UsageError.
function jobFromLine(bytes, schema) {
  const text = decodeUtf8(bytes);
  if (text === null) throw new UsageError('worker line: not UTF-8');
  if (!text.trim()) return null;
  return parseJob(text, schema);
}

// Lines of a stream as Buffers, without their newline (the last one even without one).
async function* byteLines(stream) {
  let pending = [];
  for await (const chunk of stream) {
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      pending.push(chunk.subarray(start, i));
      yield Buffer.concat(pending);
      pending = [];
      start = i + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length) yield Buffer.concat(pending);
}

module.exports = { UsageError, jobFromArgv, jobFromLine, byteLines, parseJob, decodeUtf8 };
