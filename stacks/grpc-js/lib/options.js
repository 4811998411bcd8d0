'use strict';
// The grpc-js knobs the kit accepts in channel_options, by their grpc-js names (where each is
// read: node_modules/@grpc/grpc-js/src/..., see README.md). Anything else is refused: a
// misspelt or unknown key would be ignored by grpc-js without a word.

const { UsageError, HTTP2_MAX_WINDOW_BYTES, pyRepr } = require('./config');

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

// name -> [low, high, what it does]
const CLIENT_OPTIONS = {
  'grpc-node.flow_control_window': [
    1,
    HTTP2_MAX_WINDOW_BYTES,
    'the stream window (SETTINGS_INITIAL_WINDOW_SIZE) and, above 65535, the connection window',
  ],
  'grpc-node.max_session_memory': [1, MAX_SAFE, 'Node http2 maxSessionMemory (MB); grpc-js default: no limit'],
  'grpc.max_receive_message_length': [-1, HTTP2_MAX_WINDOW_BYTES, 'largest message received (-1: no limit)'],
  'grpc.max_send_message_length': [-1, HTTP2_MAX_WINDOW_BYTES, 'largest message sent (-1: no limit)'],
  'grpc.enable_retries': [0, 1, 'the retry layer (1, the default)'],
  'grpc.per_rpc_retry_buffer_size': [
    0,
    HTTP2_MAX_WINDOW_BYTES,
    'bytes of a call\'s messages the retry layer takes ahead of HTTP/2 (default 1 MiB, retries on or off)',
  ],
  'grpc.enable_channelz': [0, 1, 'channelz accounting (1, the default)'],
};

const SERVER_OPTIONS = {
  'grpc-node.max_session_memory': [1, MAX_SAFE, 'Node http2 maxSessionMemory (MB); grpc-js default: no limit'],
  'grpc.max_receive_message_length': [-1, HTTP2_MAX_WINDOW_BYTES, 'largest message received (-1: no limit)'],
  'grpc.max_send_message_length': [-1, HTTP2_MAX_WINDOW_BYTES, 'largest message sent (-1: no limit)'],
  'grpc.max_concurrent_streams': [0, 2 ** 32 - 1, 'SETTINGS_MAX_CONCURRENT_STREAMS'],
  'grpc.enable_channelz': [0, 1, 'channelz accounting (1, the default)'],
};

// Keys that exist in grpc-js but that the kit sets itself or that a side does not read.
const CLIENT_REFUSED = {
  'grpc.use_local_subchannel_pool': 'the kit sets it (1) so that each connection is a TCP connection of its own',
};
const SERVER_REFUSED = {
  'grpc-node.flow_control_window':
    "grpc-js 1.14's Server does not read it (only the client transport does); " +
    'the server receive window is set with window_mode static',
};

// Errors are UsageErrors; the program puts its name in front ("grpc-js client: option ...").
function checkOptions(options, table, refused) {
  const out = {};
  for (const [key, value] of options) {
    if (key in refused) throw new UsageError(`option '${key}': ${refused[key]}`);
    if (!(key in table)) {
      throw new UsageError(`option '${key}' is not one of ${Object.keys(table).join(', ')}`);
    }
    const [low, high] = table[key];
    if (!Number.isInteger(value) || value < low || value > high) {
      throw new UsageError(`option '${key}' takes an integer in ${low}..${high}, not ${pyRepr(value)}`);
    }
    if (key in out && out[key] !== value) {
      throw new UsageError(`option '${key}' is given twice (${out[key]}, ${value})`);
    }
    out[key] = value;
  }
  return out;
}

module.exports = { CLIENT_OPTIONS, SERVER_OPTIONS, CLIENT_REFUSED, SERVER_REFUSED, checkOptions };
