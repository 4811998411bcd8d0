"""The proxy's tap file: JSON lines, one ``TapConnection`` per relayed connection (written
when it closes, or at proxy shutdown if still open), on a link with a rate or jitter one
``LinkConnection`` per connection (what its bottleneck did, written just before it) and
one ``ProxyTotals`` at shutdown; a ``LinkChange`` per change through ``kit proxy --control``;
on the packet link, the forwarder's ``PacketTotals`` instead of the ``ProxyTotals``.

``kit.delayline.relay`` writes them (``encode_tap_line``), ``kit.topology`` reads them as
the file grows (``parse_tap_lines``), ``kit.capture.summary`` summarizes them per trial. A
corrupt line (torn by a crash, or from another release) is skipped and counted, never
fatal: the lines after it are kept.

The lines carry the envelope of ``kit.results.codec`` with the tap file's own schema
version, ``TAP_SCHEMA``: bumped when a tap line changes, not when a records-file line does
(a proxy and the topology reading its tap are always of one release, but a tap file kept
from ``kit proxy`` is read later).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

from kit.errors import RecordsError, UsageError
from kit.results.codec import decode_line, encode_line
from kit.results.records import LinkChange, LinkConnection, PacketTotals, ProxyTotals, TapConnection

TAP_SCHEMA = 2
TapLine = TapConnection | ProxyTotals | LinkConnection | PacketTotals | LinkChange
TAP_KINDS: dict[str, type[Any]] = {
    "conn": TapConnection,
    "proxy": ProxyTotals,
    "link": LinkConnection,
    "packet": PacketTotals,
    "change": LinkChange,
}
_KIND_OF = {cls: kind for kind, cls in TAP_KINDS.items()}


def encode_tap_line(line: TapLine) -> dict[str, Any]:
    """One line of the tap file, in the kit's JSON-lines envelope."""
    return encode_line(_KIND_OF[type(line)], line, TAP_SCHEMA)


def decode_tap_line(data: Any) -> TapLine:
    """One tap-file line -> its typed form; ``UsageError`` if it is not one."""
    return cast(TapLine, decode_line(data, TAP_KINDS, "tap line", TAP_SCHEMA))


def parse_tap_lines(text: str) -> tuple[list[TapLine], int]:
    """The typed lines of tap-file text and how many corrupt lines were skipped.

    Pass whole lines only (a reader following a growing file stops at its last newline): a
    line cut short would be counted as corrupt.
    """
    lines: list[TapLine] = []
    skipped = 0
    for raw in text.split("\n"):
        if not raw.strip():
            continue
        try:
            lines.append(decode_tap_line(json.loads(raw)))
        # Not JSON, or not a tap line (TypeError: e.g. an unhashable "kind" in the codec):
        # one corrupt line is skipped and counted, and never costs the lines after it.
        except (ValueError, TypeError, RecursionError, UsageError):
            skipped += 1
    return lines, skipped


def read_tap(path: str | Path) -> tuple[list[TapLine], int]:
    """``parse_tap_lines`` of a whole tap file; ``RecordsError`` if it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise RecordsError(f"tap file {path}: {exc.strerror or exc}") from exc
    return parse_tap_lines(text)


def tap_connections(lines: Iterable[TapLine]) -> list[TapConnection]:
    """The connection lines, earliest first (by ``(opened_ns, conn)``)."""
    conns = (line for line in lines if isinstance(line, TapConnection))
    return sorted(conns, key=lambda c: (c.opened_ns, c.conn))


def link_connections(lines: Iterable[TapLine]) -> dict[int, LinkConnection]:
    """The link lines by connection id."""
    return {line.conn: line for line in lines if isinstance(line, LinkConnection)}
