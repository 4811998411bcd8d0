"""Pure: one measurement -> one flat row, the schema of ``--json``, ``--csv`` and notebooks.

The row is derived from the typed records by reflection, so a field added to a record (a
link's rate, a server window, per-stream results) becomes a column without an edit here:

- a few **headline** columns first (``schema``, ``status``, ``client``, ``server``,
  ``window_policy``, ``workload``, ``rtt_ms``, ``window_bytes``, ``throughput_mib_s``,
  ``efficiency``, ``ping_rtt_ms``, latency percentiles): what ran and the numbers people
  plot;
- then every field and public property of ``Measurement``, walked through its nested
  dataclasses and named by their path joined with ``_`` (``link_delay_up_ms``,
  ``client_window_bytes``, ``result_elapsed_s``, ``frames_conn_window_updates_count``,
  ``tags_round``); the ``trial`` level is dropped from names. Units are in the field names.
  The frame summary's two endpoints (``frames.client``, ``frames.server``, one record each
  since records schema 3) keep the columns they had before, in the same place (``_RENAMED``,
  ``_PLACED_AFTER``): ``frames_client_settings``, ``frames_conn_window_updates_count``,
  ``frames_window_growth``, ``frames_server_pings_sent``.

Values are JSON values: numbers, strings, booleans, null, and lists/objects for sequences
and mappings (``result_ping_rtt_ms``, ``frames_client_settings``). A CSV cell holds the same
value as text (``csv_cell``): null is empty, booleans ``true``/``false``, lists and objects
compact JSON; ``parse_csv_row`` reads a row back into the JSON values, using the column
types this module derives from the records' type hints.

The row is compact unless ``full``: time series (``SERIES``: PING RTTs, per-call
latencies, the tap's window samples) are left out, their meaning kept in compact columns
(per-stream lists, window growth as sizes); floats are rounded to what the measurement
resolves (``_ROUNDING``); no cell is longer than a spreadsheet cell holds. An h2 download's
row is ~4 KB of JSON; with ``full`` it is every field, unrounded.

``FLAT_SCHEMA`` is bumped when a column is renamed or changes meaning (never for a new one).
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, get_args, get_origin

from kit.analysis.cells import efficiency, latency_stats, ping_rtt_ms
from kit.analysis.intervals import intervals_of
from kit.analysis.link import link_json
from kit.analysis.sharing import stream_sharing, tap_windows
from kit.results.codec import to_json
from kit.results.records import Measurement

FLAT_SCHEMA = 3  # 3: window_final_bytes is the largest window the sender had
Kind = Literal["str", "str?", "int", "float", "bool", "json"]
Row = dict[str, Any]

# Headline columns and their kinds: computed, not reflected (each also named in the README).
HEADLINE: dict[str, Kind] = {
    "schema": "int",
    "status": "str",
    "client": "str",
    "server": "str",
    "window_policy": "str",
    "workload": "str",
    "rtt_ms": "float",
    "window_bytes": "int",
    "conn_window_bytes": "int",
    "throughput_mib_s": "float",
    "theory_mib_s": "float",
    "efficiency": "float",
    "ping_rtt_ms": "float",
    "latency_mean_ms": "float",
    "latency_p50_ms": "float",
    "latency_p99_ms": "float",
}
# Derived columns after the headline: what the link, uploads and shared connections add
# (``kit.analysis.link``, ``kit.analysis.sharing``), named as ``kit run --json`` names them.
DERIVED: dict[str, Kind] = {
    "rate_up_bits_s": "float",
    "rate_down_bits_s": "float",
    "jitter_ms": "float",
    "bdp_bytes": "int",
    "window_final_bytes": "int",
    "peak_queued_bytes": "int",
    "throughput_mbit_s": "float",
    "rate_fraction": "float",
    "ramp_90_ms": "float",
    "ramp_90_bytes": "int",
    "steady_bits_s": "float",
    "stream_throughput_mib_s": "json",
    "jain_index": "float",
    "peak_unread_bytes": "int",
    "stream_window_tap_median_bytes": "json",
    "stream_window_tap_max_bytes": "json",
    "interval_mib_s": "json",
}
# Reflected columns left out: the link's delivery trace (a number per 2 ms) stays in the
# records file; its meaning is in ramp_90_ms, steady_bits_s and interval_mib_s.
EXCLUDED: frozenset[str] = frozenset({"frames_delivered_down_bytes"})
# Time series and per-sample lists, only with ``full``: each grows with the run's length
# (a PING RTT per probe, a window sample per update, a latency per call); their meaning is
# in the compact columns (ping_rtt_ms, the latency percentiles, stream_window_tap_*,
# frames_window_growth as window sizes) and the records file keeps them all.
SERIES: frozenset[str] = frozenset(
    {
        "frames_stream_windows",
        "result_ping_rtt_ms",
        "result_latencies_ms",
        "result_window_trace",
        "frames_conn_window_updates_first_t_ns",
        "frames_stream_window_updates_first_t_ns",
        "frames_server_conn_window_updates_first_t_ns",
        "frames_server_stream_window_updates_first_t_ns",
        # GOAWAY and RST_STREAM frames as events (the counts are frames_*_goaway columns).
        "frames_opened_ns",
        "frames_goaways",
        "frames_resets",
    }
)
# Reflected columns that repeat a headline or derived one (the same value), only with
# ``full``; and the delivery trace's axis, which means nothing without the trace.
SAME_AS: dict[str, str] = {
    "link_rtt_ms": "rtt_ms",
    "client_kind": "client",
    "workload_kind": "workload",
    "client_window_bytes": "window_bytes",
    "result_throughput_mib_s": "throughput_mib_s",
    "result_stream_throughput_mib_s": "stream_throughput_mib_s",
}
_TRACE_AXIS = frozenset({"frames_delivered_down_origin_ns", "frames_delivered_down_bucket_ns"})
# What other columns say in other words: ``ok`` is ``status``, ``link_limited`` the rate
# columns, the labels the kind and window columns, the last INITIAL_WINDOW_SIZE announced
# the last size of ``frames_window_growth`` (``window_final_bytes`` is the largest window a
# sender had, since FLAT_SCHEMA 3).
_RESTATED = frozenset(
    {"ok", "link_limited", "client_label", "server_label", "frames_window_final_bytes"}
)
_COMPACT_LEFT_OUT = SERIES | SAME_AS.keys() | _TRACE_AXIS | _RESTATED
# Window growth: the sizes in order (release 0.1's shape); with ``full``, with their times.
_GROWTH = ("frames_window_growth", "frames_server_window_growth")
# A spreadsheet's cell holds at most this many characters (Excel, LibreOffice); a longer
# cell (only a huge per-stream list can be) is left empty and named in ``cells_left_out``.
MAX_CELL_CHARS = 32_767
_DROPPED_LEVEL = "trial"
# FLAT_SCHEMA 1 predates the frame summary's per-endpoint records: the server's columns are
# their paths, and so are the client's SETTINGS, but its credit, PINGs and window growth
# were named without "client" (a column of a field added later is its path)...
_RENAMED = {
    "frames_client_conn_window_updates": "frames_conn_window_updates",
    "frames_client_stream_window_updates": "frames_stream_window_updates",
    "frames_client_pings_sent": "frames_pings_sent",
    "frames_client_window_growth": "frames_window_growth",
}
# ... and its window growth came after the byte counts (CSV columns keep their order).
_PLACED_AFTER = {"frames_window_growth": "frames_bytes_down"}


def flat_row(m: Measurement, full: bool = False) -> Row:
    """The flat row of one measurement (headline columns, then every reflected field);
    without ``full``, time series left out and floats rounded to what was measured."""
    row = _headline(m) | _derived(m)
    for name, value in _walk(Measurement, m, ""):
        if name not in EXCLUDED and (full or name not in _COMPACT_LEFT_OUT):
            row.setdefault(name, value if full or name not in _GROWTH else _sizes(value))
    row = _placed(row)
    return row if full else _capped(_rounded(row))


def _sizes(growth: Any) -> Any:
    return [step["window_bytes"] for step in growth] if isinstance(growth, list) else growth


def _capped(row: Row) -> Row:
    """Cells a spreadsheet cannot hold emptied, and named (with their length)."""
    long = {k: n for k, v in row.items() if (n := _cell_chars(v)) > MAX_CELL_CHARS}
    if not long:
        return row
    out = {k: (None if k in long else v) for k, v in row.items()}
    out["cells_left_out"] = ", ".join(f"{k} ({n} chars; --full)" for k, n in long.items())
    return out


def _cell_chars(value: Any) -> int:
    if isinstance(value, list | dict):
        return len(json.dumps(value, separators=(",", ":")))
    return len(value) if isinstance(value, str) else 0


# --- rounding: what the measurement resolves ----------------------------------------------

# Column name endings -> how a float there is rounded: times to the microsecond (the
# clock is ns, but a process wake-up is us), throughputs to 4 significant figures (the
# machine's noise is percents), fractions to 4 decimals; other floats to 6 figures, which
# keeps every configured value (a rate, a delay) as typed.
_ROUNDING: tuple[tuple[str, tuple[str, int]], ...] = (
    ("_ms", ("decimals", 3)),
    ("_s", ("decimals", 6)),
    ("_mib_s", ("figures", 4)),
    ("_mbit_s", ("figures", 4)),
    ("steady_bits_s", ("figures", 4)),
    ("efficiency", ("decimals", 4)),
    ("_index", ("decimals", 4)),
    ("_fraction", ("decimals", 4)),
    ("_cores", ("decimals", 3)),
)


def _rule(column: str) -> tuple[str, int]:
    # The most specific ending wins: "_mib_s" before "_s".
    matches = [(len(end), rule) for end, rule in _ROUNDING if column.endswith(end)]
    return max(matches)[1] if matches else ("figures", 6)


def _rounded(row: Row) -> Row:
    return {k: _round_value(v, _rule(k)) for k, v in row.items()}


def _round_value(value: Any, rule: tuple[str, int]) -> Any:
    if isinstance(value, float):
        return round_to(value, rule)
    if isinstance(value, list):
        return [_round_value(v, rule) for v in value]
    if isinstance(value, dict):  # objects' own fields name their units ("cpu_fraction")
        return {
            k: _round_value(v, _rule(k) if isinstance(v, float) else rule) for k, v in value.items()
        }
    return value


def round_to(value: float, rule: tuple[str, int]) -> float:
    kind, n = rule
    if not math.isfinite(value) or value == 0:
        return value
    if kind == "decimals":
        return round(value, n)
    return round(value, n - 1 - math.floor(math.log10(abs(value))))


def _placed(row: Row) -> Row:
    """The row with each of ``_PLACED_AFTER``'s columns right after its anchor."""
    for column, anchor in _PLACED_AFTER.items():
        if column in row and anchor in row:
            value = row.pop(column)
            items = list(row.items())
            at = [name for name, _ in items].index(anchor) + 1
            row = dict([*items[:at], (column, value), *items[at:]])
    return row


def flat_rows(measurements: Iterable[Measurement], full: bool = False) -> list[Row]:
    return [flat_row(m, full) for m in measurements]


def _headline(m: Measurement) -> Row:
    result = m.result
    throughput = result.throughput_mib_s if result is not None and m.ok else None
    latency = latency_stats(result.latencies_ms) if result is not None else None
    return {
        "schema": FLAT_SCHEMA,
        "status": m.status,
        "client": m.trial.client.kind,
        "server": _server(m),
        "window_policy": _window_policy(m),
        "workload": m.trial.workload.kind,
        "rtt_ms": m.trial.link.rtt_ms,
        "window_bytes": m.trial.client.window_bytes,
        "conn_window_bytes": m.trial.conn_window_bytes,
        "throughput_mib_s": throughput,
        "theory_mib_s": m.theory_mib_s,
        "efficiency": efficiency(throughput, m.theory_mib_s),
        "ping_rtt_ms": ping_rtt_ms(m),
        "latency_mean_ms": None if latency is None else latency.mean_ms,
        "latency_p50_ms": None if latency is None else latency.p50_ms,
        "latency_p99_ms": None if latency is None else latency.p99_ms,
    }


def _server(m: Measurement) -> str:
    if m.meta.target:
        return f"target {m.meta.target}"
    return m.trial.server.kind


def _window_policy(m: Measurement) -> str:
    """The receiver's: the client's on a download or unary call, the server's on an upload."""
    if m.trial.workload.kind == "upload":
        return f"server {m.trial.server.window_mode}"
    return m.trial.client.window_mode


def _derived(m: Measurement) -> Row:
    link = link_json(m)
    row: Row = {k: link[k] for k in DERIVED if k in link}
    result = m.result if m.ok else None
    sharing = stream_sharing(result) if result is not None else None
    row["stream_throughput_mib_s"] = list(sharing.throughput_mib_s) if sharing else None
    row["jain_index"] = sharing.jain if sharing else None
    row["peak_unread_bytes"] = sharing.peak_unread_total_bytes if sharing else None
    seen = tap_windows(m.frames.stream_windows) if m.frames is not None else None
    row["stream_window_tap_median_bytes"] = list(seen.median_bytes) if seen else None
    row["stream_window_tap_max_bytes"] = list(seen.max_bytes) if seen else None
    intervals = intervals_of(m)
    row["interval_mib_s"] = [i.mib_s for i in intervals] if intervals else None
    return row


# --- reflection over the record types ------------------------------------------------------


def _dataclass_of(tp: Any) -> type[Any] | None:
    """The dataclass a field type names (``X`` or ``X | None``), else None."""
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return tp
    if get_origin(tp) in (typing.Union, types.UnionType):
        found = [a for a in get_args(tp) if a is not type(None)]
        if len(found) == 1:
            return _dataclass_of(found[0])
    return None


def _members(cls: type[Any]) -> list[tuple[str, Any, Any]]:
    """(name, type, getter) of a dataclass's fields, then of its public properties."""
    hints = _hints(cls)
    out: list[tuple[str, Any, Any]] = [
        (f.name, hints[f.name], f.name) for f in dataclasses.fields(cls)
    ]
    for name, attr in vars(cls).items():
        if isinstance(attr, property) and not name.startswith("_") and attr.fget is not None:
            out.append((name, typing.get_type_hints(attr.fget).get("return", Any), attr))
    return out


_HINT_CACHE: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    if cls not in _HINT_CACHE:
        _HINT_CACHE[cls] = typing.get_type_hints(cls)
    return _HINT_CACHE[cls]


def _join(prefix: str, name: str) -> str:
    if not prefix and name == _DROPPED_LEVEL:
        return ""
    joined = f"{prefix}_{name}" if prefix else name
    return _RENAMED.get(joined, joined)


def _walk(cls: type[Any], value: Any, prefix: str) -> Iterable[tuple[str, Any]]:
    """Leaf (column, JSON value) pairs of a dataclass value (None: every leaf None)."""
    for name, tp, getter in _members(cls):
        column = _join(prefix, name)
        if value is None:
            member = None
        elif isinstance(getter, property):
            member = _property_value(getter, value)
        else:
            member = getattr(value, getter)
        nested = _dataclass_of(tp)
        if nested is not None:
            yield from _walk(nested, member, column)
        else:
            yield column, to_json(member)


def _property_value(prop: property, value: Any) -> Any:
    """A derived value; one a record cannot give (a ratio of nothing) is null, not an error."""
    try:
        return prop.fget(value) if prop.fget is not None else None
    except (ArithmeticError, ValueError, AttributeError, TypeError):
        return None


def column_kinds(
    cls: type[Any] = Measurement, prefix: str = "", nullable: bool = False
) -> dict[str, Kind]:
    """Every column's kind, from the type hints: what a CSV cell is read back as.

    Inside an optional record (``result``, ``frames``) every column may be null."""
    kinds: dict[str, Kind] = (
        dict(HEADLINE) | dict(DERIVED) | {"cells_left_out": "str?"} if not prefix else {}
    )
    for name, tp, _ in _members(cls):
        column = _join(prefix, name)
        nested = _dataclass_of(tp)
        if nested is not None:
            inner = column_kinds(nested, column, nullable or _optional(tp))
            kinds.update({k: v for k, v in inner.items() if k not in kinds})
        else:
            kind = _kind_of(tp)
            kinds.setdefault(column, "str?" if nullable and kind == "str" else kind)
    return kinds


def _optional(tp: Any) -> bool:
    return get_origin(tp) in (typing.Union, types.UnionType) and type(None) in get_args(tp)


def _kind_of(tp: Any) -> Kind:
    options = [a for a in get_args(tp) if a is not type(None)]
    if get_origin(tp) in (typing.Union, types.UnionType) and len(options) == 1:
        inner = _kind_of(options[0])
        return "str?" if inner == "str" else inner
    if get_origin(tp) is Literal:
        return "str"
    simple: dict[Any, Kind] = {str: "str", int: "int", float: "float", bool: "bool"}
    return simple.get(tp, "json")


# --- CSV cells ------------------------------------------------------------------------------


def columns_of(rows: Sequence[Row]) -> list[str]:
    """The union of the rows' columns, in first-seen order (old and new records can mix)."""
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


# A spreadsheet runs a cell that starts with one of these as a formula (OWASP's CSV
# injection list); such a text cell gets a leading ``'``, which spreadsheets show as text.
# A text that starts with ``'`` gets one too, so ``parse_csv_row`` can always drop it.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    return json.dumps(value, separators=(",", ":"))


def _text_of_cell(text: str) -> str:
    """A text cell's value: without the ``'`` that ``csv_cell`` put before a formula start."""
    return text[1:] if text.startswith("'") else text


def parse_csv_row(cells: Mapping[str, str]) -> Row:
    """A CSV row (``csv.DictReader``) -> the JSON values of ``flat_row``."""
    kinds = column_kinds()
    return {name: _parse_cell(text, kinds.get(name, "json")) for name, text in cells.items()}


def _parse_cell(text: str, kind: Kind) -> Any:
    if kind == "str":
        return _text_of_cell(text)
    if text == "":  # null (a nullable string's empty value reads back as null too)
        return None
    if kind == "str?":
        return _text_of_cell(text)
    if kind == "bool":
        return text == "true"
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)
    try:
        return json.loads(text)
    except ValueError:
        return _text_of_cell(text)
