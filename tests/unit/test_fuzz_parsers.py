"""Property-based fuzzing of every parser that sees user or file input.

Each one either returns a valid value or raises the kit's own error (``KitError``) with a
message - never another exception. Complements the narrower properties in test_records.py
and test_frametap.py (random bytes) with structured near-misses, which find more.
"""

from __future__ import annotations

import itertools
import json
import math
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import given, settings
from hypothesis import strategies as st

from kit.capture.frametap import CLIENT_PREFACE, FrameTap
from kit.capture.summary import parse_tap_lines
from kit.delayline.__main__ import parse_args as parse_proxy_args
from kit.delayline.relay import ProxyConfig
from kit.errors import KitError
from kit.grpc_options import parse_option
from kit.measure import Measurement
from kit.plan import Trial
from kit.records import append_record, read_records
from kit.units import (
    HTTP2_MAX_WINDOW_BYTES,
    parse_duration_ms,
    parse_size_bytes,
    parse_window_bytes,
)

T = TypeVar("T")

NUMBERS = st.one_of(
    st.integers(-10, 10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.from_regex(r"\A[-+]?[0-9]{0,4}(\.[0-9]{0,3})?([eE][-+]?[0-9]{1,4})?\Z"),
)
UNITS = st.sampled_from(["", "ms", "s", "us", "µs", "ns", "m", "min", "h", "B", "KiB", "kib",
                         "MiB", "GiB", "KB", "k", "M", "g", "TiB", "%", "e3"])
UNIT_TEXT = st.one_of(
    st.tuples(st.sampled_from(["", " ", "\t"]), NUMBERS, st.sampled_from(["", " "]), UNITS,
              st.sampled_from(["", " ", "\n"])).map("".join),
    st.text(max_size=20),
)


def outcome(parse: Callable[[], T]) -> T | KitError:
    """The parser's value, or the KitError it raised; anything else propagates (= a bug)."""
    try:
        return parse()
    except KitError as exc:
        assert str(exc).strip(), "a KitError needs a message"
        return exc


# -- units and options ----------------------------------------------------------------------


@settings(max_examples=400)
@given(UNIT_TEXT)
def test_durations_are_finite_non_negative_ms_or_a_kit_error(text: str) -> None:
    value = outcome(lambda: parse_duration_ms(text, option="--rtt"))
    if not isinstance(value, KitError):
        assert isinstance(value, float) and math.isfinite(value) and value >= 0
    else:
        assert "--rtt" in str(value)


@settings(max_examples=400)
@given(UNIT_TEXT)
def test_sizes_are_whole_non_negative_bytes_or_a_kit_error(text: str) -> None:
    value = outcome(lambda: parse_size_bytes(text, option="--bytes"))
    if not isinstance(value, KitError):
        assert type(value) is int and value >= 0
    window = outcome(lambda: parse_window_bytes(text))
    if not isinstance(window, KitError):
        assert 1 <= window <= HTTP2_MAX_WINDOW_BYTES


@settings(max_examples=300)
@given(st.one_of(
    st.text(max_size=30),
    st.tuples(st.text(max_size=12), st.sampled_from(["=", "==", " = ", ""]),
              st.one_of(NUMBERS, st.text(max_size=8))).map("".join),
))
def test_options_are_key_value_pairs_or_a_kit_error(text: str) -> None:
    value = outcome(lambda: parse_option(text))
    if not isinstance(value, KitError):
        key, raw = value
        assert key and not any(ch.isspace() for ch in key)
        assert isinstance(raw, int | str) and raw != ""


# -- the proxy's argument parser ------------------------------------------------------------

PROXY_FLAGS = ["--listen", "--upstream", "--delay-up-ms", "--delay-down-ms", "--tap-file",
               "--read-bytes", "--buffer-cap-bytes", "--bogus", "-x", "--"]
PROXY_VALUES = st.one_of(
    st.sampled_from(["127.0.0.1:0", "127.0.0.1:8080", "[::1]:1", ":80", "host:", "h:99999",
                     "nan", "inf", "-1", "1e9", "0", "65536", "1024", "x", ""]),
    NUMBERS,
    st.text(max_size=10),
)


@settings(max_examples=300)
@given(st.lists(st.one_of(st.sampled_from(PROXY_FLAGS), PROXY_VALUES), max_size=8))
def test_proxy_arguments_give_a_valid_config_or_a_kit_error(argv: list[str]) -> None:
    # (-h/--help print help and exit 0, as they should: not generated here.)
    value = outcome(lambda: parse_proxy_args(["--upstream", "127.0.0.1:1", *argv]))
    if not isinstance(value, KitError):
        assert isinstance(value, ProxyConfig)
        assert math.isfinite(value.delay_up_ms) and math.isfinite(value.delay_down_ms)


# -- Trial.from_dict (trials travel to child processes as JSON) -----------------------------

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40),
                         st.floats(allow_nan=False), st.text(max_size=8))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8,
)
VALID = Trial().to_dict()


@st.composite
def mutated_trials(draw: Any) -> Any:
    """A valid trial dict with a few fields replaced by arbitrary JSON (near misses)."""
    data = json.loads(json.dumps(VALID))
    for _ in range(draw(st.integers(1, 3))):
        section = draw(st.sampled_from(["link", "client", "server", "workload", "label", "extra"]))
        if not isinstance(data.get(section), dict) or draw(st.booleans()):
            data[section] = draw(json_values)
        else:
            field = draw(st.sampled_from([*sorted(VALID.get(section, {})), "unknown"]))
            data[section][field] = draw(json_values)
    return data


TRIAL_DICTS = st.one_of(json_values, st.just(VALID), mutated_trials())


@settings(max_examples=500)
@given(TRIAL_DICTS)
def test_trial_from_any_json_is_a_valid_trial_or_a_kit_error(data: Any) -> None:
    value = outcome(lambda: Trial.from_dict(data))
    if not isinstance(value, KitError):
        assert isinstance(value, Trial)
        assert Trial.from_dict(value.to_dict()) == value  # what was accepted round-trips
        assert isinstance(value.workload.streams, int) and value.workload.streams >= 1
        assert isinstance(value.label, str)


# -- records files ---------------------------------------------------------------------------


def _records(n: int) -> list[Measurement]:
    return [Measurement(trial=Trial().to_dict(), status="ok" if i % 2 else "failed",
                        result={"client": "h2", "bytes": 1 << 20, "elapsed_s": 0.5 + i}
                        if i % 2 else None, error="" if i % 2 else "timeout",
                        tags={"run_id": f"r{i}"}) for i in range(n)]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.data())
def test_a_records_file_cut_anywhere_keeps_every_complete_line(n: int, data: Any) -> None:
    """A power cut at any byte: every whole line before it survives, the torn one is named,
    and the next append still lands on a line of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "runs.jsonl"
        for m in _records(n):
            append_record(path, m)
        raw = path.read_bytes()
        cut = data.draw(st.integers(0, len(raw)))
        path.write_bytes(raw[:cut])
        # A line survives if the cut kept all of it (its newline may be the byte cut off).
        ends = [i for i, byte in enumerate(raw) if byte == ord("\n")]
        whole_lines = sum(1 for end in ends if end <= cut)
        read = read_records(path)
        assert [m.tags for m in read.measurements] == [{"run_id": f"r{i}"}
                                                         for i in range(whole_lines)]
        torn = cut not in (0, *ends, *(e + 1 for e in ends))
        assert len(read.warnings) == (1 if torn else 0)
        append_record(path, {"kind": "note"})
        again = read_records(path)
        assert again.others[-1] == {"kind": "note"}
        assert len(again.measurements) == whole_lines


@settings(max_examples=300)
@given(st.lists(st.one_of(json_values.map(json.dumps), st.text(max_size=30)), max_size=6))
def test_tap_lines_parse_to_dicts_or_a_kit_error(lines: list[str]) -> None:
    value = outcome(lambda: parse_tap_lines("\n".join(lines)))
    if not isinstance(value, KitError):
        assert all(isinstance(r, dict) for r in value)


# -- the frame tap: structured near-misses, split anywhere -----------------------------------


def _frame(frame_type: int, flags: int, stream: int, declared: int, body: bytes) -> bytes:
    return struct.pack(">I", declared)[1:] + bytes([frame_type, flags]) + struct.pack(
        ">I", stream) + body


frames = st.builds(
    _frame,
    st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xA, 0xFF]),
    st.integers(0, 255),
    st.sampled_from([0, 1, 3, 2**31 - 1, 2**31]),
    st.one_of(st.integers(0, 64), st.sampled_from([2**14, 2**24 - 1])),
    st.binary(max_size=64),
)
SETTINGS = _frame(4, 0, 0, 6, struct.pack(">HI", 4, 65535))


def _summary_without_times(summary: dict[str, Any]) -> str:
    text = json.dumps(summary, sort_keys=True)  # JSON-ready, or this raises
    data = json.loads(text)
    for entry in data["settings"]:
        entry.pop("t_ns")
    data["conn_window_updates"].pop("first_t_ns")
    data["pings"]["events"] = [e[1:] for e in data["pings"]["events"]]
    return json.dumps(data, sort_keys=True)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["up", "down"]), st.booleans(), st.lists(frames, max_size=6),
       st.lists(st.integers(0, 2000), max_size=6))
def test_frame_tap_never_raises_and_any_split_gives_the_same_verdict(
    direction: str, valid_start: bool, body: list[bytes], cuts: list[int]
) -> None:
    stream = (CLIENT_PREFACE if direction == "up" else b"") + (SETTINGS if valid_start else b"")
    stream += b"".join(body)
    whole, pieces = FrameTap(direction), FrameTap(direction)  # type: ignore[arg-type]
    whole.feed(stream, 1)
    whole.end(2)
    bounds = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    for start, stop in itertools.pairwise(bounds):
        pieces.feed(stream[start:stop], 1)
    pieces.end(2)
    assert whole.summary()["bytes"] == len(stream)
    assert _summary_without_times(whole.summary()) == _summary_without_times(pieces.summary())
    assert whole.decodable == whole.summary()["decodable"]
