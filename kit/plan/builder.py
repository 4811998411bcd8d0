"""The one plan builder: option values (CLI flags, TOML settings, candidate specs) -> configs.

Every entry point names its options the same way (``rtt``, ``delay-up``, ``window``,
``conn-window``, ...) and passes raw values (strings, ints; None = not given). The
builder parses units once (``kit.plan.units``) and builds the frozen, validated configs
of ``kit.plan.trial``. ``Flag`` says how an option is called where it came from, so an
error names ``--window`` on the command line and ``window`` in a spec or a plan file.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from kit.errors import UsageError, prefixed
from kit.plan.grpc_args import parse_option
from kit.plan.trial import (
    CLIENT_KINDS,
    DEFAULT_LINK_SEED,
    ClientConfig,
    ConnCredit,
    CreditPolicy,
    Link,
    OptionValue,
    ServerConfig,
    WindowMode,
    Workload,
    WorkloadKind,
)
from kit.plan.units import (
    parse_duration_ms,
    parse_rate_bits_s,
    parse_size_bytes,
    parse_window_bytes,
    size_spec,
)

Flag = Callable[[str], str]
DEFAULT_TIMEOUT_RTTS = 60
MAX_DEFAULT_TIMEOUT_S = 7200.0
DEFAULT_RTT = "20ms"
H2_KEYS = (
    "window",
    "conn-window",
    "credit",
    "max-frame",
    "connections",
    "mode",
    "window-policy",
    "conn-credit",
    "pool",
)
GRPCIO_KIT_KEYS = ("window", "mode", "window-policy", "connections")
SERVER_KIND = "server"
_CLI_NAMES = {"max-frame": "max-frame-size", "bytes": "bytes", "jitter-seed": "seed"}
_ITEM_SPLIT = re.compile(r",\s*(?=[A-Za-z_][\w.\-]*\s*=)")


def spec_flag(key: str) -> str:
    """Options as a spec or a plan file names them: ``window``."""
    return key


def cli_flag(key: str) -> str:
    """Options as the command line names them: ``--window``, ``--max-frame-size``."""
    return "--" + _CLI_NAMES.get(key, key)


def whole_number(value: Any, option: str) -> int:
    try:
        if isinstance(value, bool):
            raise ValueError
        return int(str(value), 10)
    except ValueError:
        raise UsageError(f"{option}: {value!r} is not a whole number") from None


def _duration_s(value: Any, option: str) -> float:
    return parse_duration_ms(str(value), option=option) / 1000


def _window(value: Any, option: str) -> int | None:
    return None if value is None else parse_window_bytes(str(value), option=option)


# --- link, workload, server ---------------------------------------------------------------


def link_from(
    settings: Mapping[str, Any], flag: Flag = spec_flag, default_rtt: str = DEFAULT_RTT
) -> Link:
    """``rtt`` splits evenly; ``delay-up`` / ``delay-down`` override one direction each.

    ``rate`` sets both directions' bottleneck, ``rate-up`` / ``rate-down`` one each (omitted:
    unlimited); ``jitter`` and ``jitter-seed`` (``--seed`` of ``kit run``) as in ``Link``.
    """
    rtt = settings.get("rtt") or default_rtt
    half = parse_duration_ms(str(rtt), option=flag("rtt")) / 2
    up, down = settings.get("delay-up"), settings.get("delay-down")
    both = _rate(settings.get("rate"), flag("rate"))
    rate_up = _rate(settings.get("rate-up"), flag("rate-up"))
    rate_down = _rate(settings.get("rate-down"), flag("rate-down"))
    jitter, seed = settings.get("jitter"), settings.get("jitter-seed")
    return Link(
        delay_up_ms=half if up is None else parse_duration_ms(str(up), option=flag("delay-up")),
        delay_down_ms=half
        if down is None
        else parse_duration_ms(str(down), option=flag("delay-down")),
        rate_up_bits_s=both if rate_up is None else rate_up,
        rate_down_bits_s=both if rate_down is None else rate_down,
        jitter_ms=0.0 if jitter is None else _jitter_ms(jitter, flag("jitter")),
        seed=DEFAULT_LINK_SEED if seed is None else _seed(seed, flag("jitter-seed")),
    )


def _rate(value: Any, option: str) -> float | None:
    if value is None:
        return None
    text = str(value).strip()
    if text.startswith("-"):
        raise UsageError(f"{option}: {text!r} is negative; a rate is above 0 (e.g. 100Mbit)")
    return parse_rate_bits_s(text, option=option)


def _jitter_ms(value: Any, option: str) -> float:
    text = str(value).strip()
    if text.startswith("-"):
        raise UsageError(f"{option}: {text!r} is negative; jitter is 0 or more (e.g. 2ms)")
    return parse_duration_ms(text, option=option)


def _seed(value: Any, option: str) -> int:
    seed = whole_number(value, option)
    if seed < 0:
        raise UsageError(f"{option}: {seed} is negative; a seed is a whole number >= 0")
    return seed


def workload_from(
    settings: Mapping[str, Any], flag: Flag = spec_flag, rtt_ms: float = 0.0
) -> Workload:
    """``workload``, ``streams``, ``message-size``, ``duration``, ``bytes``, ``calls``, ``timeout``,
    ``slow-streams``, ``read-rate``.

    Without ``timeout`` the hard timeout scales with the link: max(60 s, 2 x the timed
    phase + 60 RTTs), so a 2 s RTT (a 40 s timed phase) is not cut short.
    """
    s = {k: v for k, v in settings.items() if v is not None}
    duration, size = s.get("duration"), s.get("bytes")
    if duration is not None and size is not None:
        raise UsageError(
            f"{flag('bytes')}: a run is timed ({flag('duration')}) or a fixed transfer "
            f"({flag('bytes')}), not both"
        )
    read_rate = s.get("read-rate")
    workload = Workload(
        kind=cast(WorkloadKind, str(s.get("workload", "download"))),
        streams=whole_number(s.get("streams", 1), flag("streams")),
        message_bytes=parse_size_bytes(
            str(s.get("message-size", "256KiB")), option=flag("message-size")
        ),
        duration_s=None if duration is None else _duration_s(duration, flag("duration")),
        bytes_per_stream=None
        if size is None
        else parse_size_bytes(str(size), option=flag("bytes")),
        calls=whole_number(s.get("calls", 200), flag("calls")),
        timeout_s=_duration_s(s.get("timeout", "60s"), flag("timeout")),
        slow_streams=whole_number(s.get("slow-streams", 0), flag("slow-streams")),
        read_rate_bits_s=None
        if read_rate is None
        else parse_rate_bits_s(str(read_rate), option=flag("read-rate")),
    )
    if "timeout" in s:
        return workload
    scaled = 2 * workload.timed_duration_s(rtt_ms) + DEFAULT_TIMEOUT_RTTS * rtt_ms / 1000
    return replace(workload, timeout_s=min(MAX_DEFAULT_TIMEOUT_S, max(workload.timeout_s, scaled)))


def server_from(settings: Mapping[str, Any], flag: Flag = spec_flag) -> ServerConfig:
    """``server-window`` (static), ``server-mode`` (dynamic | static | bdp-off, inferred from
    the window when omitted), ``server-option`` (``key=value`` channel arguments, repeatable)."""
    window = _window(settings.get("server-window"), flag("server-window"))
    mode = str(settings.get("server-mode") or ("static" if window is not None else "dynamic"))
    if mode != "static" and window is not None:
        raise UsageError(
            f"{flag('server-window')}: server mode {mode!r} does not take a window "
            f"(drop {flag('server-mode')} or {flag('server-window')})"
        )
    if mode == "static" and window is None:
        raise UsageError(
            f"{flag('server-mode')}: a static server window needs {flag('server-window')}"
        )
    option = flag("server-option")
    raw = settings.get("server-option") or ()
    pairs = [o if isinstance(o, tuple) else parse_option(str(o), option=option) for o in raw]
    return ServerConfig(
        window_mode=cast(WindowMode, mode),
        window_bytes=window,
        channel_options=channel_args(pairs, option),
    )


def channel_args(
    pairs: Sequence[tuple[str, Any]], option: str
) -> tuple[tuple[str, OptionValue], ...]:
    """grpcio channel arguments, checked: grpcio ignores an unknown key silently, so a key
    must look like one (``grpc.http2.bdp_probe``), appear once, and hold an int or a string."""
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise UsageError(f"{option} {repeated[0]} given twice")
    return tuple(_channel_arg(k, v, option) for k, v in pairs)


def _channel_arg(key: str, value: Any, option: str) -> tuple[str, OptionValue]:
    if "." not in key:
        raise UsageError(
            f"{option}: {key!r} is not a grpcio channel argument "
            "(they look like grpc.http2.bdp_probe)"
        )
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise UsageError(f"{option} {key}: {value!r} must be an integer or a string")
    return (key, value) if isinstance(value, int) else parse_option(f"{key}={value}", option)


# --- clients ------------------------------------------------------------------------------


def client_from(
    kind: str,
    items: Sequence[tuple[str, Any]],
    flag: Flag = spec_flag,
    options: Sequence[tuple[str, Any]] = (),
) -> ClientConfig:
    """A ClientConfig from kit settings (``items``) and grpcio channel arguments (``options``).

    On the command line they arrive apart (``--window`` vs ``--option``); in a spec or a
    plan file they share one list, where a key with a dot is a channel argument.
    """
    if kind not in CLIENT_KINDS:
        raise UsageError(f"{flag('client')}: {kind!r} is not one of {', '.join(CLIENT_KINDS)}")
    keys = [k for k, _ in items]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise UsageError(f"{', '.join(flag(k) for k in repeated)} given twice")
    settings = [(k, v) for k, v in items if "." not in k]
    args = [*options, *((k, v) for k, v in items if "." in k)]
    if kind == "h2":
        if args:
            raise UsageError(
                f"{flag('option')}: channel arguments ({args[0][0]}) are for the grpcio client "
                "only (the h2 client takes window, conn-window, credit, max-frame, connections)"
            )
        return _h2_client(dict(settings), flag)
    return _grpcio_client(dict(settings), channel_args(args, flag("option")), flag)


def _policy(settings: Mapping[str, Any], flag: Flag) -> Any:
    """``window-policy`` is ``mode`` by its other name; give one of them."""
    mode, policy = settings.get("mode"), settings.get("window-policy")
    if mode is not None and policy is not None:
        raise UsageError(f"{flag('window-policy')}: give it or {flag('mode')}, not both")
    return policy if policy is not None else mode


def _mode(value: Any, window: int | None, flag: Flag) -> WindowMode:
    mode = str(value or ("static" if window is not None else "dynamic"))
    if mode != "static" and window is not None:
        raise UsageError(
            f"{flag('window')}: mode {mode!r} does not take a window "
            f"(drop {flag('mode')} or {flag('window')})"
        )
    return cast(WindowMode, mode)


def _h2_client(settings: Mapping[str, Any], flag: Flag) -> ClientConfig:
    norm = {k.replace("_", "-"): v for k, v in settings.items()}
    unknown = sorted(set(norm) - set(H2_KEYS))
    if unknown:
        raise UsageError(f"unknown h2 setting {', '.join(unknown)} (use {', '.join(H2_KEYS)})")
    window = _window(norm.get("window"), flag("window"))
    conn = _window(norm.get("conn-window"), flag("conn-window"))
    mode = _mode(_policy(norm, flag), window, flag)
    if mode in ("dynamic", "pool") and conn is not None:
        raise UsageError(
            f"{flag('conn-window')}: the {mode} h2 client grows its connection window itself; "
            + ("set " + flag("window") + " too" if mode == "dynamic" else "it opens it to 2^31-1")
        )
    max_frame, credit, pool = norm.get("max-frame"), norm.get("credit"), norm.get("pool")
    return ClientConfig(
        kind="h2",
        window_mode=mode,
        window_bytes=window,
        conn_window_bytes=conn,
        credit_policy=None if credit is None else cast(CreditPolicy, str(credit)),
        max_frame_bytes=None
        if max_frame is None
        else parse_size_bytes(str(max_frame), option=flag("max-frame")),
        connections=whole_number(norm.get("connections", 1), flag("connections")),
        conn_credit=cast(ConnCredit, str(norm.get("conn-credit", "receipt"))),
        pool_bytes=None if pool is None else parse_size_bytes(str(pool), option=flag("pool")),
    )


# Settings only our h2 client has, and why grpcio refuses each (it would ignore them).
_H2_ONLY = {
    "conn-window": "the grpcio client cannot set the connection window separately "
    "(C-core derives it from the stream window); use the h2 client",
    "credit": "only the h2 client has a credit policy (C-core returns credit itself)",
    "conn-credit": "only the h2 client chooses when connection credit goes back "
    "(C-core returns it itself)",
    "pool": "the receive pool is the h2 client's (use --client h2 --window-policy pool)",
    "max-frame": "only the h2 client advertises it here; for grpcio pass the channel argument "
    "grpc.http2.max_frame_size (honoured with grpc.http2.bdp_probe=0)",
}


def _grpcio_client(
    settings: Mapping[str, Any], options: tuple[tuple[str, OptionValue], ...], flag: Flag
) -> ClientConfig:
    for key in settings:
        if key in _H2_ONLY:
            raise UsageError(f"{flag(key)}: {_H2_ONLY[key]}")
        if key not in GRPCIO_KIT_KEYS:
            raise UsageError(
                f"{flag(key)}: not a grpcio channel argument or kit key (channel arguments "
                f"look like grpc.http2.bdp_probe; kit keys: {', '.join(GRPCIO_KIT_KEYS)})"
            )
    window = _window(settings.get("window"), flag("window"))
    return ClientConfig(
        kind="grpcio",
        window_mode=_mode(_policy(settings, flag), window, flag),
        window_bytes=window,
        channel_options=options,
        connections=whole_number(settings.get("connections", 1), flag("connections")),
    )


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
        if kind == SERVER_KIND:
            items = split_items(rest) if sep else []
            return Candidate(name or spec, ClientConfig(), spec, _server_items(items, "", ""))
        if kind not in CLIENT_KINDS:
            raise UsageError(
                f"client {kind!r} is not one of {', '.join((*CLIENT_KINDS, SERVER_KIND))} "
                "(e.g. 'grpcio:grpc.http2.bdp_probe=0', 'h2:window=4MiB,conn-window=16MiB' "
                "or 'server:window=4MiB')"
            )
        items = split_items(rest) if sep else []
        client_items = [(k, v) for k, v in items if not k.startswith("server-")]
        server = _server_items(items, "server-", "server-")
        return Candidate(name or spec, client_from(kind, client_items), spec, server)


def _server_items(items: Sequence[tuple[str, Any]], prefix: str, flag_prefix: str) -> ServerConfig:
    """Server settings of a spec (``window``, ``mode``, ``option``; dotted keys are channel
    arguments) -> ServerConfig. ``prefix`` picks them out of a client spec."""
    mine = [(k[len(prefix) :], v) for k, v in items if k.startswith(prefix)] if prefix else items
    known = ("window", "mode", "option")
    settings: dict[str, Any] = {"server-option": []}
    for key, value in mine:
        if "." in key and not prefix:
            settings["server-option"].append((key, value))
        elif key not in known:
            raise UsageError(
                f"unknown server setting {flag_prefix}{key} (use {', '.join(flag_prefix + k for k in known)}"
                + (", or a channel argument like grpc.http2.bdp_probe=0)" if not prefix else ")")
            )
        elif key == "option":
            settings["server-option"].append(parse_option(str(value), option=flag_prefix + key))
        elif f"server-{key}" in settings:
            raise UsageError(f"{flag_prefix}{key} given twice")
        else:
            settings[f"server-{key}"] = value
    return server_from(settings, lambda key: flag_prefix + key.removeprefix("server-"))


def candidate_from_items(
    kind: str, items: Sequence[tuple[str, Any]], name: str | None
) -> Candidate:
    """A candidate given as fields (a plan file's table): its spec is rebuilt from them."""
    spec = kind + (":" + ",".join(f"{k}={v}" for k, v in items) if items else "")
    with prefixed(f"candidate {spec!r}"):
        client_items = [(k, v) for k, v in items if not k.startswith("server-")]
        server = _server_items(items, "server-", "server-")
        return Candidate(name or spec, client_from(kind, client_items), spec, server)


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
