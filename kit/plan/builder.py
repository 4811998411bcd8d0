"""The one plan builder: raw options (``kit.plan.options``) -> frozen, validated configs.

Every entry point hands over options records of raw values (CLI flags, a plan file's
settings, a candidate spec's items). The builder parses units once (``kit.plan.units``) and
builds the configs of ``kit.plan.trial``; an error names the option as the user wrote it
where it came from (``--window`` on the command line, ``window`` in a spec or a plan file),
which each record knows. The configs check their own ranges and name their own fields;
``named`` spells those as the options that set them.

A candidate is one client configuration typed on one line:

- ``grpcio`` - grpcio with C-core's defaults (BDP probe on);
- ``grpcio:grpc.http2.bdp_probe=0,grpc.http2.lookahead_bytes=4194304`` - any channel
  argument as ``key=value`` (ints parsed); kit keys ``window``, ``mode``, ``connections``;
- ``h2`` - our h2 client, dynamic (grpc-go-style BDP estimator);
- ``h2:window=4MiB,conn-window=16MiB,credit=half,max-frame=1MiB,connections=8``;
- ``h2:window-policy=pool,pool=1.6MB``, ``h2:window=4MiB,conn-credit=read``.

Items are split at commas that start a new ``key=``, so a value may itself hold commas.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from kit.errors import UsageError, named, prefixed
from kit.plan.grpc_args import check_arg_name, check_arg_value, parse_option
from kit.plan.options import (
    ClientOptions,
    LinkOptions,
    Raw,
    ServerOptions,
    WorkloadOptions,
    options_from_items,
    spellings,
)
from kit.plan.programs import CLIENT_KINDS, SERVER_KINDS, STACK_KINDS, ClientKind, ServerKind
from kit.plan.stack_options import STACK_OPTIONS
from kit.plan.trace import parse_rate_steps, read_trace
from kit.plan.trial import (
    DEFAULT_LINK_SEED,
    DEFAULT_MTU,
    H2_ONLY,
    POLICY_ALIASES,
    ClientConfig,
    ConnCredit,
    CreditPolicy,
    Link,
    LinkKind,
    OptionValue,
    RateStep,
    ServerConfig,
    Trial,
    WindowMode,
    Workload,
    WorkloadKind,
    check_connections,
    check_server_memory,
    check_timed_phase,
    check_upload_streams,
)
from kit.plan.units import (
    parse_duration_ms,
    parse_fraction,
    parse_rate_bits_s,
    parse_size_bytes,
    parse_window_bytes,
    size_spec,
)

DEFAULT_TIMEOUT_RTTS = 60
MAX_DEFAULT_TIMEOUT_S = 7200.0
DEFAULT_RTT = "20ms"
SERVER_KIND = "server"
SERVER_PREFIX = "server-"
_ITEM_SPLIT = re.compile(r",\s*(?=[A-Za-z_][\w.\-]*\s*=)")


def whole_number(value: Raw, option: str) -> int:
    try:
        if isinstance(value, bool):
            raise ValueError
        return int(str(value), 10)
    except ValueError:
        raise UsageError(f"{option}: {value!r} is not a whole number") from None


def _given(value: Raw | None, default: Raw) -> Raw:
    return default if value is None else value


def _duration_ms(value: Raw | None, option: str) -> float | None:
    return None if value is None else parse_duration_ms(str(value), option=option)


def _size(value: Raw | None, option: str) -> int | None:
    return None if value is None else parse_size_bytes(str(value), option=option)


def _window(value: Raw | None, option: str) -> int | None:
    return None if value is None else parse_window_bytes(str(value), option=option)


def _rate(value: Raw | None, option: str) -> float | None:
    return None if value is None else parse_rate_bits_s(str(value), option=option)


# --- link, workload, server ---------------------------------------------------------------


def link_from(o: LinkOptions, default_rtt: str = DEFAULT_RTT) -> Link:
    """``rtt`` splits evenly; ``delay-up`` / ``delay-down`` override one direction each.

    ``rate`` sets both directions' bottleneck, ``rate-up`` / ``rate-down`` one each (omitted:
    unlimited); ``jitter`` and ``jitter-seed`` (``--seed`` of ``kit run``) as in ``Link``.
    """
    rtt_ms = parse_duration_ms(str(_given(o.rtt, default_rtt)), option=o.name("rtt"))
    up = _duration_ms(o.delay_up, o.name("delay_up"))
    down = _duration_ms(o.delay_down, o.name("delay_down"))
    both = _rate(o.rate, o.name("rate"))
    rate_up = _rate(o.rate_up, o.name("rate_up"))
    rate_down = _rate(o.rate_down, o.name("rate_down"))
    jitter = 0.0 if o.jitter is None else _jitter_ms(o.jitter, o.name("jitter"))
    seed = _given(o.jitter_seed, DEFAULT_LINK_SEED)
    loss, burst_len = _loss(o)
    with named(link_names(o)):
        # from_rtt checks the RTT's range when it sets a direction's delay.
        half = Link.from_rtt(rtt_ms).delay_up_ms if up is None or down is None else 0.0
        link = Link(
            delay_up_ms=half if up is None else up,
            delay_down_ms=half if down is None else down,
            rate_up_bits_s=both if rate_up is None else rate_up,
            rate_down_bits_s=both if rate_down is None else rate_down,
            jitter_ms=jitter,
            seed=whole_number(seed, o.name("jitter_seed")),
        )
        mtu = DEFAULT_MTU if o.mtu is None else whole_number(o.mtu, o.name("mtu"))
        return replace(
            link,
            kind=cast(LinkKind, str(_given(o.link, "stream"))),  # Link checks it
            loss=loss,
            loss_burst_len=burst_len,
            mtu=mtu,
            queue_bytes=_queue_bytes(o, link),
            congestion="" if o.cc is None else str(o.cc),
            rate_steps=_rate_steps(o),
        )


def _rate_steps(o: LinkOptions) -> tuple[RateStep, ...]:
    if o.rate_steps is not None and o.trace is not None:
        raise UsageError(f"{o.name('trace')}: give {o.name('rate_steps')} or a trace, not both")
    if o.rate_steps is not None:
        return parse_rate_steps(str(o.rate_steps), o.name("rate_steps"))
    if o.trace is not None:
        return read_trace(str(o.trace), o.name("trace"))
    return ()


def _loss(o: LinkOptions) -> tuple[float, float]:
    """(loss fraction, mean burst length) from ``--loss 0.1%`` or ``--loss-burst 1%:4``."""
    if o.loss is not None and o.loss_burst is not None:
        raise UsageError(
            f"{o.name('loss')}: give {o.name('loss')} (independent) or "
            f"{o.name('loss_burst')} (in bursts), not both"
        )
    if o.loss_burst is not None:
        loss_text, sep, length = str(o.loss_burst).partition(":")
        option = o.name("loss_burst")
        if not sep:
            raise UsageError(f"{option}: {o.loss_burst!r} is not LOSS:LENGTH (e.g. 1%:4)")
        try:
            burst_len = float(length)
        except ValueError:
            raise UsageError(f"{option}: burst length {length!r} is not a number") from None
        return parse_fraction(loss_text, option=option), burst_len
    if o.loss is None:
        return 0.0, 0.0
    return parse_fraction(str(o.loss), option=o.name("loss")), 0.0


def _queue_bytes(o: LinkOptions, link: Link) -> int | None:
    """``--queue 256KiB`` as is, ``--queue 20ms`` as bytes at the slower direction's rate."""
    if o.queue is None:
        return None
    text, option = str(o.queue).strip(), o.name("queue")
    if not text.endswith("ms") and not text.endswith("s"):
        return parse_size_bytes(text, option=option)
    rates = [r for r in (link.rate_up_bits_s, link.rate_down_bits_s) if r is not None]
    if not rates:
        raise UsageError(f"{option}: a queue in time needs a --rate (or give it in bytes)")
    return round(min(rates) / 8 * parse_duration_ms(text, option=option) / 1000)


def link_names(o: LinkOptions) -> dict[str, str]:
    """The link's fields by the options that set them: a direction's delay comes from
    ``rtt`` and its rate from ``rate`` unless its own option is given."""
    return {
        **o.names(),
        "delay_up_ms": o.name("rtt" if o.delay_up is None else "delay_up"),
        "delay_down_ms": o.name("rtt" if o.delay_down is None else "delay_down"),
        "rate_up_bits_s": o.name("rate" if o.rate_up is None else "rate_up"),
        "rate_down_bits_s": o.name("rate" if o.rate_down is None else "rate_down"),
    }


def _jitter_ms(value: Raw, option: str) -> float:
    text = str(value).strip()
    if text.startswith("-"):
        raise UsageError(f"{option}: {text!r} is negative; jitter is 0 or more (e.g. 2ms)")
    return parse_duration_ms(text, option=option)


def workload_from(o: WorkloadOptions, rtt_ms: float = 0.0) -> Workload:
    """``workload``, ``streams``, ``message-size``, ``duration``, ``bytes``, ``calls``, ``timeout``,
    ``slow-streams``, ``read-rate``.

    Without ``timeout`` the hard timeout scales with the link: max(60 s, 2 x the timed
    phase + 60 RTTs), so a 2 s RTT (a 40 s timed phase) is not cut short.
    """
    if o.duration is not None and o.transfer is not None:
        raise UsageError(
            f"{o.name('transfer')}: a run is timed ({o.name('duration')}) or a fixed transfer "
            f"({o.name('transfer')}), not both"
        )
    duration_ms = _duration_ms(o.duration, o.name("duration"))
    timeout_ms = parse_duration_ms(str(_given(o.timeout, "60s")), option=o.name("timeout"))
    with named(o.names()):
        workload = Workload(
            kind=cast(WorkloadKind, str(_given(o.workload, "download"))),
            streams=whole_number(_given(o.streams, 1), o.name("streams")),
            message_bytes=parse_size_bytes(
                str(_given(o.message_size, "256KiB")), option=o.name("message_size")
            ),
            duration_s=None if duration_ms is None else duration_ms / 1000,
            bytes_per_stream=_size(o.transfer, o.name("transfer")),
            calls=whole_number(_given(o.calls, 200), o.name("calls")),
            timeout_s=timeout_ms / 1000,
            slow_streams=whole_number(_given(o.slow_streams, 0), o.name("slow_streams")),
            read_rate_bits_s=_rate(o.read_rate, o.name("read_rate")),
        )
    with named(o.names()):
        check_timed_phase(workload, rtt_ms, timeout_given=o.timeout is not None)
        check_upload_streams(workload)
    if o.timeout is not None:
        return workload
    scaled = 2 * workload.timed_duration_s(rtt_ms) + DEFAULT_TIMEOUT_RTTS * rtt_ms / 1000
    return replace(workload, timeout_s=min(MAX_DEFAULT_TIMEOUT_S, max(workload.timeout_s, scaled)))


def server_from(o: ServerOptions) -> ServerConfig:
    """``server-window`` (static), ``server-mode`` (dynamic | static | bdp-off, inferred from
    the window when omitted), ``server-option`` (``key=value`` channel arguments, repeatable)."""
    window = _window(o.window, o.name("window"))
    mode = str(o.mode or ("static" if window is not None else "dynamic"))
    if mode != "static" and window is not None:
        raise UsageError(
            f"{o.name('window')}: server mode {mode!r} does not take a window "
            f"(drop {o.name('mode')} or {o.name('window')})"
        )
    if mode == "static" and window is None:
        raise UsageError(f"{o.name('mode')}: a static server window needs {o.name('window')}")
    kind = str(_given(o.kind, "grpcio"))
    if kind not in SERVER_KINDS:
        raise UsageError(f"{o.name('kind')}: {kind!r} is not one of {', '.join(SERVER_KINDS)}")
    with named(o.names()):
        return ServerConfig(
            kind=cast(ServerKind, kind),
            window_mode=cast(WindowMode, mode),
            window_bytes=window,
            channel_options=_channel_options(o, kind),
        )


def _channel_options(
    o: ClientOptions | ServerOptions, kind: str
) -> tuple[tuple[str, OptionValue], ...]:
    """``--option key=value`` texts and a spec's dotted keys, as one checked tuple: grpcio
    channel arguments, or a stack's named options (its config checks those by name)."""
    option = o.name("option")
    pairs = [*(parse_option(str(text), option=option) for text in o.option), *o.channel_args]
    if kind in STACK_KINDS:
        return tuple((k, _stack_value(k, v, option)) for k, v in pairs)
    # The h2 client takes no channel arguments at all: its config says so, by name.
    return channel_args(pairs, option, known_only=kind != "h2")


def _stack_value(key: str, value: Raw, option: str) -> OptionValue:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            return value
    if isinstance(value, int):
        return value
    raise UsageError(f"{option} {key}: {value!r} must be an integer or a text")


def _raw_item(key: str, value: object) -> Raw:
    if isinstance(value, str | int | float | bool):
        return value
    raise UsageError(f"{key}: {value!r} must be an integer or a text")


def channel_args(
    pairs: Sequence[tuple[str, Raw]], option: str, known_only: bool = True
) -> tuple[tuple[str, OptionValue], ...]:
    """grpcio channel arguments, checked: grpcio ignores an unknown key silently, so a key
    must be one C-core defines (``grpc.http2.bdp_probe``), appear once, and hold a string or
    an integer C-core can hold (a C int: it would otherwise fail or wrap around)."""
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise UsageError(f"{option} {repeated[0]} given twice")
    return tuple(_channel_arg(k, v, option, known_only) for k, v in pairs)


def _channel_arg(key: str, value: Raw, option: str, known_only: bool) -> tuple[str, OptionValue]:
    if "." not in key:
        raise UsageError(
            f"{option}: {key!r} is not a grpcio channel argument "
            "(they look like grpc.http2.bdp_probe)"
        )
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise UsageError(f"{option} {key}: {value!r} must be an integer or a string")
    if known_only:
        check_arg_name(key, option)
    pair = (key, value) if isinstance(value, int) else parse_option(f"{key}={value}", option)
    check_arg_value(pair, option)
    return pair


def trial_from(
    link: LinkOptions, client: ClientOptions, server: ServerOptions, workload: WorkloadOptions
) -> Trial:
    """One trial from the options of its parts (``kit run``)."""
    built = link_from(link)
    client_config, server_config = client_from(client), server_from(server)
    work = workload_from(workload, built.rtt_ms)
    with named({**link_names(link), **workload.names(), **client.names()}):
        check_connections(client_config, work)
        check_server_memory(server_config, work)
        return Trial(link=built, client=client_config, server=server_config, workload=work)


# --- clients ------------------------------------------------------------------------------


def client_from(o: ClientOptions) -> ClientConfig:
    """A ClientConfig from the client's options: kit settings and grpcio channel arguments
    (``--option`` on the command line; dotted keys in a spec or a plan file)."""
    kind = str(_given(o.client, "grpcio"))
    if kind not in CLIENT_KINDS:
        raise UsageError(f"{o.name('client')}: {kind!r} is not one of {', '.join(CLIENT_KINDS)}")
    if kind == "grpcio":
        _refuse_h2_only(o)
    window = _window(o.window, o.name("window"))
    conn = _window(o.conn_window, o.name("conn_window"))
    mode = _mode(o, window)
    if kind == "h2" and mode in ("dynamic", "pool") and conn is not None:
        raise UsageError(
            f"{o.name('conn_window')}: the {mode} h2 client grows its connection window itself; "
            + ("set " + o.name("window") + " too" if mode == "dynamic" else "it opens it to 2^31-1")
        )
    with named(o.names()):
        return ClientConfig(
            kind=cast(ClientKind, kind),
            window_mode=mode,
            window_bytes=window,
            conn_window_bytes=conn,
            credit_policy=None if o.credit is None else cast(CreditPolicy, str(o.credit)),
            max_frame_bytes=_size(o.max_frame, o.name("max_frame")),
            channel_options=_channel_options(o, kind),
            connections=whole_number(_given(o.connections, 1), o.name("connections")),
            conn_credit=cast(ConnCredit, str(_given(o.conn_credit, "receipt"))),
            pool_bytes=_size(o.pool, o.name("pool")),
        )


def _refuse_h2_only(o: ClientOptions) -> None:
    """grpcio would ignore the h2 client's own settings: given one, say so."""
    for name, spelling in spellings(ClientOptions).items():
        if spelling.sets in H2_ONLY and getattr(o, name) is not None:
            raise UsageError(f"{o.name(name)}: {H2_ONLY[spelling.sets]}")


def _mode(o: ClientOptions, window: int | None) -> WindowMode:
    """``window-policy`` is ``mode`` by its other name: one of them, or inferred from the window."""
    if o.mode is not None and o.window_policy is not None:
        raise UsageError(f"{o.name('window_policy')}: give it or {o.name('mode')}, not both")
    given = o.window_policy if o.window_policy is not None else o.mode
    mode = str(given or ("static" if window is not None else "dynamic"))
    mode = POLICY_ALIASES.get(mode, mode)  # grpc-go's policy is "dynamic" in records
    if mode != "static" and window is not None:
        raise UsageError(
            f"{o.name('window')}: mode {mode!r} does not take a window "
            f"(drop {o.name('mode')} or {o.name('window')})"
        )
    return cast(WindowMode, mode)


# --- candidate specs ----------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A named client configuration; ``spec`` is the one-line form that reproduces it."""

    name: str
    client: ClientConfig
    spec: str
    server: ServerConfig = field(default_factory=ServerConfig)

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise UsageError(f"candidate {self.spec!r}: its name is empty")


def parse_candidate(text: str, name: str | None = None) -> Candidate:
    """ "h2:window=4MiB,conn-window=16MiB" -> Candidate (named by its spec unless named).

    ``server:window=4MiB,mode=...,option=key=value`` changes the server's receive window
    instead (the client stays grpcio's defaults); a client spec may change it too with
    ``server-window``, ``server-mode``, ``server-option``.
    """
    spec = text.strip()
    kind, sep, rest = spec.partition(":")
    kind = kind.strip()
    with prefixed(f"candidate {spec!r}"):
        if kind not in (*CLIENT_KINDS, SERVER_KIND):
            raise UsageError(
                f"client {kind!r} is not one of {', '.join((*CLIENT_KINDS, SERVER_KIND))} "
                "(e.g. 'grpcio:grpc.http2.bdp_probe=0', 'h2:window=4MiB,conn-window=16MiB' "
                "or 'server:window=4MiB')"
            )
        return _candidate(kind, split_items(rest) if sep else [], name or spec, spec)


def candidate_from_items(
    kind: str, items: Sequence[tuple[str, object]], name: str | None
) -> Candidate:
    """A candidate given as fields (a plan file's table): its spec is rebuilt from them."""
    spec = kind + (":" + ",".join(f"{k}={v}" for k, v in items) if items else "")
    with prefixed(f"candidate {spec!r}"):
        return _candidate(kind, items, name or spec, spec)


# How a spec words an unknown key, by the part of the spec it is in.
_UNKNOWN = {
    "h2": "unknown h2 setting {keys} (use {known})",
    "grpcio": "{keys}: not a grpcio channel argument or kit key (channel arguments look like "
    "grpc.http2.bdp_probe; kit keys: "
    + ", ".join(
        s.key for s in spellings(ClientOptions).values() if s.item and s.sets not in H2_ONLY
    )
    + ")",
    SERVER_KIND: "unknown server setting {keys} "
    "(use {known}, or a channel argument like grpc.http2.bdp_probe=0)",
    SERVER_PREFIX: "unknown server setting {keys} (use {known})",
}


_UNKNOWN_STACK = "unknown setting {keys} (use {known}, or one of the stack's named options)"


def _candidate(kind: str, items: Sequence[tuple[str, object]], name: str, spec: str) -> Candidate:
    """A client spec's items: its own settings and channel arguments, and ``server-`` ones."""
    if kind == SERVER_KIND:
        server = options_from_items(ServerOptions, items, _UNKNOWN[SERVER_KIND])
        return Candidate(name, ClientConfig(), spec, server_from(server))
    mine = [(k, v) for k, v in items if not k.startswith(SERVER_PREFIX)]
    theirs = [(k, v) for k, v in items if k.startswith(SERVER_PREFIX)]
    server = options_from_items(ServerOptions, theirs, _UNKNOWN[SERVER_PREFIX], SERVER_PREFIX)
    # A stack's named options are its own keys (``grpc-go:ReadBufferSize=65536``).
    named_options = STACK_OPTIONS[kind]["client"] if kind in STACK_KINDS else {}
    own = [(k, _raw_item(k, v)) for k, v in mine if k in named_options]
    mine = [(k, v) for k, v in mine if k not in named_options]
    client = options_from_items(ClientOptions, mine, _UNKNOWN.get(kind, _UNKNOWN_STACK))
    client = replace(client, client=kind, channel_args=(*client.channel_args, *own))
    return Candidate(name, client_from(client), spec, server_from(server))


def split_items(rest: str) -> list[tuple[str, str]]:
    if not rest.strip():
        raise UsageError("nothing after ':' (drop the ':' for defaults)")
    items = []
    for raw in _ITEM_SPLIT.split(rest.strip()):
        key, sep, value = raw.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"{raw!r} is not key=value")
        items.append((key.strip(), value.strip()))
    return items


def h2_candidate(name: str, stream: int, conn: int, connections: int = 1) -> Candidate:
    """An h2 candidate with static stream and connection windows (presets build these)."""
    spec = f"h2:window={size_spec(stream)},conn-window={size_spec(conn)}"
    if connections > 1:
        spec += f",connections={connections}"
    return parse_candidate(spec, name)
