"""The figures' descriptions (``kit.report.figures``), checked without a plotting library:
panels, series, axes (labels, scales, ticks), bound lines and legend entries, from the
fixtures' real records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kit.analysis.series import PlotData
from kit.report import figures
from kit.report.figures import MAX_GROWTH_LINES, FigureSpec, Panel
from kit.results.store import read_records

FIXTURES = Path(__file__).parent.parent / "fixtures"
RELEASE, QUICK = FIXTURES / "release-0.1", FIXTURES / "tables-quick"
MIB = 2**20


def _data(*paths: Path) -> PlotData:
    data = PlotData()
    for path in paths:
        data.add_all(read_records(path).measurements)
    return data


def _by_name(data: PlotData) -> dict[str, FigureSpec]:
    return {spec.name: spec for spec in figures.describe(data)}


def test_describing_figures_needs_no_plotting_library() -> None:
    code = (
        "import sys, kit.report.figures, kit.analysis.series; "
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_each_kind_of_record_describes_its_own_figures() -> None:
    assert list(_by_name(_data(RELEASE / "tables.jsonl"))) == [
        "throughput-vs-window.png",
        "window-growth.png",
        "stream-finish.png",
    ]
    assert list(_by_name(_data(QUICK / "links.jsonl", QUICK / "policies.jsonl"))) == [
        "window-growth.png",
        "stream-finish.png",
        "throughput-over-time.png",
        "estimators.png",
    ]
    assert list(_by_name(_data(RELEASE / "compare.jsonl"))) == [
        "window-growth.png",
        "compare-1.png",
    ]


def test_throughput_vs_window_panels_axes_and_the_window_rtt_line() -> None:
    spec = _by_name(_data(RELEASE / "tables.jsonl"))["throughput-vs-window.png"]
    assert spec.sharey and "rate" not in spec.title  # no rate line drawn, none promised
    assert [p.title for p in spec.panels] == [
        "windows table: loopback",
        "windows table: RTT 5 ms",
        "windows table: RTT 20 ms",
    ]
    for panel in spec.panels:
        assert (panel.x.scale, panel.x.ticks, panel.x.label) == ("log2", "size", "stream window")
        assert (panel.y.scale, panel.y.ticks) == ("log10", "rate")
        points = [s for s in panel.series if s.mark == "points"]
        assert [s.label for s in points] == ["grpcio", "h2"]
        assert all(len(s.xs) == 4 for s in points)  # four windows each, one point per window
    at20 = spec.panels[2]
    assert at20.legend == ("grpcio", "h2", "window / RTT")
    (line,) = [s for s in at20.series if s.label == "window / RTT"]
    for window, rate in zip(line.xs, line.ys, strict=True):
        assert abs(rate - window / MIB / 0.020) < 1e-9  # the bound itself, at 20 ms
    assert spec.panels[0].legend == ("grpcio", "h2")  # loopback: no window / RTT bound


def test_window_growth_one_labelled_line_per_run_and_dashed_credit_unlabelled() -> None:
    spec = _by_name(_data(QUICK / "links.jsonl"))["window-growth.png"]
    for panel in spec.panels:
        assert len(panel.legend) == len(set(panel.legend)) == 4 <= MAX_GROWTH_LINES
        assert (panel.y.scale, panel.y.ticks) == ("log2", "size")
        steps = [s for s in panel.series if s.mark == "step"]
        credit = [s for s in panel.series if s.mark == "dashed"]
        assert all(not s.label for s in credit)
        assert {s.colour for s in credit} <= {s.colour for s in steps}  # a run's colour
    pool = _by_name(_data(QUICK / "sharing.jsonl"))["window-growth.png"]
    assert "h2 window pool" in [p.title for p in pool.panels]


def test_stream_finish_linear_from_zero_a_bar_per_stream_and_slow_ones_named() -> None:
    data = _data(QUICK / "sharing.jsonl")
    finish = data.finish_series()
    (panel,) = _by_name(data)["stream-finish.png"].panels
    assert panel.x.scale == "linear" and panel.x.lower == 0.0 and panel.y.inverted
    bars = sum(len(s.xs) for s in panel.series if s.mark == "hbar")
    assert bars == sum(len(f.finish_ms) for f in finish)
    slow = [s for s in panel.series if s.colour == figures.SLOW]
    assert sum(len(s.xs) for s in slow) == sum(f.slow for f in finish) > 0
    assert panel.legend == ("stream read at full speed", "slow stream (paced reader)")
    assert [name for _, name in panel.y.categories] == [f.label for f in finish]


def test_throughput_over_time_bounds_and_axes_from_zero() -> None:
    data = _data(QUICK / "links.jsonl")
    spec = _by_name(data)["throughput-over-time.png"]
    assert spec.title.endswith("(first 6 of 13 runs)")
    for panel, s in zip(spec.panels, data.throughput_series(), strict=True):
        assert panel.legend[:2] == ("delivered", "link rate")
        assert panel.y.lower == 0.0 and panel.x.lower == 0.0
        (rate,) = [b for b in panel.bounds if b.label == "link rate"]
        assert rate.value == s.rate_mib_s
        assert panel.series[0].ys[:-1] == tuple(v for _, v in s.points)
        assert panel.series[0].xs[-1] == s.end_ms and panel.series[0].ys[-1] == s.points[-1][1]
        assert ("window / RTT" in panel.legend) == s.window_static
    assert [p.y.label for p in spec.panels] == ["MiB/s", "", "", "MiB/s", "", ""]


def test_estimators_two_panels_per_study_bars_per_link() -> None:
    spec = _by_name(_data(QUICK / "links.jsonl", QUICK / "policies.jsonl"))["estimators.png"]
    windows, ramps, pol_windows, pol_ramps = spec.panels
    assert spec.columns == 1
    assert windows.legend == (
        "window = BDP",
        "100Mbit-20ms",
        "100Mbit-50ms",
        "100Mbit-100ms",
        "1Gbit-20ms",
    )
    assert ramps.legend == windows.legend[1:] and ramps.y.label == "ms"
    assert (windows.y.scale, windows.y.ticks) == ("log10", "rate")
    assert [n for _, n in windows.x.categories] == ["grpcio dynamic", "h2 dynamic", "h2 static bdp"]
    assert sum(len(s.xs) for s in windows.series) == 3 * 4
    assert len(pol_windows.x.categories) == 13 and len(pol_ramps.legend) == 2


def test_compare_rounds_as_points_and_the_baseline_band() -> None:
    (panel,) = _by_name(_data(RELEASE / "compare.jsonl"))["compare-1.png"].panels
    assert panel.legend == ("round 1", "round 2", "baseline ± noise floor 22.6%")
    (band,) = panel.bounds
    assert band.band is not None and band.band[0] < band.value < band.band[1]
    assert [n for _, n in panel.x.categories] == ["baseline", "h2:window=1MiB"]
    assert sum(len(s.ys) for s in panel.series) == 6  # every sample of the campaign


def test_a_panel_legend_orders_lines_bounds_then_bars() -> None:
    panel = Panel(
        "t",
        figures.Axis(),
        figures.Axis(),
        (
            figures.Series("bar", (0.0,), (1.0,), "bars"),
            figures.Series("points", (0.0,), (1.0,), "dots"),
            figures.Series("dashed", (0.0,), (1.0,)),
        ),
        (figures.Bound(1.0, "bound"), figures.Bound(2.0)),
        (figures.Swatch("swatch", "red"),),
    )
    assert panel.legend == ("dots", "bound", "bars", "swatch")
