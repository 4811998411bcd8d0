"""JSON-lines records files: append one record the moment it exists, read back what survived.

Each line is one typed record (``Record``: a measurement, a tables run's plan, a session's
end) in the envelope of ``kit.results.codec``, with a ``schema`` version (``RECORDS_SCHEMA``).
Older lines are converted on read, one schema at a time, so results from any release stay
readable (and a file that a resumed run appended to can mix schemas): lines without a
``schema`` key are release 0.1's (schema 1); schema 2 held each endpoint's frames as
``client_*`` / ``server_*`` twin fields of the frame summary, schema 3 one ``SideFrames``
record per endpoint, schema 4 the same records with the frame summary's per-stream window
samples stored as columns (``_COLUMNS``: one list per field, times as steps), ~60% smaller,
the series that made an h2 run's line ~100 KB. Appends are flushed and fsynced, so a result already taken is never
lost. A power cut can still leave a torn last line; the reader skips any bad line with a
warning that names it, and the writer starts a fresh line after a torn tail, so one torn
write never swallows the next record. The only exception either side raises is
``RecordsError``.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol, cast

import orjson

from kit.errors import RecordsError, RecordsPathError, UsageError
from kit.plan.tables import TablesSettings, table_name
from kit.plan.units import format_bytes
from kit.results.codec import decode_line, encode_line, from_json
from kit.results.records import Measurement, SessionRecord

PathLike = str | os.PathLike[str]
RECORDS_SCHEMA = 4
# What a records-file line holds: a trial's record, a tables run's plan, or a session's end.
Record = Measurement | TablesSettings | SessionRecord
KINDS: dict[str, type[Any]] = {
    "measurement": Measurement,
    "tables-plan": TablesSettings,
    "tables-session": SessionRecord,
}
_KIND_OF = {cls: kind for kind, cls in KINDS.items()}

# Campaigns renamed since records were written, old name -> today's (after 0.2.0 the uploads,
# links and sharing campaigns took their tables' numbers, 5, 6 and 7). Converted on read, so
# records of any release render and ``--resume`` as they did.
RENAMED_CAMPAIGNS = {
    "uploads-rtt20ms": "table5-rtt20ms",
    "uploads-rtt103ms": "table5-rtt103ms",
    "table5-links": "table6-links",
    "table6-sharing": "table7-sharing",
}

# What json or the codec can throw on a line that is valid JSON but not a record.
_BAD_LINE_ERRORS = (UsageError, ValueError, TypeError, KeyError, RecursionError)


@dataclass(frozen=True)
class RecordsRead:
    """What a records file held, by kind, in file order.

    ``warnings`` name every skipped line by number (1-based), for the CLI to print.
    """

    measurements: tuple[Measurement, ...]
    tables_plans: tuple[TablesSettings, ...] = ()
    sessions: tuple[SessionRecord, ...] = ()
    warnings: tuple[str, ...] = ()


# --- the lines, and older ones --------------------------------------------------------------


def encode_record(record: Record) -> dict[str, Any]:
    """The JSON object of one records-file line: the envelope, then the record's fields."""
    line = encode_line(_KIND_OF[type(record)], record, RECORDS_SCHEMA)
    frames = line.get("frames") if isinstance(record, Measurement) else None
    if isinstance(frames, dict):
        line["frames"] = frames | {"stream_windows": _columns(frames["stream_windows"])}
    return line


def decode_record(data: Any) -> Record:
    """One records-file line (any schema) -> its typed record; ``UsageError`` if it is none."""
    data = _renamed_campaign(data)
    if isinstance(data, dict) and "schema" not in data:
        return _decode_legacy(dict(data))
    if isinstance(data, dict) and data.get("schema") == 2:
        data = _from_schema_2(dict(data))
    if isinstance(data, dict) and data.get("schema") == 3:
        data = data | {"schema": RECORDS_SCHEMA}  # the typed (row) form, as today's
    elif isinstance(data, dict) and data.get("schema") == RECORDS_SCHEMA:
        data = _measurement_rows(data)
    return cast(Record, decode_line(data, KINDS, "record", RECORDS_SCHEMA))


# --- schema 4: a long series of small records as columns ------------------------------------

# The frame summary's per-stream window samples (a few thousand on a long multi-stream run):
# one list per field, ``t_ns`` as steps from the sample before (the first: its time).
_COLUMNS = ("t_ns", "stream_id", "window_bytes")


def _columns(points: list[dict[str, Any]]) -> dict[str, list[int]]:
    times = [p["t_ns"] for p in points]
    steps = [t - before for before, t in zip([0, *times], times, strict=False)]
    return {"t_ns": steps} | {name: [p[name] for p in points] for name in _COLUMNS[1:]}


def _measurement_rows(line: dict[str, Any]) -> dict[str, Any]:
    """A schema-4 line with its columns back as the records the types name."""
    frames = line.get("frames") if line.get("kind") == "measurement" else None
    if not isinstance(frames, dict) or "stream_windows" not in frames:
        return line
    return line | {"frames": frames | {"stream_windows": _rows(frames["stream_windows"])}}


def _rows(columns: Any) -> list[dict[str, Any]]:
    where = "measurement.frames.stream_windows"
    if not isinstance(columns, dict) or sorted(columns) != sorted(_COLUMNS):
        raise UsageError(f"{where}: an object of the lists {', '.join(_COLUMNS)}")
    lists = [columns[name] for name in _COLUMNS]
    if not all(isinstance(v, list) for v in lists) or len({len(v) for v in lists}) != 1:
        raise UsageError(f"{where}: lists of one length")
    if not all(isinstance(t, int) and not isinstance(t, bool) for t in lists[0]):
        raise UsageError(f"{where}.t_ns: whole numbers")
    times = list(itertools.accumulate(lists[0]))
    return [dict(zip(_COLUMNS, row, strict=True)) for row in zip(times, *lists[1:], strict=True)]


# --- schema 2 -> 3: one record per endpoint in the frame summary ----------------------------

# Schema 2's twin fields of the frame summary -> (endpoint, field of its SideFrames).
_SIDE_FIELDS_OF_SCHEMA_2 = {
    "client_settings": ("client", "settings"),
    "client_settings_changes": ("client", "settings_changes"),
    "conn_window_updates": ("client", "conn_window_updates"),
    "stream_window_updates": ("client", "stream_window_updates"),
    "pings_sent": ("client", "pings_sent"),
    "window_growth": ("client", "window_growth"),
    "server_settings": ("server", "settings"),
    "server_settings_changes": ("server", "settings_changes"),
    "server_conn_window_updates": ("server", "conn_window_updates"),
    "server_stream_window_updates": ("server", "stream_window_updates"),
    "server_pings_sent": ("server", "pings_sent"),
    "server_window_growth": ("server", "window_growth"),
}


def _from_schema_2(line: dict[str, Any]) -> dict[str, Any]:
    """A schema-2 line as schema 3 says it: only a measurement's frames changed; the plan
    and session lines are the same, as is a line of no known kind (refused when decoded)."""
    if line.get("kind") == "tables-plan":
        line = _tables_plan_body(line)
    if line.get("kind") == "measurement":
        line = _measurement_from_schema_2(line)
    return line | {"schema": 3}


def _measurement_from_schema_2(body: dict[str, Any]) -> dict[str, Any]:
    frames = body.get("frames")
    return body | {"frames": _frames_from_schema_2(frames)} if isinstance(frames, dict) else body


def _frames_from_schema_2(frames: dict[str, Any]) -> dict[str, Any]:
    # Schema 2 had no "client"/"server" fields: one there is unknown, as it was then (merged
    # with the twins, it would be read as today's field).
    clash = sorted({"client", "server"} & set(frames))
    if clash:
        raise UsageError(f"measurement.frames: unknown field(s) {', '.join(clash)}")
    out: dict[str, Any] = {}
    sides: dict[str, dict[str, Any]] = {"client": {}, "server": {}}
    for name, value in frames.items():
        if name in _SIDE_FIELDS_OF_SCHEMA_2:
            side, field = _SIDE_FIELDS_OF_SCHEMA_2[name]
            sides[side][field] = value
        else:
            out[name] = value
    return out | sides


# --- schema 1 (release 0.1) -> 2 -------------------------------------------------------------


def _renamed_campaign(data: Any) -> Any:
    """A line of a renamed campaign under today's name (every schema tags it alike)."""
    tags = data.get("tags") if isinstance(data, dict) else None
    if not isinstance(tags, dict) or not isinstance(tags.get("campaign"), str):
        return data
    renamed = RENAMED_CAMPAIGNS.get(tags["campaign"])
    return data if renamed is None else {**data, "tags": {**tags, "campaign": renamed}}


def _tables_plan_body(body: dict[str, Any]) -> dict[str, Any]:
    """Releases up to 0.2 stored ``only`` as table numbers; today it holds table names."""
    only = body.get("only")
    if isinstance(only, list):
        body["only"] = [table_name(t) if isinstance(t, int) else t for t in only]
    return body


def _decode_legacy(body: dict[str, Any]) -> Record:
    """Release 0.1 wrote measurements bare (recognised by trial + status) and other lines
    with a ``kind``; the plan and session lines had today's fields already."""
    if "trial" in body and "status" in body:
        schema_3 = _measurement_from_schema_2(_legacy_measurement(body))
        return from_json(Measurement, schema_3, "measurement")
    kind = body.pop("kind", None)
    if kind == "tables-plan":
        body = _tables_plan_body(body)
    if isinstance(kind, str) and kind in ("tables-plan", "tables-session"):
        return cast(Record, from_json(KINDS[kind], body, kind))
    raise UsageError(f"unknown record kind {kind!r}")


def _legacy_measurement(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 -> 2: derived throughput dropped from the result, the frame summary's
    nested dicts renamed to their typed fields, the machine load moved from tags to meta."""
    out = dict(body)
    if isinstance(out.get("result"), dict):
        out["result"] = {k: v for k, v in out["result"].items() if k != "throughput_mib_s"}
    frames = out.get("frames")
    out["frames"] = _legacy_frames(frames) if isinstance(frames, dict) and frames else None
    meta = dict(out.get("meta") or {})
    tags = dict(out.get("tags") or {})
    machine = tags.pop("machine", None)
    if machine is not None and "machine" not in meta:
        meta["machine"] = machine
    out["meta"], out["tags"] = meta, tags
    return out


def _legacy_frames(frames: dict[str, Any]) -> dict[str, Any]:
    out = dict(frames)
    pings = out.pop("ping_rtt_ms", None) or {}
    out["ping_rtt_ms"] = {
        side: {
            "count": (pings.get(side) or {}).get("count", 0),
            "median_ms": (pings.get(side) or {}).get("median"),
            "p90_ms": (pings.get(side) or {}).get("p90"),
        }
        for side in ("proxy", "client")
    }
    if "window_growth" in out:
        out["window_growth"] = [{"t_ns": None, "window_bytes": w} for w in out["window_growth"]]
    return out


# --- writing ------------------------------------------------------------------------------


def _encode(record: Record) -> bytes:
    data = encode_record(record)
    try:
        text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise RecordsError(f"record is not JSON-serialisable: {exc}") from None
    # json.dumps escapes newlines inside strings, so one record is always one line.
    return text.encode("utf-8") + b"\n"


def _ends_torn(path: Path) -> bool:
    """True when the file exists, is non-empty and does not end with a newline."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"
    except FileNotFoundError:
        return False


def _fsync_dir(directory: Path) -> None:
    """Make a newly created file's directory entry durable too (POSIX; best effort)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def check_records_path(path: PathLike) -> None:
    """Refuse, before anything is measured, a records path no record could be appended to:
    a directory, a file or directory that is not writable (a read-only mount included).
    A full disk cannot be seen in advance: ``append_record`` then leaves no torn line."""
    target = Path(path)
    if target.is_dir():
        raise RecordsPathError(f"records path is a directory, not a file: {target}")
    if target.exists():
        if not os.access(target, os.W_OK):
            raise RecordsPathError(f"records file {target} is not writable")
        return
    parent = next((p for p in target.absolute().parents if p.exists()), Path("/"))
    if not parent.is_dir():
        raise RecordsPathError(f"records file {target}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise RecordsPathError(f"records file {target}: cannot create it in {parent}")


def append_record(path: PathLike, record: Record) -> None:
    """Append one record as one line; flushed and fsynced before returning.

    Creates parent directories. If the file ends in a torn line (an earlier writer died
    mid-write), a newline is written first so this record stays readable. A write that
    fails part-way (a full disk) is cut back off, so it never leaves a torn line itself.
    """
    target = Path(path)
    line = _encode(record)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        created = not target.exists()
        if _ends_torn(target):
            line = b"\n" + line
        # The whole line in append mode, unbuffered, so our own buffering never splits it;
        # fsync because the result cost seconds to take and cannot be retaken.
        with target.open("ab", buffering=0) as f:
            _append_whole(f.fileno(), line)
        if created:
            _fsync_dir(target.parent)
    except OSError as exc:
        reason = exc.strerror or exc
        raise RecordsError(f"cannot append to records file {target}: {reason}") from None


def _append_whole(fd: int, line: bytes) -> None:
    regular = stat.S_ISREG(os.fstat(fd).st_mode)  # /dev/null cannot be fsynced or cut
    start = os.fstat(fd).st_size if regular else 0
    try:
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view) :]
        if regular:
            os.fsync(fd)
    except OSError:
        if regular:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
        raise


# --- reading ------------------------------------------------------------------------------


# The longest line read: the kit's longest records are ~130 KB (a minute's delivery trace,
# per-stream lists); a longer line is skipped with a warning, so memory stays bounded
# whatever a file holds (``/dev/zero`` is refused before: it is no regular file).
MAX_LINE_BYTES = 16 * 2**20
_CHUNK_BYTES = 2**20


def _open_records(path: Path) -> BinaryIO:
    try:
        f = path.open("rb")
    except FileNotFoundError:
        raise RecordsPathError(f"records file not found: {path}") from None
    except IsADirectoryError:
        raise RecordsPathError(f"records path is a directory, not a file: {path}") from None
    except OSError as exc:
        raise RecordsError(f"cannot read records file {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
        f.close()
        raise RecordsPathError(f"{path} is not a regular file (a records file is JSON lines)")
    return f


def _lines(f: BinaryIO) -> Iterator[tuple[bytes | None, bool]]:
    """Each line (without its newline) and whether it ended with one; None for a line
    longer than ``MAX_LINE_BYTES``, which is read past in chunks, never held whole."""
    while True:
        raw = f.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if raw.endswith(b"\n"):
            yield raw[:-1], True
        elif len(raw) <= MAX_LINE_BYTES:
            yield raw, False  # the last line, torn
        else:
            ended = False
            while not ended:
                chunk = f.readline(_CHUNK_BYTES)
                ended = not chunk or chunk.endswith(b"\n")
            yield None, True


def decode_raw(raw: bytes) -> Record:
    """One records-file line, whole (``iter_records(keep_raw=...)`` kept it)."""
    return decode_record(_loads(raw))


def _is_lone_run(data: Any) -> bool:
    """A measurement line of no campaign (a ``kit run``)."""
    if not isinstance(data, dict) or data.get("kind") != "measurement":
        return False
    tags = data.get("tags")
    return not (isinstance(tags, dict) and tags.get("campaign"))


def _loads(raw: bytes) -> Any:
    """A line's JSON: orjson's parser (several times json's speed), or json's where orjson
    refuses what json takes (NaN, a number beyond 64 bits), so that every line reads as
    before, refused with the same words."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw.decode("utf-8"))


# What a lone run's line in a summary leaves undecoded: the frame summary, the TCP samples,
# the CPU figures and the result's lists (a run's summary line shows none of them, and
# decoding them was most of a summary's time).
_SUMMARY_LEFT_OUT = ("frames", "tcp", "cpu")


def _summary_form(data: dict[str, Any]) -> dict[str, Any]:
    """A lone run's measurement line without what a summary line does not show."""
    light = {k: v for k, v in data.items() if k not in _SUMMARY_LEFT_OUT}
    result = light.get("result")
    if isinstance(result, dict):
        light["result"] = {k: v for k, v in result.items() if not isinstance(v, list)}
    return light


def _describe_bad_line(number: int, exc: BaseException, is_last_unterminated: bool) -> str:
    if is_last_unterminated:
        return f"line {number}: torn last line (no newline; an interrupted write?), skipped"
    if isinstance(exc, UnicodeDecodeError):
        return f"line {number}: not UTF-8 text, skipped"
    if isinstance(exc, json.JSONDecodeError):
        return f"line {number}: not valid JSON ({exc.msg}), skipped"
    return f"line {number}: not a valid record ({exc}), skipped"


class WarningSink(Protocol):
    def append(self, warning: str, /) -> None: ...


@dataclass
class SkippedLines:
    """A read's skipped-line warnings: the first ``keep`` kept, the rest only counted, so a
    file of millions of lines that are no records costs a counter, not a list."""

    keep: int = 5
    first: list[str] = field(default_factory=list)
    count: int = 0

    def append(self, warning: str, /) -> None:
        self.count += 1
        if len(self.first) < self.keep:
            self.first.append(warning)


def iter_records(
    path: PathLike,
    warnings: WarningSink,
    summaries: bool = False,
    whole_from: int = 0,
    keep_raw: collections.deque[bytes] | None = None,
) -> Iterator[Record]:
    """Each readable record of a records file, read line by line (memory bounded by the
    longest line); a corrupt, torn or too long line is skipped with a warning appended to
    ``warnings``. A missing or unreadable file, or one that is not a regular file, raises
    ``RecordsError`` (one line) at the first record asked for. ``summaries``: a lone run's
    measurement without its frames, TCP and CPU figures and its result's lists (what a
    summary line shows, at a fraction of the cost), but from its ``whole_from``-th lone run
    on (1-based; 0: none) whole; campaigns' and other lines always whole. ``keep_raw``: each
    lone run's line is appended to it (a bounded deque keeps the last ones, for
    ``decode_raw``)."""
    lone = 0
    with _open_records(Path(path)) as f:
        for index, (raw, ended) in enumerate(_lines(f)):
            if raw is None:
                warnings.append(
                    f"line {index + 1}: longer than {format_bytes(MAX_LINE_BYTES)}, skipped"
                )
                continue
            if not raw.strip():
                continue
            try:
                data = _loads(raw)
                if summaries and _is_lone_run(data):
                    lone += 1
                    if not whole_from or lone < whole_from:
                        data = _summary_form(data)
                record = decode_record(data)
                lone_run = isinstance(record, Measurement) and not record.tags.campaign
                if keep_raw is not None and lone_run:
                    keep_raw.append(raw)
                yield record
            except _BAD_LINE_ERRORS as exc:
                warnings.append(_describe_bad_line(index + 1, exc, not ended))


def read_records(path: PathLike) -> RecordsRead:
    """Every readable record of a records file, by kind (see ``iter_records``)."""
    warnings: list[str] = []
    found = list(iter_records(path, warnings))
    return RecordsRead(
        measurements=tuple(r for r in found if isinstance(r, Measurement)),
        tables_plans=tuple(r for r in found if isinstance(r, TablesSettings)),
        sessions=tuple(r for r in found if isinstance(r, SessionRecord)),
        warnings=tuple(warnings),
    )
