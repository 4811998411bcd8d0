"""Human units at the edge: "20ms", "4MiB" -> plain numbers, and sizes back to text.

The only place units are parsed, and the only byte formatter: every layer imports its
constants and functions from here.
"""

from __future__ import annotations

import re

from kit.errors import UsageError

KIB = 1024
MIB = 1024 * 1024
GIB = 1024 * 1024 * 1024
HTTP2_MAX_WINDOW_BYTES = 2**31 - 1

_NUMBER = r"(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_QUANTITY_RE = re.compile(r"^\s*(?P<all>" + _NUMBER + r")\s*(?P<unit>[a-zA-Zµ]*)\s*$")

_DURATION_UNITS_MS = {
    "": None,  # a bare number is only allowed when it is 0
    "ns": 1e-6,
    "us": 1e-3,
    "µs": 1e-3,
    "ms": 1.0,
    "s": 1000.0,
    "m": 60_000.0,
    "min": 60_000.0,
}

_SIZE_UNITS_BYTES = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "kib": KIB,
    "mib": MIB,
    "gib": GIB,
    "k": KIB,
    "m": MIB,
    "g": GIB,
}
_BINARY_UNITS = (("GiB", GIB), ("MiB", MIB), ("KiB", KIB))


def parse_duration_ms(text: str, *, option: str = "duration") -> float:
    """Parse "20ms", "1.5ms", "0.02s", "0" into milliseconds (a float >= 0)."""
    match = _QUANTITY_RE.match(str(text))
    if match is None:
        raise UsageError(
            f"{option}: cannot read {text!r} as a duration (examples: 20ms, 1.5ms, 0.02s, 0)"
        )
    value = float(match.group("all"))
    unit = match.group("unit")
    if unit not in _DURATION_UNITS_MS:
        raise UsageError(f"{option}: unknown time unit {unit!r} in {text!r} (use ns, us, ms, s)")
    factor = _DURATION_UNITS_MS[unit]
    if factor is None:
        if value != 0:
            raise UsageError(f"{option}: {text!r} needs a unit, e.g. {text}ms")
        return 0.0
    ms = value * factor
    if ms != ms or ms == float("inf"):
        raise UsageError(f"{option}: {text!r} is not a finite duration")
    return ms


def parse_size_bytes(text: str, *, option: str = "size") -> int:
    """Parse "64KiB", "4MiB", "65536", "1KB" (decimal) into a whole number of bytes."""
    match = _QUANTITY_RE.match(str(text))
    if match is None:
        raise UsageError(
            f"{option}: cannot read {text!r} as a size (examples: 64KiB, 4MiB, 65536, 1KB)"
        )
    unit = match.group("unit").lower()
    if unit not in _SIZE_UNITS_BYTES:
        raise UsageError(
            f"{option}: unknown size unit {match.group('unit')!r} in {text!r} (use B, KiB, MiB, GiB, KB, MB, GB)"
        )
    value = float(match.group("all")) * _SIZE_UNITS_BYTES[unit]
    if value != value or value == float("inf") or value > 2**62:
        raise UsageError(f"{option}: {text!r} is too large")
    if value != int(value):
        raise UsageError(f"{option}: {text!r} is not a whole number of bytes")
    return int(value)


def parse_window_bytes(text: str, *, option: str = "--window") -> int:
    """A flow-control window: 1 .. 2^31-1 bytes (RFC 9113 section 6.9.1)."""
    window = parse_size_bytes(text, option=option)
    check_window_bytes(window, option=option)
    return window


def check_window_bytes(window_bytes: int, *, option: str = "window") -> None:
    if not 1 <= window_bytes <= HTTP2_MAX_WINDOW_BYTES:
        raise UsageError(
            f"{option}: {window_bytes} bytes is outside HTTP/2's window range 1..{HTTP2_MAX_WINDOW_BYTES} (2^31-1)"
        )


def format_bytes(n_bytes: float, digits: int = 2) -> str:
    """Compact binary units for tables: 64 KiB, 1.5 MiB, 1000 B.

    ``digits`` decimals at most, trailing zeros dropped (``digits=0``: 128 KiB for 131070).
    """
    for unit, size in _BINARY_UNITS:
        if n_bytes >= size:
            text = f"{n_bytes / size:.{digits}f}"
            if "." in text:
                text = text.rstrip("0").rstrip(".")
            return f"{text} {unit}"
    return f"{n_bytes:.0f} B"


def size_spec(n_bytes: int) -> str:
    """4194304 -> "4MiB": the exact size as text ``parse_size_bytes`` reads back."""
    for unit, size in (("MiB", MIB), ("KiB", KIB)):
        if n_bytes % size == 0 and n_bytes >= size:
            return f"{n_bytes // size}{unit}"
    return str(n_bytes)


def split_host_port(text: str, option: str) -> tuple[str, int]:
    """ "127.0.0.1:0" -> ("127.0.0.1", 0); "[::1]:80" -> ("::1", 80)."""
    host, sep, port = str(text).rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"{option}: {text!r} is not HOST:PORT (e.g. 127.0.0.1:0)")
    return host.strip("[]"), int(port)
