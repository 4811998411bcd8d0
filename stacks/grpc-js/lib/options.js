'use strict';
// The job's named options (Option in protos/worker.proto) -> grpc-js channel options, by their
// grpc-js names: each is one key of the options object a program hands grpc-js
// (`new grpc.Client(target, credentials, {KEY: VALUE})` on the client,
// `new grpc.Server({KEY: VALUE})` on the server), applied after what the job itself sets.
// Every grpc-js channel option takes an integer. Ranges are the kit's
// (kit/plan/stack_options.py); where grpc-js reads each key is in README.md.
// A name not listed is refused: grpc-js ignores an unknown key without a word.

const { UsageError } = require('./job');

const BOTH = [
  'grpc-node.max_session_memory',
  'grpc.enable_channelz',
  'grpc.keepalive_time_ms',
  'grpc.keepalive_timeout_ms',
  'grpc.max_receive_message_length',
  'grpc.max_send_message_length',
];

const TABLES = {
  client: new Set([
    ...BOTH,
    'grpc-node.flow_control_window',
    'grpc.enable_retries',
    'grpc.keepalive_permit_without_calls',
    'grpc.per_rpc_retry_buffer_size',
  ]),
  server: new Set([...BOTH, 'grpc.max_concurrent_streams']),
};

// Keys grpc-js has, but that the program sets itself or that its side does not read.
const REFUSED = {
  client: {
    'grpc.use_local_subchannel_pool': 'the program sets it (1) so that each connection is a TCP connection of its own',
  },
  server: {
    'grpc-node.flow_control_window':
      "grpc-js's Server does not read it (only its client transport does); the server's receive window is the job's windows",
  },
};

// How the program writes an applied option in its notes.
function written(side, key, value) {
  const call = side === 'client' ? 'new grpc.Client(target, credentials, {...})' : 'new grpc.Server({...})';
  return `${call} with '${key}': ${value}`;
}

// The job's options for `side` ('client' or 'server') as a grpc-js options object, in order
// (a later one of the same name wins, as in grpc-js). Errors are UsageErrors ("option ...").
function channelOptions(side, options) {
  const table = TABLES[side];
  const refused = REFUSED[side];
  const out = {};
  for (const option of options) {
    const key = option.name;
    if (Object.prototype.hasOwnProperty.call(refused, key)) throw new UsageError(`option '${key}': ${refused[key]}`);
    if (!table.has(key)) throw new UsageError(`option '${key}' is not one of ${[...table].sort().join(', ')}`);
    if (option.value.case !== 'int') {
      const given = option.value.case === undefined ? 'an option with no value' : `a ${option.value.case}`;
      throw new UsageError(`option '${key}' takes an integer (int), not ${given}`);
    }
    out[key] = Number(option.value.value);
  }
  return out;
}

module.exports = { TABLES, REFUSED, channelOptions, written };
