"""Pure: one measurement -> one flat row, the schema of ``--json``, ``--csv`` and notebooks.

The row is derived from the typed records by reflection, so a field added to a record (a
link's rate, a server window, per-stream results) becomes a column without an edit here:

- a few **headline** columns first (``schema``, ``status``, ``rtt_ms``, ``window_bytes``,
  ``throughput_mib_s``, ``efficiency``, ``ping_rtt_ms``, latency percentiles): the numbers
  people plot;
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
from kit.analysis.link import link_json
from kit.analysis.sharing import stream_sharing
from kit.results.codec import to_json
from kit.results.records import Measurement

FLAT_SCHEMA = 1
Kind = Literal["str", "str?", "int", "float", "bool", "json"]
Row = dict[str, Any]

# Headline columns and their kinds: computed, not reflected (each also named in the README).
HEADLINE: dict[str, Kind] = {
    "schema": "int",
    "status": "str",
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
}
# Reflected columns left out: the link's delivery trace (a number per millisecond) stays in
# the records file; its meaning is in ramp_90_ms and steady_bits_s.
EXCLUDED: frozenset[str] = frozenset({"frames_delivered_down_bytes"})
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


def flat_row(m: Measurement) -> Row:
    """The flat row of one measurement (headline columns, then every reflected field)."""
    row = _headline(m) | _derived(m)
    for name, value in _walk(Measurement, m, ""):
        if name not in EXCLUDED:
            row.setdefault(name, value)
    return _placed(row)


def _placed(row: Row) -> Row:
    """The row with each of ``_PLACED_AFTER``'s columns right after its anchor."""
    for column, anchor in _PLACED_AFTER.items():
        if column in row and anchor in row:
            value = row.pop(column)
            items = list(row.items())
            at = [name for name, _ in items].index(anchor) + 1
            row = dict([*items[:at], (column, value), *items[at:]])
    return row


def flat_rows(measurements: Iterable[Measurement]) -> list[Row]:
    return [flat_row(m) for m in measurements]


def _headline(m: Measurement) -> Row:
    result = m.result
    throughput = result.throughput_mib_s if result is not None and m.ok else None
    latency = latency_stats(result.latencies_ms) if result is not None else None
    return {
        "schema": FLAT_SCHEMA,
        "status": m.status,
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


def _derived(m: Measurement) -> Row:
    link = link_json(m)
    row: Row = {k: link[k] for k in DERIVED if k in link}
    result = m.result if m.ok else None
    sharing = stream_sharing(result) if result is not None else None
    row["stream_throughput_mib_s"] = list(sharing.throughput_mib_s) if sharing else None
    row["jain_index"] = sharing.jain if sharing else None
    row["peak_unread_bytes"] = sharing.peak_unread_total_bytes if sharing else None
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
    kinds: dict[str, Kind] = dict(HEADLINE) | dict(DERIVED) if not prefix else {}
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
