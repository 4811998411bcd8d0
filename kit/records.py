"""JSON-lines records: append one result the moment it exists, read back what survived.

Each line is one JSON object: a ``Measurement`` (recognised by its ``trial`` and
``status`` keys) or any other dict the caller wants kept alongside (a run header, a plan).
Appends are flushed and fsynced, so a result already taken is never lost. A power cut can
still leave a torn last line; the reader skips any bad line with a warning that names it,
and the writer starts a fresh line after a torn tail, so one torn write never swallows
the next record. The only exception either side raises is ``RecordsError``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.errors import RecordsError
from kit.measure import Measurement

PathLike = str | os.PathLike[str]

# What Measurement.from_dict or json can throw on a line that is valid JSON but not a record.
_BAD_LINE_ERRORS = (
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    ArithmeticError,
    RecursionError,
)


@dataclass(frozen=True)
class RecordsRead:
    """What a records file held: measurements and other dict lines, in file order.

    ``warnings`` name every skipped line by number (1-based), for the CLI to print.
    """

    measurements: tuple[Measurement, ...]
    others: tuple[dict[str, Any], ...] = ()
    warnings: tuple[str, ...] = ()


# --- writing ------------------------------------------------------------------------------


def _encode(record: Measurement | Mapping[str, Any]) -> bytes:
    data = record.to_dict() if isinstance(record, Measurement) else dict(record)
    try:
        text = json.dumps(data, separators=(",", ":"))
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


def append_record(path: PathLike, record: Measurement | Mapping[str, Any]) -> None:
    """Append one record as one line; flushed and fsynced before returning.

    Creates parent directories. If the file ends in a torn line (an earlier writer died
    mid-write), a newline is written first so this record stays readable.
    """
    target = Path(path)
    line = _encode(record)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        created = not target.exists()
        if _ends_torn(target):
            line = b"\n" + line
        # One write of the whole line in append mode, so a line is never split by our own
        # buffering; fsync because the result cost seconds to take and cannot be retaken.
        with target.open("ab") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        if created:
            _fsync_dir(target.parent)
    except OSError as exc:
        reason = exc.strerror or exc
        raise RecordsError(f"cannot append to records file {target}: {reason}") from None


# --- reading ------------------------------------------------------------------------------


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise RecordsError(f"records file not found: {path}") from None
    except IsADirectoryError:
        raise RecordsError(f"records path is a directory, not a file: {path}") from None
    except OSError as exc:
        raise RecordsError(f"cannot read records file {path}: {exc.strerror or exc}") from None


def _is_measurement(data: dict[str, Any]) -> bool:
    return "trial" in data and "status" in data


def _check_measurement(data: dict[str, Any]) -> Measurement:
    """Build a Measurement, rejecting shapes that would only fail later in a report."""
    if not isinstance(data["trial"], dict) or not isinstance(data["status"], str):
        raise TypeError("trial must be an object and status a string")
    if data.get("result") is not None and not isinstance(data["result"], dict):
        raise TypeError("result must be an object or null")
    theory = data.get("theory_mib_s")
    if theory is not None and (isinstance(theory, bool) or not isinstance(theory, (int, float))):
        raise TypeError("theory_mib_s must be a number or null")
    measurement = Measurement.from_dict(data)
    throughput = measurement.throughput_mib_s  # reports read this; a bad result fails here
    if throughput is not None and not isinstance(throughput, (int, float)):
        raise TypeError("result does not give a numeric throughput")
    return measurement


def _parse_line(raw: bytes) -> Measurement | dict[str, Any]:
    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict):
        raise TypeError(f"a record is a JSON object, not {type(data).__name__}")
    return _check_measurement(data) if _is_measurement(data) else data


def _describe_bad_line(number: int, exc: BaseException, is_last_unterminated: bool) -> str:
    if is_last_unterminated:
        return f"line {number}: torn last line (no newline; an interrupted write?), skipped"
    if isinstance(exc, UnicodeDecodeError):
        return f"line {number}: not UTF-8 text, skipped"
    if isinstance(exc, json.JSONDecodeError):
        return f"line {number}: not valid JSON ({exc.msg}), skipped"
    return f"line {number}: not a valid record ({exc}), skipped"


def read_records(path: PathLike) -> RecordsRead:
    """Read every readable record; a corrupt or torn line is skipped with a warning.

    A missing or unreadable file raises ``RecordsError`` (one line); nothing else raises.
    """
    target = Path(path)
    lines = _read_bytes(target).split(b"\n")
    measurements: list[Measurement] = []
    others: list[dict[str, Any]] = []
    warnings: list[str] = []
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            parsed = _parse_line(raw)
        except _BAD_LINE_ERRORS as exc:
            torn = index == len(lines) - 1  # the last piece after split has no newline
            warnings.append(_describe_bad_line(index + 1, exc, torn))
            continue
        if isinstance(parsed, Measurement):
            measurements.append(parsed)
        else:
            others.append(parsed)
    return RecordsRead(tuple(measurements), tuple(others), tuple(warnings))
