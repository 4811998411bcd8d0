'use strict';
// The kit's config records (kit/plan/processes.py, kit/plan/trial.py), decoded as strictly as
// kit.results.codec.from_json does: an unknown or missing field, a value of the wrong type or
// out of range is a UsageError naming its path ("ClientProcess.trial.workload: --streams: 0 is
// outside 1..1024"). Field order, defaults and every __post_init__ check are the Python ones;
// keep them in step with those files.

class UsageError extends Error {}

const KIB = 1024;
const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const HTTP2_MAX_WINDOW_BYTES = 2 ** 31 - 1;
const MAX_DELAY_MS = 10000.0;
const MAX_STREAMS = 1024;
const MAX_WORKLOAD_MESSAGE_BYTES = 64 * MIB;
const H2_MIN_FRAME_BYTES = 16384;
const H2_MAX_FRAME_BYTES = 2 ** 24 - 1;
const HTTP2_DEFAULT_FRAME_BYTES = 16384;
const MAX_POOL_BYTES = 2 ** 30;
const MIN_RATE_BITS_S = 1000.0;
const MAX_RATE_BITS_S = 1e12;
const SLOWEST_FRAME_BYTES = 16384;
const MIN_TIMED_S = 2.0;
const MIN_TIMED_RTTS = 20;
const DEFAULT_SERVER_WORKERS = MAX_STREAMS + 8;

const CLIENT_KINDS = ['grpcio', 'h2', 'grpc-go', 'grpc-java', 'grpc-js'];
const STACK_KINDS = ['grpc-go', 'grpc-java', 'grpc-js'];
const SERVER_KINDS = ['grpcio', ...STACK_KINDS];
const WINDOW_MODES = ['dynamic', 'static', 'bdp-off', 'pool'];
const CREDIT_POLICIES = ['immediate', 'half', 'quarter'];
const CONN_CREDITS = ['receipt', 'read'];
const WORKLOAD_KINDS = ['download', 'unary', 'upload'];

function require_(ok, message) {
  if (!ok) throw new UsageError(message);
}

// --- Python-like text for values in messages ---------------------------------------------

function pyRepr(v) {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v).map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
  }
  return String(v);
}

function pyType(v) {
  if (v === null) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (Array.isArray(v)) return 'list';
  return 'dict';
}

const isInt = (v) => typeof v === 'number' && Number.isInteger(v);
const isNumber = (v) => typeof v === 'number' && Number.isFinite(v);

function g(x) {
  // Python's f"{x:g}" for the numbers these messages use
  return Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(6)));
}

function formatRate(bitsS) {
  for (const [unit, size] of [['Gbit/s', 1e9], ['Mbit/s', 1e6], ['kbit/s', 1e3]]) {
    if (bitsS >= size) return `${Number((bitsS / size).toPrecision(3))} ${unit}`;
  }
  return `${Number(bitsS.toPrecision(3))} bit/s`;
}

function formatBytes(n, digits = 2) {
  for (const [unit, size] of [['GiB', GIB], ['MiB', MIB], ['KiB', KIB]]) {
    if (n >= size) {
      let text = (n / size).toFixed(digits);
      if (text.includes('.')) text = text.replace(/0+$/, '').replace(/\.$/, '');
      return `${text} ${unit}`;
    }
  }
  return `${n.toFixed(0)} B`;
}

// --- types -------------------------------------------------------------------------------

const fail = (where, message) => new UsageError(`${where}: ${message}`);

const T = {
  str: (data, where) => {
    if (typeof data === 'string') return data;
    throw fail(where, `${pyRepr(data)} is not a string`);
  },
  int: (data, where) => {
    if (isInt(data)) return data;
    throw fail(where, `${pyRepr(data)} is not a whole number`);
  },
  float: (data, where) => {
    if (isNumber(data)) return data;
    throw fail(where, `${pyRepr(data)} is not a finite number`);
  },
  bool: (data, where) => {
    if (typeof data === 'boolean') return data;
    throw fail(where, `${pyRepr(data)} is not true or false`);
  },
  lit: (choices) => (data, where) => {
    if (typeof data === 'string' && choices.includes(data)) return data;
    throw fail(where, `${pyRepr(data)} is not one of ${choices.map(pyRepr).join(', ')}`);
  },
  opt: (inner) => (data, where) => (data === null ? null : inner(data, where)),
  // tuple[X, ...]
  many: (inner) => (data, where) => {
    if (!Array.isArray(data)) throw fail(where, `a JSON array, not ${pyType(data)}`);
    return data.map((v, i) => inner(v, `${where}[${i}]`));
  },
  // tuple[A, B]
  pair: (a, b) => (data, where) => {
    if (!Array.isArray(data)) throw fail(where, `a JSON array, not ${pyType(data)}`);
    if (data.length !== 2) throw fail(where, `an array of 2 items, not ${data.length}`);
    return [a(data[0], `${where}[0]`), b(data[1], `${where}[1]`)];
  },
  // int | str (OptionValue): the first that fits
  intOrStr: (data, where) => {
    if (isInt(data) || typeof data === 'string') return data;
    throw fail(where, `${pyRepr(data)} fits no allowed type`);
  },
};

// A record: fields in declaration order, each [name, type, default]; a default of REQUIRED
// means the field must be given; a function default is a factory. ``check`` is __post_init__.
const REQUIRED = Symbol('required');

function record(name, fields, check) {
  const decode = (data, where) => {
    if (data === null || typeof data !== 'object' || Array.isArray(data)) {
      throw fail(where, `a JSON object, not ${pyType(data)}`);
    }
    const names = fields.map((f) => f[0]);
    const unknown = Object.keys(data).filter((k) => !names.includes(k)).sort();
    if (unknown.length) throw fail(where, `unknown field(s) ${unknown.join(', ')}`);
    const missing = fields.filter((f) => f[2] === REQUIRED && !(f[0] in data)).map((f) => f[0]);
    if (missing.length) throw fail(where, `missing field(s) ${missing.join(', ')}`);
    const value = {};
    for (const [key, , def] of fields) {
      if (!(key in data)) value[key] = typeof def === 'function' ? def() : def;
    }
    for (const key of Object.keys(data)) {
      const type = fields.find((f) => f[0] === key)[1];
      value[key] = type(data[key], `${where}.${key}`);
    }
    try {
      check(value);
    } catch (e) {
      if (e instanceof UsageError) throw fail(where, e.message);
      throw e;
    }
    return value;
  };
  decode.recordName = name;
  decode.make = () => decode({}, name);
  return decode;
}

function checkWindow(name, value) {
  if (value !== null) {
    require_(
      isInt(value) && value >= 1 && value <= HTTP2_MAX_WINDOW_BYTES,
      `${name}: ${value} is outside HTTP/2's window range 1..${HTTP2_MAX_WINDOW_BYTES} (2^31-1)`
    );
  }
}

function checkInt(name, value, low, high) {
  require_(isInt(value) && value >= low && value <= high, `${name}: ${pyRepr(value)} is outside ${low}..${high}`);
}

// One step of a down rate that changes over time (0 bit/s: an outage); the kit's RateStep.
const RateStep = record(
  'RateStep',
  [
    ['rate_bits_s', T.float, REQUIRED],
    ['duration_ms', T.float, REQUIRED],
  ],
  (v) => {
    const r = v.rate_bits_s;
    require_(
      r === 0 || (r >= MIN_RATE_BITS_S && r <= MAX_RATE_BITS_S),
      `rate_steps: a rate of ${r} bit/s is outside 1 kbit/s .. 1 Tbit/s (or 0)`
    );
    require_(v.duration_ms > 0 && v.duration_ms <= 3600000, `rate_steps: a step of ${v.duration_ms} ms is outside 0..1 h`);
  }
);

// The packet link's fields and the rate steps, checked as the kit's Link checks them; the
// client only decodes them: the delay line or the packet forwarder applies the link.
function checkPacketFields(v) {
  require_(v.loss >= 0 && v.loss <= 0.5, `loss: ${v.loss} is outside 0..0.5 (a fraction of packets)`);
  const burst = v.loss_burst_len;
  require_(
    burst === 0 || (burst >= 1 && burst <= 1000 && v.loss > 0),
    `loss_burst_len: ${burst} packets must be 1..1000, with a loss above 0`
  );
  require_(v.mtu >= 576 && v.mtu <= 65000, `mtu: ${v.mtu} bytes is outside 576..65000`);
  require_(
    v.queue_bytes === null || v.queue_bytes >= v.mtu,
    `queue_bytes: ${v.queue_bytes} bytes must hold at least one packet (the MTU, ${v.mtu} bytes)`
  );
  const steps = v.rate_steps;
  require_(
    steps.length === 0 || (steps.length <= 2000 && steps.some((s) => s.rate_bits_s > 0)),
    `rate_steps: ${steps.length} steps; give 1..2000, at least one above 0`
  );
}

const Link = record(
  'Link',
  [
    ['delay_up_ms', T.float, 0.0],
    ['delay_down_ms', T.float, 0.0],
    ['rate_up_bits_s', T.opt(T.float), null],
    ['rate_down_bits_s', T.opt(T.float), null],
    ['jitter_ms', T.float, 0.0],
    ['seed', T.int, 1],
    ['kind', T.lit(['stream', 'packet']), 'stream'],
    ['loss', T.float, 0.0],
    ['loss_burst_len', T.float, 0.0],
    ['queue_bytes', T.opt(T.int), null],
    ['mtu', T.int, 1500],
    ['congestion', T.str, ''],
    ['rate_steps', T.many(RateStep), () => []],
  ],
  (v) => {
    for (const name of ['delay_up_ms', 'delay_down_ms']) {
      const x = v[name];
      require_(isNumber(x) && x >= 0 && x <= MAX_DELAY_MS, `${name}: ${x} ms is outside 0..${g(MAX_DELAY_MS)} ms`);
    }
    for (const [name, rate] of [['--rate-up', v.rate_up_bits_s], ['--rate-down', v.rate_down_bits_s]]) {
      require_(
        rate === null || (isNumber(rate) && rate >= MIN_RATE_BITS_S && rate <= MAX_RATE_BITS_S),
        `${name}: ${rate} bit/s is outside 1 kbit/s .. 1 Tbit/s`
      );
    }
    require_(
      isNumber(v.jitter_ms) && v.jitter_ms >= 0 && v.jitter_ms <= MAX_DELAY_MS,
      `--jitter: ${v.jitter_ms} ms is outside 0..${g(MAX_DELAY_MS)} ms`
    );
    require_(isInt(v.seed) && v.seed >= 0 && v.seed < 2 ** 63, `--seed: ${pyRepr(v.seed)} is not a whole number >= 0`);
    checkPacketFields(v);
  }
);

const OPTIONS = T.many(T.pair(T.str, T.intOrStr));

const ClientConfig = record(
  'ClientConfig',
  [
    ['kind', T.lit(CLIENT_KINDS), 'grpcio'],
    ['window_mode', T.lit(WINDOW_MODES), 'dynamic'],
    ['window_bytes', T.opt(T.int), null],
    ['conn_window_bytes', T.opt(T.int), null],
    ['credit_policy', T.opt(T.lit(CREDIT_POLICIES)), null],
    ['max_frame_bytes', T.opt(T.int), null],
    ['channel_options', OPTIONS, () => []],
    ['connections', T.int, 1],
    ['conn_credit', T.lit(CONN_CREDITS), 'receipt'],
    ['pool_bytes', T.opt(T.int), null],
  ],
  (v) => {
    require_(CLIENT_KINDS.includes(v.kind), `client: ${pyRepr(v.kind)} is not one of ${CLIENT_KINDS.join(', ')}`);
    require_(
      WINDOW_MODES.includes(v.window_mode),
      `window mode: ${pyRepr(v.window_mode)} is not one of ${WINDOW_MODES.join(', ')}`
    );
    if (v.pool_bytes !== null) {
      require_(v.window_mode === 'pool', '--pool: only the pool window policy takes a pool (add --window-policy pool)');
      require_(
        isInt(v.pool_bytes) && v.pool_bytes >= HTTP2_DEFAULT_FRAME_BYTES && v.pool_bytes <= MAX_POOL_BYTES,
        `--pool: ${v.pool_bytes} is outside ${HTTP2_DEFAULT_FRAME_BYTES} B..1 GiB`
      );
    }
    checkWindow('--window', v.window_bytes);
    checkWindow('--conn-window', v.conn_window_bytes);
    require_(
      (v.window_mode === 'static') === (v.window_bytes !== null),
      '--window: a static window needs a size, and only a static window takes one'
    );
    require_(
      v.max_frame_bytes === null ||
        (isInt(v.max_frame_bytes) && v.max_frame_bytes >= H2_MIN_FRAME_BYTES && v.max_frame_bytes <= H2_MAX_FRAME_BYTES),
      `max frame size: ${v.max_frame_bytes} is outside HTTP/2's ${H2_MIN_FRAME_BYTES}..${H2_MAX_FRAME_BYTES}`
    );
    require_(
      isInt(v.connections) && v.connections >= 1 && v.connections <= 256,
      `connections: ${v.connections} is outside 1..256`
    );
    if (v.kind === 'grpcio') {
      require_(
        v.conn_window_bytes === null,
        '--conn-window: the grpcio client cannot set the connection window separately ' +
          '(C-core derives it from the stream window); use --client h2'
      );
      require_(v.credit_policy === null || v.credit_policy === 'immediate', 'credit policy: only the h2 client has one');
      require_(v.conn_credit === 'receipt', '--conn-credit: only the h2 client has one (C-core returns credit itself)');
      require_(v.window_mode !== 'pool', '--window-policy pool: the receive pool is the h2 client\'s (use --client h2)');
    } else if (STACK_KINDS.includes(v.kind)) {
      require_(
        v.window_mode === 'dynamic' || v.window_mode === 'static',
        `window mode: ${v.kind} is static or dynamic, not ${v.window_mode}`
      );
      require_(v.credit_policy === null || v.credit_policy === 'immediate', 'credit policy: only the h2 client has one');
      require_(v.conn_credit === 'receipt', '--conn-credit: only the h2 client has one');
    } else {
      require_(!v.channel_options.length, '--option: channel options are for the grpcio client only');
      require_(v.window_mode !== 'bdp-off', 'window mode: bdp-off is a grpcio mode; the h2 client is static or dynamic');
    }
  }
);

const ServerConfig = record(
  'ServerConfig',
  [
    ['kind', T.lit(SERVER_KINDS), 'grpcio'],
    ['window_mode', T.lit(WINDOW_MODES), 'dynamic'],
    ['window_bytes', T.opt(T.int), null],
    ['channel_options', OPTIONS, () => []],
  ],
  (v) => {
    require_(SERVER_KINDS.includes(v.kind), `server: ${pyRepr(v.kind)} is not one of ${SERVER_KINDS.join(', ')}`);
    require_(
      WINDOW_MODES.includes(v.window_mode),
      `server window mode: ${pyRepr(v.window_mode)} is not one of ${WINDOW_MODES.join(', ')}`
    );
    checkWindow('--server-window', v.window_bytes);
    require_(
      (v.window_mode === 'static') === (v.window_bytes !== null),
      '--server-window: a static window needs a size, and only a static window takes one'
    );
  }
);

const Workload = record(
  'Workload',
  [
    ['kind', T.lit(WORKLOAD_KINDS), 'download'],
    ['message_bytes', T.int, 256 * KIB],
    ['streams', T.int, 1],
    ['duration_s', T.opt(T.float), null],
    ['bytes_per_stream', T.opt(T.int), null],
    ['calls', T.int, 200],
    ['warmup', T.bool, true],
    ['timeout_s', T.float, 60.0],
    ['slow_streams', T.int, 0],
    ['read_rate_bits_s', T.opt(T.float), null],
  ],
  (v) => {
    require_(WORKLOAD_KINDS.includes(v.kind), `workload: ${pyRepr(v.kind)} is not one of ${WORKLOAD_KINDS.join(', ')}`);
    require_(
      isInt(v.message_bytes) && v.message_bytes >= 1 && v.message_bytes <= MAX_WORKLOAD_MESSAGE_BYTES,
      `--message-size: ${v.message_bytes} is outside 1..64 MiB`
    );
    require_(
      isInt(v.streams) && v.streams >= 1 && v.streams <= MAX_STREAMS,
      `--streams: ${v.streams} is outside 1..${MAX_STREAMS}`
    );
    require_(isInt(v.calls) && v.calls >= 1 && v.calls <= 1000000, `--calls: ${v.calls} is outside 1..1000000`);
    if (v.duration_s !== null) {
      require_(
        isNumber(v.duration_s) && v.duration_s >= 0.01 && v.duration_s <= 3600,
        `--duration: ${v.duration_s} s is outside 0.01..3600 s`
      );
    }
    if (v.bytes_per_stream !== null) {
      require_(
        isInt(v.bytes_per_stream) && v.bytes_per_stream >= 1 && v.bytes_per_stream <= 2 ** 40,
        `--bytes: ${v.bytes_per_stream} is outside 1 B..1 TiB`
      );
      require_(
        v.bytes_per_stream >= v.message_bytes,
        `--bytes: ${v.bytes_per_stream} B per stream is less than one message ` +
          `(${formatBytes(v.message_bytes)}); ask for at least the message size, or a smaller --message-size`
      );
    }
    require_(typeof v.warmup === 'boolean', `warmup: ${pyRepr(v.warmup)} is not true or false`);
    require_(
      isNumber(v.timeout_s) && v.timeout_s >= 1.0 && v.timeout_s <= 7200,
      `--timeout: ${v.timeout_s} s is outside 1..7200 s`
    );
    require_(
      isInt(v.slow_streams) && v.slow_streams >= 0 && v.slow_streams <= v.streams,
      `--slow-streams: ${v.slow_streams} is outside 0..${v.streams} (--streams)`
    );
    require_(
      (v.slow_streams > 0) === (v.read_rate_bits_s !== null),
      '--read-rate: slow streams need a read rate, and only slow streams take one ' +
        '(give --slow-streams and --read-rate together)'
    );
    if (v.read_rate_bits_s !== null) {
      require_(isNumber(v.read_rate_bits_s) && v.read_rate_bits_s > 0, `--read-rate: ${v.read_rate_bits_s} bit/s must be above 0`);
      require_(v.kind === 'download', '--slow-streams: slow readers are for downloads (--workload download)');
    }
  }
);

const Trial = record(
  'Trial',
  [
    ['link', Link, () => Link.make()],
    ['client', ClientConfig, () => ClientConfig.make()],
    ['server', ServerConfig, () => ServerConfig.make()],
    ['workload', Workload, () => Workload.make()],
    ['label', T.str, ''],
  ],
  (v) => {
    for (let [name, rate] of [['--rate-up', v.link.rate_up_bits_s], ['--rate-down', v.link.rate_down_bits_s]]) {
      if (rate === null) continue;
      if (v.link.rate_up_bits_s === v.link.rate_down_bits_s) name = '--rate';
      const frameS = (SLOWEST_FRAME_BYTES * 8) / rate;
      require_(
        frameS <= v.workload.timeout_s,
        `${name}: at ${formatRate(rate)} one 16 KiB frame takes ${frameS.toFixed(0)} s, longer than ` +
          `the ${g(v.workload.timeout_s)} s timeout (raise the rate or --timeout)`
      );
    }
  }
);

const ClientProcess = record(
  'ClientProcess',
  [
    ['target_host', T.str, '127.0.0.1'],
    ['target_port', T.int, REQUIRED],
    ['trial', Trial, () => Trial.make()],
  ],
  (v) => {
    require_(v.target_host !== '', 'target_host: must not be empty');
    checkInt('target_port', v.target_port, 1, 65535);
  }
);

const ServerProcess = record(
  'ServerProcess',
  [
    ['config', ServerConfig, () => ServerConfig.make()],
    ['listen_host', T.str, '127.0.0.1'],
    ['listen_port', T.int, 0],
    ['workers', T.int, DEFAULT_SERVER_WORKERS],
  ],
  (v) => {
    require_(v.listen_host !== '', '--listen: the host must not be empty');
    checkInt('listen port', v.listen_port, 0, 65535);
    checkInt('workers', v.workers, 8, 4096);
  }
);

// --- the argument ----------------------------------------------------------------------

function parseConfigArgv(argv, decode) {
  let text;
  if (argv.length === 1 && argv[0].startsWith('--config=')) {
    text = argv[0].slice('--config='.length);
  } else if (argv.length === 2 && argv[0] === '--config') {
    text = argv[1];
  } else {
    throw new UsageError(`usage: --config '<${decode.recordName} as JSON>' (got ${argv.length} argument(s))`);
  }
  return parseConfig(text, decode, '--config');
}

// One config as JSON text (--config's, or a worker's line); `source` names it in the error.
function parseConfig(text, decode, source) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${source}: not JSON (${e.message})`);
  }
  return decode(data, decode.recordName);
}

// --- derived values (kit/plan/trial.py) ---------------------------------------------------

function timedDurationS(workload, rttMs) {
  if (workload.duration_s !== null) return workload.duration_s;
  return Math.max(MIN_TIMED_S, (MIN_TIMED_RTTS * rttMs) / 1000.0);
}

function messagesPerStream(workload) {
  if (workload.bytes_per_stream === null) return null;
  return Math.max(1, Math.ceil(workload.bytes_per_stream / workload.message_bytes));
}

const UPLOAD_DRAIN_S = 5.0;
const UPLOAD_DRAIN_RTTS = 20;

function uploadCallTimeoutS(trial) {
  const w = trial.workload;
  const rttMs = trial.link.delay_up_ms + trial.link.delay_down_ms;
  if (w.bytes_per_stream !== null) return w.timeout_s;
  const drainS = Math.max(UPLOAD_DRAIN_S, (UPLOAD_DRAIN_RTTS * rttMs) / 1000.0);
  return Math.min(w.timeout_s, timedDurationS(w, rttMs) + drainS);
}

module.exports = {
  UsageError,
  KIB,
  MIB,
  HTTP2_MAX_WINDOW_BYTES,
  MAX_WORKLOAD_MESSAGE_BYTES,
  ClientProcess,
  ServerProcess,
  parseConfigArgv,
  parseConfig,
  timedDurationS,
  messagesPerStream,
  uploadCallTimeoutS,
  formatBytes,
  pyRepr,
};
