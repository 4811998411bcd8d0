"""The figures from real records: a live ``kit run --interval`` through a rate-limited
delay line, then ``kit plot`` on its records file; the estimator figure from a stored tables
run. The PNGs are written, and their descriptions hold the records' data."""

from __future__ import annotations

import statistics
from pathlib import Path

from cli_support import kit, kit_here

from kit.analysis.intervals import intervals_of
from kit.analysis.series import PlotData
from kit.report.figures import FigureSpec, describe
from kit.results.store import read_records

FIXTURES = Path(__file__).parent.parent / "fixtures"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MIB = 2**20
RATE_MIB_S = 100e6 / 8 / MIB  # --rate 100Mbit: 11.9 MiB/s, the bound at 10 ms with 256 KiB


def _figures(path: Path) -> dict[str, FigureSpec]:
    data = PlotData()
    data.add_all(read_records(path).measurements)
    return {spec.name: spec for spec in describe(data)}


def test_a_live_interval_run_plots_its_throughput_over_time(tmp_path: Path) -> None:
    records = tmp_path / "runs.jsonl"
    run = kit(
        "run", "--rtt", "10ms", "--rate", "100Mbit", "--client", "h2", "--window", "256KiB",
        "--duration", "0.8s", "--interval", "50ms", "--records", str(records),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    out = tmp_path / "figures"
    plot = kit_here("plot", str(records), "--out", str(out))
    assert plot.returncode == 0, plot.stderr
    png = out / "throughput-over-time.png"
    assert str(png) in plot.stdout.splitlines()
    assert png.read_bytes().startswith(PNG_MAGIC)

    (m,) = read_records(records).measurements
    intervals = intervals_of(m)
    spec = _figures(records)["throughput-over-time.png"]
    (panel,) = spec.panels
    (delivered,) = panel.series
    # the figure draws the record's intervals, every one, at the run's own 50 ms
    # (the step holds the last value to the last interval's end: one point more; a last
    # interval shorter than one 2 ms trace bucket holds nothing and is not drawn)
    drawn = len(delivered.ys) - 1
    assert len(intervals) - 1 <= drawn <= len(intervals) and drawn >= 16  # 0.8 s / 50 ms
    assert list(delivered.ys[:-1]) == [i.mib_s for i in intervals[:drawn]]
    assert delivered.xs[-1] == intervals[drawn - 1].end_s * 1000
    steps = [b - a for a, b in zip(delivered.xs[:-1], delivered.xs[1:-1], strict=False)]
    assert all(abs(step - 50.0) < 1e-6 for step in steps)
    assert "50 ms intervals" in panel.title
    # the link's rate is the bound drawn; 256 KiB / 10 ms (25 MiB/s) lies off this scale
    (rate,) = [b for b in panel.bounds if b.label == "link rate"]
    assert abs(rate.value - RATE_MIB_S) < 1e-9
    assert "window / RTT 25 MiB/s (off scale)" in panel.title
    assert panel.legend == ("delivered", "link rate")
    # physics, with a stated tolerance: no interval beats the link by more than one trace
    # bucket's slack (25%), and the steady intervals carry most of the rate (a loaded
    # machine slows the client, never the link)
    assert max(delivered.ys) <= RATE_MIB_S * 1.25
    assert statistics.median(delivered.ys[2:-2]) >= RATE_MIB_S * 0.5


def test_the_estimator_figure_from_a_stored_tables_run(tmp_path: Path) -> None:
    path = FIXTURES / "tables-quick" / "links.jsonl"
    out = tmp_path / "figures"
    plot = kit_here("plot", str(path), "--out", str(out))
    assert plot.returncode == 0, plot.stderr
    assert (out / "estimators.png").read_bytes().startswith(PNG_MAGIC)
    data = PlotData()
    data.add_all(read_records(path).measurements)
    bars = data.estimator_bars()
    windows = describe(data)[-1].panels[0]
    assert describe(data)[-1].name == "estimators.png"
    links = sorted({b.link for b in bars})
    assert sorted(s.label for s in windows.series) == links
    drawn = sorted(y for s in windows.series for y in s.ys)
    assert drawn == sorted(b.window_over_bdp or 0.0 for b in bars)
