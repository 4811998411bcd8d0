from __future__ import annotations

import pytest

from kit.errors import UsageError
from kit.plan.units import (
    HTTP2_MAX_WINDOW_BYTES,
    format_bytes,
    parse_duration_ms,
    parse_size_bytes,
    parse_window_bytes,
)


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("20ms", 20.0),
        ("1.5ms", 1.5),
        ("0", 0.0),
        ("0.02s", 20.0),
        ("250us", 0.25),
        ("2s", 2000.0),
        (" 5 ms ", 5.0),
    ],
)
def test_durations(text: str, ms: float) -> None:
    assert parse_duration_ms(text) == pytest.approx(ms)


@pytest.mark.parametrize("text", ["20", "20 parsecs", "-5ms", "ms", "", "1e999s", "nan"])
def test_bad_durations_name_the_option(text: str) -> None:
    with pytest.raises(UsageError, match="--rtt"):
        parse_duration_ms(text, option="--rtt")


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("64KiB", 65536),
        ("4MiB", 4 * 2**20),
        ("65536", 65536),
        ("1KB", 1000),
        ("1.5MiB", 1572864),
        ("2GiB", 2**31),
    ],
)
def test_sizes(text: str, n: int) -> None:
    assert parse_size_bytes(text) == n


@pytest.mark.parametrize("text", ["4XB", "-1KiB", "0.5B", "lots", "1e30GiB"])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(UsageError, match="--window"):
        parse_size_bytes(text, option="--window")


def test_window_range_is_http2s() -> None:
    assert parse_window_bytes(str(HTTP2_MAX_WINDOW_BYTES)) == HTTP2_MAX_WINDOW_BYTES
    for text in ("0", "2GiB", "3GiB"):
        with pytest.raises(UsageError, match="2\\^31-1"):
            parse_window_bytes(text)


def test_format_bytes() -> None:
    assert format_bytes(65536) == "64 KiB"
    assert format_bytes(4 * 2**20) == "4 MiB"
    assert format_bytes(1000) == "1000 B"


def test_format_bytes_never_uses_exponents() -> None:
    assert format_bytes(130.5 * 1024) == "130.5 KiB"
    assert format_bytes(1.5 * 2**20) == "1.5 MiB"
    assert "e+" not in format_bytes(999.99 * 1024)
