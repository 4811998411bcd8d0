"""The named options of the stacks users run (``--option key=value`` with ``--client grpc-go``...).

The one place their ranges live: the kit refuses an option a stack does not have, or a value
out of its range, before it starts anything. A stack's program keeps only the mapping from
an option's name to the stack's own call, and refuses a name it does not have in one line
(``grpc-go client: option 'Foo' is not one of ...``); the conformance test reads each
program's list from that refusal and checks it against this table, so the two cannot drift
apart. What each knob does, and where the stack reads it, is in ``stacks/<stack>/README.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from kit.errors import UsageError

Side = Literal["client", "server"]
INT32_MAX = 2**31 - 1
GIB = 1 << 30


@dataclass(frozen=True)
class Knob:
    """An option's values: an integer in ``low..high``, ``bool`` (0/1/true/false) or a
    ``ratio`` (a decimal text strictly between 0 and 1). ``window``: it sets what the kit's
    static window sets, so the two are not given together."""

    low: int = 0
    high: int = INT32_MAX
    kind: Literal["int", "bool", "ratio"] = "int"
    window: bool = False

    def check(self, who: str, key: str, value: int | str) -> None:
        if self.kind == "bool":
            if value not in (0, 1, "true", "false"):
                raise UsageError(f"{who}: option {key} takes 0, 1, true or false, not {value!r}")
            return
        if self.kind == "ratio":
            try:
                ratio = float(str(value))
            except ValueError:
                ratio = -1.0
            if isinstance(value, int) or not 0.0 < ratio < 1.0:
                raise UsageError(
                    f"{who}: option {key} takes a ratio between 0 and 1 (e.g. 0.75), not {value!r}"
                )
            return
        if not isinstance(value, int) or not self.low <= value <= self.high:
            raise UsageError(
                f"{who}: option {key} takes an integer in {self.low}..{self.high}, not {value!r}"
            )


_WINDOW_GO = Knob(65_535, INT32_MAX, window=True)
_BUFFER_GO = Knob(0, GIB)
# Keepalive durations, in milliseconds everywhere (a stack may raise a small one itself:
# grpc-go and grpc-java clients to 10 s; the programs' notes say so).
_MS = Knob(1, 1 << 40)
_FLAG = Knob(kind="bool")
_GO_BOTH: dict[str, Knob] = {
    "InitialWindowSize": _WINDOW_GO,
    "InitialConnWindowSize": _WINDOW_GO,
    "ReadBufferSize": _BUFFER_GO,
    "WriteBufferSize": _BUFFER_GO,
    "SharedWriteBuffer": Knob(kind="bool"),
}
_JAVA_BOTH: dict[str, Knob] = {
    "flowControlWindow": Knob(1, window=True),
    "initialFlowControlWindow": Knob(1, window=True),
    "maxInboundMessageSize": Knob(1),
    "maxInboundMetadataSize": Knob(1),
    "SO_RCVBUF": Knob(1),
    "SO_SNDBUF": Knob(1),
    "useNioTransport": Knob(0, 1),
    "windowUpdateRatio": Knob(kind="ratio"),
}
_JS_BOTH: dict[str, Knob] = {
    "grpc-node.max_session_memory": Knob(1, 2**53 - 1),
    "grpc.max_receive_message_length": Knob(-1),
    "grpc.max_send_message_length": Knob(-1),
    "grpc.enable_channelz": Knob(0, 1),
}

_WINDOW_TONIC = Knob(1, INT32_MAX, window=True)
_TONIC_BOTH: dict[str, Knob] = {
    "initial_stream_window_size": _WINDOW_TONIC,
    "initial_connection_window_size": _WINDOW_TONIC,
    "http2_adaptive_window": Knob(kind="bool"),
    "max_frame_size": Knob(16_384, 2**24 - 1),
    "tcp_nodelay": Knob(kind="bool"),
}

STACK_OPTIONS: Mapping[str, Mapping[Side, Mapping[str, Knob]]] = {
    "grpc-go": {
        "client": {
            **_GO_BOTH,
            "KeepaliveTime": _MS,
            "KeepaliveTimeout": _MS,
            "KeepalivePermitWithoutStream": _FLAG,
        },
        "server": {
            **_GO_BOTH,
            "MaxConcurrentStreams": Knob(1, 2**32 - 1),
            "KeepaliveTime": _MS,
            "KeepaliveTimeout": _MS,
            "KeepaliveMinTime": _MS,
            "KeepalivePermitWithoutStream": _FLAG,
        },
    },
    "grpc-java": {
        "client": {
            **_JAVA_BOTH,
            "keepAliveTime": _MS,
            "keepAliveTimeout": _MS,
            "keepAliveWithoutCalls": _FLAG,
        },
        "server": {
            **_JAVA_BOTH,
            "maxConcurrentCallsPerConnection": Knob(1),
            "keepAliveTime": _MS,
            "keepAliveTimeout": _MS,
            "permitKeepAliveTime": _MS,
            "permitKeepAliveWithoutCalls": _FLAG,
        },
    },
    "grpc-js": {
        "client": {
            "grpc-node.flow_control_window": Knob(1),
            **_JS_BOTH,
            "grpc.enable_retries": Knob(0, 1),
            "grpc.per_rpc_retry_buffer_size": Knob(0),
            "grpc.keepalive_time_ms": _MS,
            "grpc.keepalive_timeout_ms": _MS,
            "grpc.keepalive_permit_without_calls": Knob(0, 1),
        },
        "server": {
            **_JS_BOTH,
            "grpc.max_concurrent_streams": Knob(1, 2**32 - 1),
            "grpc.keepalive_time_ms": _MS,
            "grpc.keepalive_timeout_ms": _MS,
        },
    },
    "tonic": {
        "client": {
            **_TONIC_BOTH,
            "http2_keep_alive_interval": _MS,
            "keep_alive_timeout": _MS,
            "keep_alive_while_idle": _FLAG,
        },
        "server": {
            **_TONIC_BOTH,
            "max_concurrent_streams": Knob(1, 2**32 - 1),
            "http2_keepalive_interval": _MS,
            "http2_keepalive_timeout": _MS,
        },
    },
}

# Options a stack has but the kit sets itself (or its side does not read): refused with why.
STACK_REFUSED: Mapping[str, Mapping[Side, Mapping[str, str]]] = {
    "grpc-js": {
        "client": {
            "grpc.use_local_subchannel_pool": "the kit sets it (1) so that each connection "
            "is a TCP connection of its own",
        },
        "server": {
            "grpc-node.flow_control_window": "grpc-js's Server does not read it; the server "
            "receive window is --server-window",
        },
    },
}


def check_stack_options(
    stack: str, side: Side, options: tuple[tuple[str, int | str], ...], static: bool = False
) -> None:
    """Refuse, in one line naming the stack, an option ``stack`` does not have on ``side``,
    and (``static``: the kit sets the window) one that sets the window too."""
    who = f"{stack} {side}"
    table = STACK_OPTIONS[stack][side]
    refused = STACK_REFUSED.get(stack, {}).get(side, {})
    seen: set[str] = set()
    for key, value in options:
        if key in refused:
            raise UsageError(f"{who}: option '{key}': {refused[key]}")
        if key not in table:
            raise UsageError(f"{who}: option '{key}' is not one of {', '.join(sorted(table))}")
        if key in seen:
            raise UsageError(f"{who}: option {key} given twice")
        seen.add(key)
        table[key].check(who, key, value)
        if static and table[key].window:
            window = "static window" if side == "client" else "static server window"
            raise UsageError(
                f"{who}: option {key} with a {window}: the {window} sets it itself; give the "
                "option with dynamic windows instead"
            )


_TONIC_WINDOWS = ("initial_stream_window_size", "initial_connection_window_size")


def check_tonic_windows(
    side: Side, static: bool, options: tuple[tuple[str, int | str], ...]
) -> None:
    """tonic's window knobs do not combine freely (stacks/tonic/README.md): the kit's static
    window sets both windows and turns the adaptive window off, and tonic applies
    ``http2_adaptive_window`` last (hyper then starts both windows at 65535, whatever was
    set). Refused in the words of the tonic programs, which refuse the same."""
    who = f"tonic {side}"
    adaptive = any(k == "http2_adaptive_window" and v in (1, "true") for k, v in options)
    if static and adaptive:
        raise UsageError(
            f"{who}: option http2_adaptive_window with a static "
            + ("window" if side == "client" else "server window")
            + ": the kit's static window turns the adaptive window off; give the option with "
            "dynamic windows instead"
        )
    if adaptive and any(k in _TONIC_WINDOWS for k, _ in options):
        raise UsageError(
            f"{who}: http2_adaptive_window=1 overrides initial_stream_window_size / "
            "initial_connection_window_size (tonic applies it last and hyper then starts both "
            "windows at 65535): give one or the other"
        )
