from __future__ import annotations

import pytest

from kit.errors import UsageError
from kit.plan.units import (
    HTTP2_MAX_WINDOW_BYTES,
    format_bytes,
    format_rate,
    parse_duration_ms,
    parse_rate_bits_s,
    parse_size_bytes,
    parse_window_bytes,
    rate_spec,
    size_spec,
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
        ("65536B", 65536),
        ("0", 0),
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


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("4", "--window 4 needs a unit, e.g. 4MiB"),
        ("65536", "--window 65536 needs a unit, e.g. 64KiB"),
        ("1500", "--window 1500 needs a unit, e.g. 1500B"),
        ("4M", "--window 4M: 'M' is ambiguous; write 4MiB \\(binary\\) or 4MB \\(decimal\\)"),
        ("64k", "write 64KiB \\(binary\\) or 64KB"),
    ],
)
def test_sizes_need_a_unit(text: str, message: str) -> None:
    """A bare 4 was a 4-byte window; "4M" means MiB to some stacks and MB to others."""
    with pytest.raises(UsageError, match=message):
        parse_size_bytes(text, option="--window")


def test_size_spec_reads_back() -> None:
    for n in (0, 1, 1500, 65536, 4 * 2**20, 2**31 - 1):
        assert parse_size_bytes(size_spec(n)) == n


def test_window_range_is_http2s() -> None:
    assert parse_window_bytes(f"{HTTP2_MAX_WINDOW_BYTES}B") == HTTP2_MAX_WINDOW_BYTES
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


@pytest.mark.parametrize(
    ("text", "bits"),
    [
        ("100Mbit", 100e6),
        ("1Gbit", 1e9),
        ("1gbps", 1e9),
        ("20Mbps", 20e6),
        ("500kbit", 500e3),
        ("12.5MB/s", 100e6),
        ("1MiB/s", 8 * 1024 * 1024),
    ],
)
def test_rates_parse_in_decimal_bits(text: str, bits: float) -> None:
    assert parse_rate_bits_s(text) == pytest.approx(bits)
    assert parse_rate_bits_s(rate_spec(parse_rate_bits_s(text))) == pytest.approx(bits)


@pytest.mark.parametrize("text", ["100", "0Mbit", "-5Mbit", "fast", "10furlongs", "2Tbit"])
def test_bad_rates_are_one_line_errors(text: str) -> None:
    with pytest.raises(UsageError, match="--rate"):
        parse_rate_bits_s(text)


def test_format_rate_uses_three_figures() -> None:
    assert format_rate(100e6) == "100 Mbit/s"
    assert format_rate(1.5e9) == "1.5 Gbit/s"
