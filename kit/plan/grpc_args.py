"""grpcio channel arguments for each window mode, in one place (client and server alike).

Facts (checked on the wire by tests/integration/test_grpcio_windows.py):
- dynamic: C-core defaults, BDP probe on (window starts at 4 MiB; it targets
  max(4 MiB, 2 x BDP) while memory pressure is below 20 %, ramping down towards 2 x BDP
  and then 0 above: chttp2 ``flow_control.cc``
  ``TargetInitialWindowSizeBasedOnMemoryPressureAndBdp``, grpcio 1.85);
- static W: ``bdp_probe=0`` + ``lookahead_bytes=W`` (lookahead only sticks without BDP);
- bdp-off: ``bdp_probe=0`` alone (the window then depends on message size: C-core grants
  per-message extra credit while the application waits for a message).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from kit._proto import worker_pb2 as pb
from kit.errors import UsageError
from kit.plan.grpc_arg_names import CHANNEL_ARG_NAMES
from kit.plan.trial import OptionValue, ServerConfig, WindowMode
from kit.plan.units import MIB

OptionList = list[tuple[str, OptionValue]]

# C-core grants a stream up to this much extra credit for a message being read.
CCORE_EXTRA_CREDIT_BYTES = MIB
STATIC_WINDOW_NOTE = (
    "grpcio static windows: C-core grants each stream extra credit of min(bytes missing of "
    "the message being read, 1 MiB), so a static window can exceed window/RTT"
)

SERVER_EXTRA_CREDIT_NOTE = (
    "grpcio server (C-core) receives uploads: it grants each stream extra credit of min(bytes "
    "missing of the message being read, 1 MiB), so a static server window can exceed window/RTT"
)


def server_notes(server: ServerConfig) -> tuple[str, ...]:
    """What an upload's output says about the server's receive window (C-core's extra credit
    matters whenever the window is not the dynamic one, which is large anyway). Only a grpcio
    server is C-core; another stack's server rules are in its README."""
    if server.kind != "grpcio" or server.window_mode == "dynamic":
        return ()
    return (SERVER_EXTRA_CREDIT_NOTE,)


def window_options(mode: WindowMode, window_bytes: int | None) -> OptionList:
    if mode == "dynamic":
        return []
    if mode == "bdp-off":
        return [("grpc.http2.bdp_probe", 0)]
    if window_bytes is None:
        raise UsageError("--window: a static window needs a size")
    return [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", window_bytes)]


def merge_options(
    base: Sequence[tuple[str, OptionValue]], extra: Sequence[tuple[str, OptionValue]]
) -> OptionList:
    """Later options win; grpcio would otherwise take the first of two equal keys."""
    merged: dict[str, OptionValue] = {}
    for key, value in [*base, *extra]:
        merged[key] = value
    return list(merged.items())


# C-core reads these as integers and silently ignores anything else (the default stays).
INTEGER_ARGS = frozenset(
    {
        "grpc.http2.bdp_probe",
        "grpc.http2.lookahead_bytes",
        "grpc.http2.max_frame_size",
        "grpc.http2.hpack_table_size.decoder",
        "grpc.http2.hpack_table_size.encoder",
        "grpc.http2.max_pings_without_data",
        "grpc.http2.max_ping_strikes",
        "grpc.http2.write_buffer_size",
        "grpc.http2.true_binary",
        "grpc.http2.initial_sequence_number",
        "grpc.max_concurrent_streams",
        "grpc.max_metadata_size",
        "grpc.absolute_max_metadata_size",
        "grpc.keepalive_permit_without_calls",
        "grpc.enable_retries",
        "grpc.so_reuseport",
        "grpc.use_local_subchannel_pool",
        "grpc.enable_http_proxy",
        "grpc.minimal_stack",
        "grpc.enable_channelz",
        "grpc.per_rpc_retry_buffer_size",
    }
)
INTEGER_SUFFIXES = ("_ms", "_bytes", "_size", "_length", "_chunk_size")


def takes_integer(key: str) -> bool:
    return key in INTEGER_ARGS or (key.startswith("grpc.") and key.endswith(INTEGER_SUFFIXES))


def parse_option(text: str, option: str = "--option") -> tuple[str, OptionValue]:
    """ "grpc.http2.bdp_probe=0" -> ("grpc.http2.bdp_probe", 0); ints parsed as ints.

    A known integer argument with a value that is not an integer is refused: C-core would
    ignore it without a word and the record would claim it was applied."""
    key, sep, raw = text.partition("=")
    key, raw = key.strip(), raw.strip()
    if not sep or not key or not raw:
        raise UsageError(f"{option}: {text!r} is not key=value (e.g. grpc.http2.bdp_probe=0)")
    if any(ch.isspace() for ch in key):
        raise UsageError(f"{option}: key {key!r} has white space")
    try:
        return key, int(raw, 0)
    except ValueError:
        if takes_integer(key):
            raise UsageError(
                f"{option}: {key} takes an integer; {raw!r} is not one (e.g. {key}=0)"
            ) from None
        return key, raw


# C-core keeps an integer channel argument in a C int.
C_INT_MIN, C_INT_MAX = -(2**31), 2**31 - 1


def check_arg_name(key: str, option: str = "--option") -> None:
    """Refuse a key C-core does not define, naming the closest one it does."""
    if key in CHANNEL_ARG_NAMES:
        return
    close = difflib.get_close_matches(key, sorted(CHANNEL_ARG_NAMES), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else " (grpcio would ignore it without a word)"
    raise UsageError(f"{option}: {key!r} is unknown to grpcio{hint}")


def check_arg_value(pair: tuple[str, OptionValue], option: str = "--option") -> None:
    """Refuse an integer outside a C int: C-core cannot take it."""
    key, value = pair
    if isinstance(value, int) and not C_INT_MIN <= value <= C_INT_MAX:
        raise UsageError(
            f"{option} {key}: {value} is outside the range of a C int "
            f"({C_INT_MIN}..{C_INT_MAX}), which grpcio's channel arguments hold"
        )


def option_values(options: Iterable[pb.Option], who: str) -> list[tuple[str, int | str]]:
    """A job's options as C-core channel arguments: integers and strings only."""
    out: list[tuple[str, int | str]] = []
    for option in options:
        kind = option.WhichOneof("value")
        if kind == "int":
            out.append((option.name, option.int))
        elif kind == "text":
            out.append((option.name, option.text))
        elif kind == "flag":
            out.append((option.name, int(option.flag)))
        else:
            raise UsageError(
                f"{who}: bad job: option {option.name} takes an integer or a string, not {kind}"
            )
    return out
