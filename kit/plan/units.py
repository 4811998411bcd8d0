"""Human units at the edge: "20ms", "4MiB" -> plain numbers, and numbers back to text.

The only place units are parsed, the only byte formatter (``format_bytes``: plan labels,
messages and, through ``kit.report.format.fmt_size``, the reports) and the three-figure
rule numbers are shown with (``sig3``): every layer imports its constants and functions
from here.
"""

from __future__ import annotations

import ipaddress
import math
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
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "kib": KIB,
    "mib": MIB,
    "gib": GIB,
}
# "4M" is 4 MiB to grpc-go and 4 MB to others: refused with both spellings, never guessed.
_AMBIGUOUS_SIZE_UNITS = {"k": "Ki", "m": "Mi", "g": "Gi"}
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
    if 0 < ms < 1e-6:  # it would silently become 0 ns
        raise UsageError(f"{option}: {text!r} is below one nanosecond; use 0 or at least 1ns")
    return ms


def parse_size_bytes(text: str, *, option: str = "size") -> int:
    """Parse "64KiB", "4MiB", "65536B", "1KB" (decimal) into a whole number of bytes.

    A unit is required, as for durations and rates (a bare "4" was once a 4-byte window);
    only 0 may go without one. "4M" / "4k" are refused: binary or decimal is the user's call.
    """
    match = _QUANTITY_RE.match(str(text))
    if match is None:
        raise UsageError(
            f"{option}: cannot read {text!r} as a size (examples: 64KiB, 4MiB, 1MB, 1500B)"
        )
    typed, unit = match.group("unit"), match.group("unit").lower()
    value = float(match.group("all"))
    if not unit:
        if value == 0:
            return 0
        raise UsageError(
            f"{option} {text.strip()} needs a unit, e.g. {_example(text.strip(), value)}"
        )
    if unit in _AMBIGUOUS_SIZE_UNITS:
        number = match.group("all")
        prefix = _AMBIGUOUS_SIZE_UNITS[unit]
        raise UsageError(
            f"{option} {text.strip()}: {typed!r} is ambiguous; write {number}{prefix}B "
            f"(binary) or {number}{prefix[0]}B (decimal)"
        )
    if unit not in _SIZE_UNITS_BYTES:
        raise UsageError(
            f"{option}: unknown size unit {typed!r} in {text!r} (use B, KiB, MiB, GiB, KB, MB, GB)"
        )
    value *= _SIZE_UNITS_BYTES[unit]
    if value != value or value == float("inf") or value > 2**62:
        raise UsageError(f"{option}: {text!r} is too large")
    if value != int(value):
        raise UsageError(f"{option}: {text!r} is not a whole number of bytes")
    return int(value)


def _example(number: str, value: float) -> str:
    """The unit a bare number most likely meant: 4 -> 4MiB, 65536 -> 64KiB, 1500 -> 1500B."""
    if value < KIB:
        return f"{number}MiB"
    return size_spec(int(value)) if value.is_integer() else f"{number}B"


# The window range (RFC 9113 section 6.9.1), as the parser here and the configs' own checks
# (kit.plan.trial) both test and word it.
WINDOW_RANGE = f"HTTP/2's window range 1..{HTTP2_MAX_WINDOW_BYTES} (2^31-1)"


def window_in_range(window_bytes: int) -> bool:
    return 1 <= window_bytes <= HTTP2_MAX_WINDOW_BYTES


def parse_window_bytes(text: str, *, option: str = "--window") -> int:
    """A flow-control window: 1 .. 2^31-1 bytes."""
    window = parse_size_bytes(text, option=option)
    check_window_bytes(window, option=option)
    return window


def check_window_bytes(window_bytes: int, *, option: str = "window") -> None:
    if not window_in_range(window_bytes):
        raise UsageError(f"{option}: {window_bytes} bytes is outside {WINDOW_RANGE}")


def sig3(value: float) -> str:
    """Three significant figures, never an exponent, and whole numbers never rounded to tens:
    38.9, 580, 1537, 2.50, 0.0123."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    if abs(value) >= 99.95:
        return f"{value:.0f}"
    digits = 2 - math.floor(math.log10(abs(value)))
    if abs(round(value, digits)) >= 10 ** (3 - digits):
        digits -= 1  # 9.996 rounds up to 10.0: one decimal fewer
    return f"{value:.{max(digits, 0)}f}"


def format_bytes(n_bytes: float, digits: int | None = 2) -> str:
    """A size as text, in binary units with a space: 64 KiB, 1.5 MiB, 1000 B (one unit
    family everywhere: a size typed as 4MB reads back 3.81 MiB, never "4 MB" beside MiB).

    A whole number of units is shown whole (4 MiB). Otherwise ``digits`` decimals at most,
    trailing zeros dropped (``digits=0``: 128 KiB for 131070), or with ``digits=None`` three
    significant figures (77.8 MiB, 1.50 MiB). Labels and messages take the defaults; the
    reports (``kit.report.format.fmt_size``) take ``digits=None``.
    """
    for unit, size in _BINARY_UNITS:
        if n_bytes >= size:
            return f"{_amount(n_bytes / size, digits)} {unit}"
    return f"{n_bytes:.0f} B"


def _amount(units: float, digits: int | None) -> str:
    if digits is None:
        return str(int(units)) if units.is_integer() else sig3(units)
    text = f"{units:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def size_spec(n_bytes: int) -> str:
    """4194304 -> "4MiB", 1500 -> "1500B": the exact size as text ``parse_size_bytes``
    reads back."""
    for unit, size in (("MiB", MIB), ("KiB", KIB)):
        if n_bytes % size == 0 and n_bytes >= size:
            return f"{n_bytes // size}{unit}"
    return f"{n_bytes}B" if n_bytes else "0"


_RATE_UNITS_BITS_S = {
    # decimal bits per second
    "bit": 1.0,
    "bps": 1.0,
    "kbit": 1e3,
    "kbps": 1e3,
    "mbit": 1e6,
    "mbps": 1e6,
    "gbit": 1e9,
    "gbps": 1e9,
    # bytes per second (decimal and binary)
    "b/s": 8.0,
    "kb/s": 8e3,
    "mb/s": 8e6,
    "gb/s": 8e9,
    "kib/s": 8.0 * KIB,
    "mib/s": 8.0 * MIB,
    "gib/s": 8.0 * GIB,
}
_RATE_RE = re.compile(r"^\s*(?P<all>" + _NUMBER + r")\s*(?P<unit>[a-zA-Z/]*)\s*$")
MIN_RATE_BITS_S = 1_000.0
MAX_RATE_BITS_S = 1e12
# As the parser here and the configs' own checks (kit.plan.trial) both test and word it.
RATE_RANGE = "1 kbit/s .. 1 Tbit/s"


def rate_in_range(bits_s: float) -> bool:
    return MIN_RATE_BITS_S <= bits_s <= MAX_RATE_BITS_S  # False for NaN


def parse_fraction(text: str, *, option: str = "--loss") -> float:
    """ "0.1%" -> 0.001, "0.001" -> 0.001: a fraction, given as a percentage or as is."""
    raw = text.strip()
    percent = raw.endswith("%")
    try:
        value = float(raw[:-1] if percent else raw)
    except ValueError:
        raise UsageError(f"{option}: {text!r} is not a fraction (e.g. 0.1% or 0.001)") from None
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{option}: {text!r} must be 0 or more")
    return value / 100 if percent else value


def parse_rate_bits_s(text: str, *, option: str = "--rate") -> float:
    """Parse "100Mbit", "1Gbps", "12.5MB/s", "10MiB/s" into bits per second (decimal bits).

    A unit is required (a bare number is ambiguous between bits and bytes); the rate must be
    within 1 kbit/s .. 1 Tbit/s.
    """
    if str(text).strip().startswith("-"):
        raise UsageError(
            f"{option}: {str(text).strip()!r} is negative; a rate is above 0 (e.g. 100Mbit)"
        )
    match = _RATE_RE.match(str(text))
    if match is None:
        raise UsageError(
            f"{option}: cannot read {text!r} as a rate (examples: 100Mbit, 1Gbit, 12.5MB/s, 10MiB/s)"
        )
    unit = match.group("unit").lower()
    if not unit:
        raise UsageError(
            f"{option}: {text!r} needs a unit, e.g. {text.strip()}Mbit (bits/s) or {text.strip()}MB/s"
        )
    if unit not in _RATE_UNITS_BITS_S:
        raise UsageError(
            f"{option}: unknown rate unit {match.group('unit')!r} in {text!r} "
            "(use Kbit, Mbit, Gbit, kbps, Mbps, Gbps, KB/s, MB/s, MiB/s)"
        )
    value = float(match.group("all")) * _RATE_UNITS_BITS_S[unit]
    if not rate_in_range(value):
        raise UsageError(f"{option}: {text!r} is outside {RATE_RANGE}")
    return value


def format_rate(bits_s: float) -> str:
    """100e6 -> "100 Mbit/s"; three significant figures, decimal units."""
    for unit, size in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bits_s >= size:
            return f"{bits_s / size:.3g} {unit}"
    return f"{bits_s:.3g} bit/s"


def rate_spec(bits_s: float) -> str:
    """The rate as text ``parse_rate_bits_s`` reads back exactly ("100Mbit", "1500bit")."""
    for unit, size in (("Gbit", 1e9), ("Mbit", 1e6), ("Kbit", 1e3)):
        if bits_s >= size and (bits_s / size) == int(bits_s / size):
            return f"{int(bits_s / size)}{unit}"
    return f"{bits_s:g}bit"


def split_host_port(text: str, option: str) -> tuple[str, int]:
    """ "127.0.0.1:0" -> ("127.0.0.1", 0); "[::1]:80" -> ("::1", 80)."""
    host, sep, port = str(text).rpartition(":")
    if sep and not host and port.isdigit():
        raise UsageError(
            f"{option}: {text!r} has no host: use 127.0.0.1:{port} (this machine only) or "
            f"0.0.0.0:{port} (every interface)"
        )
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"{option}: {text!r} is not HOST:PORT (e.g. 127.0.0.1:0)")
    bare = host.strip("[]")
    if not _is_host(bare):
        raise UsageError(
            f"{option}: {text!r} is not HOST:PORT: {bare!r} is neither an IP address nor a "
            "host name (letters, digits, '-' and '.')"
        )
    return bare, int(port)


# RFC 1123 host names: dot-separated labels of letters, digits and '-', not at either end.
_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")


def _is_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    labels = host.removesuffix(".").split(".")
    return len(host) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in labels)
