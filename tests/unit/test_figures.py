"""The figures' descriptions (``kit.report.figures``), checked without a plotting library:
panels, series, axes (labels, scales, ticks), bound lines and legend entries, from the
fixtures' real records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kit.analysis.knee import sweep_of_records
from kit.analysis.series import PlotData
from kit.plan.trial import CLIENT_KINDS, window_in_flight_bytes
from kit.report import figures
from kit.report.figures import MAX_GROWTH_LINES, FigureSpec, Panel
from kit.results.store import read_records

FIXTURES = Path(__file__).parent.parent / "fixtures"
RELEASE, QUICK = FIXTURES / "release-0.1", FIXTURES / "tables-quick"
RUNS = FIXTURES / "runs"
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
        assert (panel.x.scale, panel.x.ticks) == ("log2", "size")
        assert panel.x.label == "window in flight per RTT"
        # ticked at the windows run, in order, by their size
        assert [n for _, n in panel.x.categories] == ["64 KiB", "256 KiB", "1 MiB", "4 MiB"]
        assert (panel.y.scale, panel.y.ticks) == ("log10", "rate")
        points = [s for s in panel.series if s.mark == "points"]
        assert [s.label for s in points] == ["grpcio", "h2"]
        assert all(len(s.xs) == 4 for s in points)  # four windows each, one point per window
    at20 = spec.panels[2]
    assert at20.legend == ("grpcio", "h2", "window / RTT")
    (line,) = [s for s in at20.series if s.label == "window / RTT"]
    assert line.xs == tuple(float(w) for w in (64 * 1024, 256 * 1024, MIB, 4 * MIB))  # no wider
    for window, rate in zip(line.xs, line.ys, strict=True):
        assert abs(rate - window / MIB / 0.020) < 1e-9  # the bound itself, at 20 ms
    assert spec.panels[0].legend == ("grpcio", "h2")  # loopback: no window / RTT bound


def test_each_stack_its_own_colour_and_marker_from_okabe_ito() -> None:
    assert set(figures.STACK_STYLES) == set(CLIENT_KINDS)
    styles = list(figures.STACK_STYLES.values())
    assert len({c for c, _ in styles}) == len({m for _, m in styles}) == len(styles)
    assert {c for c, _ in styles} <= set(figures.OKABE_ITO.values())
    (panel,) = _by_name(_data(QUICK / "stacks.jsonl"))["throughput-vs-window.png"].panels
    points = [s for s in panel.series if s.mark == "points"]
    assert [s.label for s in points] == ["grpcio", "h2", "grpc-go", "grpc-java", "grpc-js", "tonic"]
    assert len({(s.colour, s.marker) for s in points}) == len(points)
    # outlined markers: where two stacks measured the same, both stay visible
    assert all(s.hollow for s in points)


def test_a_panel_with_one_window_draws_window_rtt_level_not_a_slope() -> None:
    (panel,) = _by_name(_data(QUICK / "stacks.jsonl"))["throughput-vs-window.png"].panels
    assert {x for s in panel.series for x in s.xs} == {64 * 1024.0}
    assert not [s for s in panel.series if s.mark == "dashed"]
    (level,) = [b for b in panel.bounds if b.label.startswith("window / RTT")]
    assert level.label == "window / RTT (64 KiB / 20 ms)"
    assert abs(level.value - 64 / 1024 / 0.020) < 1e-9


def test_a_run_is_drawn_at_its_window_in_flight_and_ringed_when_its_conn_window_binds() -> None:
    """4 streams of 1 MiB windows behind a 64 KiB connection window ran against 64 KiB / RTT,
    not 1 MiB; 4 streams with no such limit had 4 MiB in flight."""
    runs = read_records(RUNS / "windows-20ms.jsonl").measurements
    (panel,) = _by_name(_data(RUNS / "windows-20ms.jsonl"))["throughput-vs-window.png"].panels
    drawn = {
        (s.label, x, y)
        for s in panel.series
        if s.mark == "points" and s.label != figures.CONN_BOUND
        for x, y in zip(s.xs, s.ys, strict=True)
    }
    expected = set()
    for m in runs:
        in_flight = window_in_flight_bytes(m.trial)
        assert in_flight is not None and m.throughput_mib_s is not None
        label = figures.window_series_label(m.trial.client.kind, m.trial.workload.streams)
        expected.add((label, float(in_flight), m.throughput_mib_s))
    assert drawn == expected  # nothing at a window it did not run with
    assert ("h2, 4 streams", 64 * 1024.0) in {(label, x) for label, x, _ in drawn}
    (ring,) = [s for s in panel.series if s.label == figures.CONN_BOUND]
    assert ring.xs == (64 * 1024.0,)  # the one run its connection window bound
    assert figures.CONN_BOUND in panel.legend


def test_every_title_fits_its_width_whole() -> None:
    paths = [RELEASE / "tables.jsonl", RELEASE / "compare.jsonl", RUNS / "knee-100mbit-20ms.jsonl"]
    paths += [RUNS / "windows-20ms.jsonl", *sorted(QUICK.glob("*.jsonl"))]
    for path in paths:
        for spec in figures.describe(_data(path)):
            lines = spec.title.split("\n")
            assert all(len(line) <= figures.title_columns(spec) for line in lines), spec.title
            for panel in spec.panels:
                width = figures.title_columns(spec, panel)
                assert all(len(line) <= width for line in panel.title.split("\n")), panel.title
    # wrapped, never cut: every word of a long title is kept
    title = "Per-stream finish times (one bar per stream, median run of each cell)"
    assert figures.wrapped(title, 30).split() == title.split()


def test_the_knee_answers_which_window_is_enough() -> None:
    """A window sweep at 20 ms on a 100 Mbit/s link: throughput against the window set, in
    window order on a log axis; each window's bound; the 90 % line and the knee on it."""
    runs = read_records(RUNS / "knee-100mbit-20ms.jsonl").measurements
    sweep = sweep_of_records(runs)
    specs = _by_name(_data(RUNS / "knee-100mbit-20ms.jsonl"))
    assert "knee-1stream.png" in specs
    assert not [n for n in specs if n.startswith("compare-") or n == "stream-finish.png"]
    spec = specs["knee-1stream.png"]
    (panel,) = spec.panels
    assert (panel.x.scale, panel.x.ticks) == ("log2", "size")
    windows = [p.window_bytes for p in sweep.knee.points]
    assert windows == sorted(windows) and [x for x, _ in panel.x.categories] == windows
    (median,) = [s for s in panel.series if s.label == "median of the runs"]
    assert list(median.xs) == windows  # in window order, not the rounds' shuffled order
    (each,) = [s for s in panel.series if s.label == "each run"]
    assert len(each.xs) == sum(1 for m in runs if m.ok)
    (knee,) = [s for s in panel.series if s.label.startswith("knee: ")]
    assert knee.label.startswith("knee: 1 MiB, the smallest window at >= 90% of the best")
    assert knee.xs == (float(sweep.knee.knee.window_bytes),) and knee.ys == (
        sweep.knee.knee.median,
    )
    (ninety,) = [b for b in panel.bounds if b.label.startswith("90% x the best")]
    top = min(sweep.knee.best.median, sweep.rate_mib_s or float("inf"))
    assert abs(ninety.value - 0.9 * top) < 1e-9
    smaller = [p for p in sweep.knee.points if p.window_bytes < sweep.knee.knee.window_bytes]
    assert all(p.median < ninety.value <= knee.ys[0] for p in smaller)  # the smallest that does
    (rate,) = [b for b in panel.bounds if b.label.startswith("link rate")]
    assert abs(rate.value - 100e6 / 8 / MIB) < 1e-9
    (bound,) = [s for s in panel.series if s.label == "min(window / RTT, rate)"]
    for window, value in zip(bound.xs, bound.ys, strict=True):
        assert abs(value - min(window / MIB / 0.020, rate.value)) < 1e-9
    assert spec.title.startswith("Which window is enough? 1 MiB reaches 90% of the best")


def test_timed_runs_draw_no_stream_finish() -> None:
    """Every stream of a timed run stops when its time is up: nothing to tell apart."""
    assert "stream-finish.png" not in _by_name(_data(RUNS / "knee-100mbit-20ms.jsonl"))
    finish = _data(RUNS / "windows-20ms.jsonl").finish_series()
    assert finish and all(len(f.finish_ms) == 4 for f in finish)  # the fixed-size runs only


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
