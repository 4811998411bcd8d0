"""The kernel check's pure side (``kit.analysis.kernel``) on stored samples of this machine's
kernel (6.18.44, packet link 100 Mbit/s x 20 ms, 2026-12-03: ``python -m kit.tools.kernelcheck
--samples``) and the ``linux`` model's window traces from the same link; ``TCP_INFO``
decoding on a synthetic buffer; the model's ``kit run`` command line."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from kit.analysis.kernel import (
    TCP_INFO_MIN_BYTES,
    Sample,
    parse_tcp_info,
    rows,
    sample_from_row,
    summarize,
    window_at,
)
from kit.clients.h2.policies import linux
from kit.tools.kernelcheck import Check, model_argv, render

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kernelcheck"


def load(name: str) -> tuple[list[Sample], tuple[tuple[float, int], ...]]:
    samples = [sample_from_row(r) for r in json.loads((FIXTURES / f"{name}.json").read_text())]
    trace = json.loads((FIXTURES / f"{name}.model.json").read_text())
    return samples, tuple((float(t), int(w)) for t, w in trace)


def test_tcp_info_fields_come_from_their_offsets() -> None:
    raw = bytearray(280)
    for offset, value in ((64, 79_040), (84, 1448), (92, 20_000), (96, 14_480), (228, 65_536),
                          (232, 41_984)):  # fmt: skip
        struct.pack_into("<I", raw, offset, value)
    struct.pack_into("<Q", raw, 128, 3_000_000)
    info = parse_tcp_info(bytes(raw))
    assert (info.rcv_ssthresh, info.advmss, info.rcv_rtt_us, info.rcv_space) == (
        79_040, 1448, 20_000, 14_480)  # fmt: skip
    assert (info.snd_wnd, info.rcv_wnd, info.bytes_received) == (65_536, 41_984, 3_000_000)
    with pytest.raises(ValueError, match=r"6\.2"):
        parse_tcp_info(bytes(TCP_INFO_MIN_BYTES - 1))


def test_the_model_window_is_a_step_function_of_its_trace() -> None:
    trace = ((0.0, 65_535), (74.0, 568_774), (365.0, 7_845_108))
    assert window_at(trace, 50.0, 1) == 65_535
    assert window_at(trace, 74.0, 1) == 568_774
    assert window_at(trace, 10_000.0, 1) == 7_845_108
    assert window_at((), 5.0, 65_535) == 65_535


def test_a_fast_reader_grows_both_windows_far_past_the_bdp() -> None:
    """The stored fast run: the kernel's window (advertised + unread) ends at ~8.7 MB with
    rcv_space ~0.9 MB, 35x the 244 KiB BDP (the drop-tail queue inflates the RTT); the
    model's trace ends at 16 MB: within its cap, above the kernel's."""
    samples, trace = load("fast-100mbit-20ms")
    table = rows(samples, trace, linux.INITIAL_WINDOW_BYTES, 200.0)
    assert [r.t_ms for r in table[:3]] == [200.0, 400.0, 600.0]
    assert table[-1].t_ms == samples[-1].t_ms
    assert all(r.unread >= 0 for r in table)
    s = summarize(table)
    assert 8_000_000 < s.final_real < 9_500_000
    assert s.final_model <= linux.WINDOW_CAP_BYTES
    assert s.median_ratio is not None and 1.0 < s.median_ratio < 2.5
    assert 10.0 < s.real_copied_mib_s < 12.0  # 100 Mbit/s less headers


def test_a_slow_reader_keeps_the_kernel_window_at_its_start() -> None:
    """The stored 8 Mbit/s reader: the kernel's rcv_space never leaves its 10 segments
    (copied less the unread queue never exceeds it), its window stays 80-100 KiB; the model
    grew once, to 196606, on a burst of paced reads (its start, 65535, leaves a shorter
    unread queue than the kernel's 131072 x scaling ratio): model / real about 2."""
    samples, trace = load("slow-8mbit-100mbit-20ms")
    table = rows(samples, trace, linux.INITIAL_WINDOW_BYTES, 300.0)
    assert {r.rcv_space for r in table} == {linux.INITIAL_SPACE_BYTES}
    assert all(75_000 < r.real_window < 110_000 for r in table)
    s = summarize(table)
    assert s.final_model == 196_606
    assert s.median_ratio is not None and 1.7 < s.median_ratio < 2.6
    assert 0.9 < s.real_copied_mib_s < 1.0  # 8 Mbit/s


def test_render_names_the_kernel_the_rules_and_the_reader() -> None:
    samples, trace = load("slow-8mbit-100mbit-20ms")
    check = Check(100e6, 20.0, 3.0, 8e6)
    text = render(check, rows(samples, trace, linux.INITIAL_WINDOW_BYTES, 1000.0))
    assert f"({linux.KERNEL} rules)" in text and "reader 8 Mbit/s" in text
    assert "model / real median" in text


def test_the_model_runs_on_the_same_link_and_reader() -> None:
    argv = model_argv(Check(100e6, 20.0, 3.0, 8e6))
    joined = " ".join(argv)
    assert "--link packet" in joined and "--window-policy linux" in joined
    assert "--rate 100000kbit" in joined and "--rtt 20.0ms" in joined
    assert "--slow-streams 1 --read-rate 8000kbit" in joined
    assert "--slow-streams" not in model_argv(Check(100e6, 20.0, 3.0, None))
