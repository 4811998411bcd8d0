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

from kit._proto import worker_pb2 as pb
from kit.capture.frametap import CLIENT_PREFACE, FrameTap
from kit.capture.summary import summarize
from kit.capture.tapfile import encode_tap_line, parse_tap_lines, tap_connections
from kit.errors import KitError
from kit.plan.grpc_args import parse_option
from kit.plan.jobs import proxy_config
from kit.plan.processes import ProxyConfig
from kit.plan.tables import TablesSettings
from kit.plan.trial import Link, Trial
from kit.plan.units import (
    HTTP2_MAX_WINDOW_BYTES,
    parse_duration_ms,
    parse_size_bytes,
    parse_window_bytes,
)
from kit.protocol import config_argv, config_text, parse_config_argv
from kit.results.client import ClientResult
from kit.results.codec import from_json, to_json
from kit.results.records import (
    Direction,
    DirectionSummary,
    Measurement,
    ProxyTotals,
    RunTags,
    TapConnection,
)
from kit.results.store import append_record, read_records

T = TypeVar("T")

NUMBERS = st.one_of(
    st.integers(-10, 10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.from_regex(r"\A[-+]?[0-9]{0,4}(\.[0-9]{0,3})?([eE][-+]?[0-9]{1,4})?\Z"),
)
UNITS = st.sampled_from(
    [
        "",
        "ms",
        "s",
        "us",
        "µs",
        "ns",
        "m",
        "min",
        "h",
        "B",
        "KiB",
        "kib",
        "MiB",
        "GiB",
        "KB",
        "k",
        "M",
        "g",
        "TiB",
        "%",
        "e3",
    ]
)
UNIT_TEXT = st.one_of(
    st.tuples(
        st.sampled_from(["", " ", "\t"]),
        NUMBERS,
        st.sampled_from(["", " "]),
        UNITS,
        st.sampled_from(["", " ", "\n"]),
    ).map("".join),
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
@given(
    st.one_of(
        st.text(max_size=30),
        st.tuples(
            st.text(max_size=12),
            st.sampled_from(["=", "==", " = ", ""]),
            st.one_of(NUMBERS, st.text(max_size=8)),
        ).map("".join),
    )
)
def test_options_are_key_value_pairs_or_a_kit_error(text: str) -> None:
    value = outcome(lambda: parse_option(text))
    if not isinstance(value, KitError):
        key, raw = value
        assert key and not any(ch.isspace() for ch in key)
        assert isinstance(raw, int | str) and raw != ""


# -- the proxy's --config parser ------------------------------------------------------------

PROXY_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**33), 2**33),
    st.floats(allow_nan=False),
    st.sampled_from([0, 1, 1023, 1024, 65535, 65536, 10_000.0, 10_000.5, 2**40, 2**40 + 1]),
    st.sampled_from(["", "127.0.0.1", "0.0.0.0", "::1", "/tmp/tap.jsonl", "x"]),
    st.text(max_size=8),
)
PROXY_JSON = st.recursive(
    PROXY_JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
VALID_PROXY = json.loads(
    config_text(ProxyConfig(upstream_port=50051, link=Link(delay_up_ms=10.0), tap_path="/tmp/t"))
)


@st.composite
def mutated_proxy_configs(draw: Any) -> Any:
    """A valid ProxyJob as JSON with a few fields replaced, dropped or added."""
    data = dict(VALID_PROXY)
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from([*sorted(VALID_PROXY), "unknown"]))
        if draw(st.integers(0, 4)) == 0:
            data.pop(name, None)
        else:
            data[name] = draw(PROXY_JSON)
    return data


PROXY_ARGV = st.one_of(
    st.one_of(st.just(VALID_PROXY), mutated_proxy_configs(), PROXY_JSON).map(
        lambda data: ["--config", json.dumps(data)]
    ),
    mutated_proxy_configs().map(lambda data: ["--config=" + json.dumps(data)]),
    st.lists(
        st.one_of(st.sampled_from(["--config", "--upstream", "-x"]), st.text(max_size=12)),
        max_size=4,
    ),
)


@settings(max_examples=500)
@given(PROXY_ARGV)
def test_proxy_config_argument_gives_a_valid_config_or_a_kit_error(argv: list[str]) -> None:
    """The delay line's argument (a ProxyJob) -> its checked ProxyConfig, or the kit's error."""

    def parse(args: list[str]) -> ProxyConfig:
        return proxy_config(parse_config_argv(args, pb.ProxyJob, "proxy config"))

    value = outcome(lambda: parse(argv))
    if not isinstance(value, KitError):
        assert isinstance(value, ProxyConfig)
        assert math.isfinite(value.link.delay_up_ms) and math.isfinite(value.link.delay_down_ms)
        assert 1 <= value.upstream_port <= 65535
        # what was accepted round-trips
        assert parse(config_argv(value)) == value


# -- trials from JSON (trials travel to child processes as JSON) -----------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False),
    st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
VALID = to_json(Trial())


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
    value = outcome(lambda: from_json(Trial, data, "trial"))
    if not isinstance(value, KitError):
        assert isinstance(value, Trial)
        assert from_json(Trial, to_json(value), "trial") == value  # accepted round-trips
        assert isinstance(value.workload.streams, int) and value.workload.streams >= 1
        assert isinstance(value.label, str)


# -- records files ---------------------------------------------------------------------------


def _records(n: int) -> list[Measurement]:
    return [
        Measurement(
            trial=Trial(),
            status="ok" if i % 2 else "failed",
            result=ClientResult(client="h2", bytes=1 << 20, elapsed_s=0.5 + i) if i % 2 else None,
            error="" if i % 2 else "timeout",
            tags=RunTags(run_id=f"r{i}"),
        )
        for i in range(n)
    ]


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
        assert [m.tags.run_id for m in read.measurements] == [f"r{i}" for i in range(whole_lines)]
        torn = cut not in (0, *ends, *(e + 1 for e in ends))
        assert len(read.warnings) == (1 if torn else 0)
        append_record(path, TablesSettings(seed=99))
        again = read_records(path)
        assert again.tables_plans[-1] == TablesSettings(seed=99)
        assert len(again.measurements) == whole_lines


# -- tap files (the proxy's frame-tap lines) -------------------------------------------------

_TAP_CONN = encode_tap_line(TapConnection(1, 10, 20, DirectionSummary(bytes=5), DirectionSummary()))


@st.composite
def mutated_tap_lines(draw: Any) -> str:
    """A valid tap line with one nested field replaced by arbitrary JSON, maybe cut short."""
    data = json.loads(json.dumps(_TAP_CONN))
    section = draw(st.sampled_from(["schema", "kind", "conn", "up", "down", "opened_ns"]))
    if section in ("up", "down") and draw(st.booleans()):
        data[section][draw(st.sampled_from([*sorted(data[section]), "unknown"]))] = draw(PROXY_JSON)
    else:
        data[section] = draw(PROXY_JSON)
    text = json.dumps(data)
    return text[: draw(st.integers(0, len(text)))] if draw(st.booleans()) else text


TAP_TEXT_LINES = st.one_of(
    PROXY_JSON.map(json.dumps),
    st.just(json.dumps(_TAP_CONN)),
    mutated_tap_lines(),
    st.text(max_size=30).map(lambda t: t.replace("\n", " ")),
)


@settings(max_examples=400)
@given(st.lists(TAP_TEXT_LINES, max_size=6))
def test_tap_lines_are_typed_lines_or_counted_as_skipped(lines: list[str]) -> None:
    parsed, skipped = parse_tap_lines("\n".join(lines))  # never raises
    assert all(isinstance(line, TapConnection | ProxyTotals) for line in parsed)
    assert len(parsed) + skipped == sum(1 for line in lines if line.strip())
    summary = summarize(tap_connections(parsed), 1.0, skipped_lines=skipped)
    assert summary.connections + summary.tap_lines_skipped <= len(lines)


# -- the frame tap: structured near-misses, split anywhere -----------------------------------


def _frame(frame_type: int, flags: int, stream: int, declared: int, body: bytes) -> bytes:
    return (
        struct.pack(">I", declared)[1:]
        + bytes([frame_type, flags])
        + struct.pack(">I", stream)
        + body
    )


frames = st.builds(
    _frame,
    st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xA, 0xFF]),
    st.integers(0, 255),
    st.sampled_from([0, 1, 3, 2**31 - 1, 2**31]),
    st.one_of(st.integers(0, 64), st.sampled_from([2**14, 2**24 - 1])),
    st.binary(max_size=64),
)
SETTINGS = _frame(4, 0, 0, 6, struct.pack(">HI", 4, 65535))


def _summary_without_times(summary: DirectionSummary) -> str:
    data = to_json(summary)
    text = json.dumps(data, sort_keys=True)  # JSON-ready, or this raises
    assert from_json(DirectionSummary, json.loads(text)) == summary  # and decodes back
    for entry in (*data["settings"], *data["ping_events"], *data["stream_window_first"]):
        entry.pop("t_ns")
    data["conn_window_updates"].pop("first_t_ns")
    data["stream_window_updates"].pop("first_t_ns")
    # One mark per chunk that moved DATA, by design: how a stream is cut changes how many
    # marks it gets, never the total they reach.
    data["data_marks"] = [mark[1] for mark in data["data_marks"][-1:]]
    return json.dumps(data, sort_keys=True)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["up", "down"]),
    st.booleans(),
    st.lists(frames, max_size=6),
    st.lists(st.integers(0, 2000), max_size=6),
)
def test_frame_tap_never_raises_and_any_split_gives_the_same_verdict(
    direction: Direction, valid_start: bool, body: list[bytes], cuts: list[int]
) -> None:
    stream = (CLIENT_PREFACE if direction == "up" else b"") + (SETTINGS if valid_start else b"")
    stream += b"".join(body)
    whole, pieces = FrameTap(direction), FrameTap(direction)
    whole.feed(stream, 1)
    whole.end()
    bounds = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    for start, stop in itertools.pairwise(bounds):
        pieces.feed(stream[start:stop], 1)
    pieces.end()
    assert whole.summary().bytes == len(stream)
    assert _summary_without_times(whole.summary()) == _summary_without_times(pieces.summary())
    assert whole.decodable == whole.summary().decodable
