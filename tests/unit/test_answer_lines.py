"""The pure pieces behind three printed answers: a stack's knee is read from its own records
(never a field its records leave empty), the interval summary is the printed lines', and a
progress line is cut to 100 columns."""

from __future__ import annotations

import re
import statistics

from kit.analysis.compare import CompareMeta, build_report
from kit.analysis.intervals import Interval
from kit.analysis.knee import sweep_of_records
from kit.campaign.runner import ProgressLine
from kit.cli.export import fitted
from kit.plan.compare import BASELINE_KEY
from kit.plan.trial import ClientConfig, Link, Trial, Workload, theory_mib_s
from kit.plan.units import KIB, MIB, size_spec
from kit.report.intervals import interval_lines, intervals_text
from kit.report.knee import knee_answer
from kit.results.client import ClientResult
from kit.results.records import Measurement, RunTags

# grpc-go's records of a sweep at 30 ms on 200 Mbit/s: 64 KiB 1.7 ... 2 MiB 23.5 MiB/s.
GO_SWEEP = {64 * KIB: 1.7, 256 * KIB: 6.6, 512 * KIB: 11.8, MIB: 23.3, 2 * MIB: 23.5}


def _go_cell(window: int, mib_s: float, key: str, copy: int = 0) -> Measurement:
    trial = Trial(
        link=Link(delay_up_ms=15, delay_down_ms=15, rate_up_bits_s=2e8, rate_down_bits_s=2e8),
        client=ClientConfig(kind="grpc-go", window_mode="static", window_bytes=window),
        workload=Workload(duration_s=0.6),
    )
    result = ClientResult(client="grpc-go", bytes=int(mib_s * MIB), elapsed_s=1.0)
    tags = RunTags(campaign="knee-grpc-go-1stream-0123456789", key=key, copy=copy)
    return Measurement(trial, "ok", result, theory_mib_s=theory_mib_s(trial), tags=tags)


def test_a_grpc_go_knee_is_read_from_its_records_windows() -> None:
    records = [
        _go_cell(w, m, BASELINE_KEY if w == 2 * MIB else size_spec(w)) for w, m in GO_SWEEP.items()
    ]
    records.append(_go_cell(2 * MIB, 23.5, BASELINE_KEY, copy=1))
    sweep = sweep_of_records(records)
    assert [p.window_bytes for p in sweep.knee.points] == sorted(GO_SWEEP)
    assert sweep.knee.knee.window_bytes == MIB  # 23.3 >= 0.9 x 23.5
    answer = knee_answer(sweep)
    assert "a 1 MiB window reaches 90%" in answer
    assert "grpc.WithStaticStreamWindowSize(1048576), grpc.WithStaticConnWindowSize(1048576)" in (
        answer
    )
    assert "kit run --client grpc-go --rtt 30ms --rate 200Mbit --window 1MiB --duration 0.6s" in (
        answer
    )
    report = build_report(CompareMeta.of_records(records), records)
    assert report.row("1MiB").summary is not None


def test_the_interval_summary_is_the_printed_lines_and_a_partial_one_is_said() -> None:
    intervals = [
        Interval(0.0, 0.5, int(4.2 * MIB / 2)),
        Interval(0.5, 1.0, int(6.1 * MIB / 2)),
        Interval(1.0, 1.5, int(6.4 * MIB / 2)),
        Interval(1.5, 2.0, int(6.1 * MIB / 2)),
        Interval(2.0, 2.01, int(0.125 * MIB)),  # 12.5 MiB/s over the last 10 ms
    ]
    lines = interval_lines(intervals, 500.0)
    assert lines[-1].endswith("(partial)") and "2.00-  2.01 s" in lines[-1]
    printed = [float(line.split()[-1]) for line in lines[1:-1]]
    text = intervals_text(intervals, 500.0)
    found = re.match(r"min ([\d.]+), median ([\d.]+), max ([\d.]+) MiB/s over 4 x 500 ms", text)
    assert found is not None, text
    assert [float(v) for v in found.groups()] == [
        min(printed),
        statistics.median(printed),
        max(printed),
    ]
    assert text.endswith("(the last 10.0 ms, partial, left out)")


def test_a_progress_line_is_cut_to_100_columns() -> None:
    long = "h2:window=256KiB,conn-window=1MiB,credit=quarter,max-frame=1MiB,connections=1" * 2
    line = fitted(ProgressLine(12, 130, long, 1234.0, 5678.0))
    assert len(line.text()) <= 100 and line.text().startswith("[12/130] h2:window=256KiB")
    short = ProgressLine(1, 3, "64KiB", 1.0, None)
    assert fitted(short) == short
