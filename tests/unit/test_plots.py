"""The figures' data from real records (tables, runs, compare): panels, series, ticks,
legends; and the records streamed into them in bounded memory."""

from __future__ import annotations

import dataclasses
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kit.analysis.series import (
    MAX_THROUGHPUT_RUNS,
    PlotData,
    finish_series,
    growth_series,
    window_points,
)
from kit.report import figures, plot
from kit.results.records import Measurement
from kit.results.store import iter_records, read_records

FIXTURES = Path(__file__).parent.parent / "fixtures"
RELEASE = FIXTURES / "release-0.1"
QUICK = FIXTURES / "tables-quick"


def _measurements(path: Path) -> tuple[Measurement, ...]:
    return read_records(path).measurements


def _texts(items: Any) -> list[str]:
    return [t.get_text() for t in items if t.get_text()]


def test_window_panels_hold_only_the_window_study() -> None:
    """The starvation and unary cells of a tables run are no points of the window plot."""
    points = window_points(_measurements(RELEASE / "tables.jsonl"))
    assert figures.window_panels(points) == [
        ("windows table", 0.0),
        ("windows table", 5.0),
        ("windows table", 20.0),
    ]
    assert len(points) == 3 * 2 * 4  # 3 RTTs x 2 clients x 4 windows, one point each
    sharing = _measurements(QUICK / "sharing.jsonl") + _measurements(QUICK / "links.jsonl")
    assert window_points(sharing) == []  # slow readers, pools, links: other questions


def test_window_figure_ticks_read_as_sizes_and_rates_and_panels_share_y() -> None:
    fig = plot.draw(figures.window_figure(window_points(_measurements(RELEASE / "tables.jsonl"))))
    fig.canvas.draw()
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == [
        "windows table: loopback",
        "windows table: RTT 5 ms",
        "windows table: RTT 20 ms",
    ]
    xticks = _texts(axes[1].get_xticklabels())
    assert {"64 KiB", "256 KiB", "1 MiB", "4 MiB"} <= set(xticks)
    assert not any("^" in t or "$" in t for t in xticks)
    yticks = _texts(axes[0].get_yticklabels())
    assert {"10", "100"} <= set(yticks) and not any("^" in t for t in yticks)
    assert axes[0].get_ylim() == axes[2].get_ylim()
    legend = axes[1].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["grpcio", "h2", "window / RTT"]
    assert "rate" not in fig.get_suptitle()  # no rate line drawn, none promised
    plot._pyplot().close(fig)


def test_ticks() -> None:
    assert [plot.size_tick(v) for v in (65536, 2**20, 4 * 2**20)] == ["64 KiB", "1 MiB", "4 MiB"]
    assert [plot.rate_tick(v) for v in (0.5, 10.0, 100.0)] == ["0.5", "10", "100"]


def test_window_growth_one_line_per_run_and_a_pool_is_a_pool() -> None:
    growth = growth_series(_measurements(QUICK / "links.jsonl"))
    fig = plot.draw(figures.growth_figure(growth))
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert len(labels) == len(set(labels)) <= figures.MAX_GROWTH_LINES
        assert len(labels) == 4  # the four links, one line each (credit: dashed, unlabelled)
    plot._pyplot().close(fig)
    sharing = growth_series(_measurements(QUICK / "sharing.jsonl"))
    assert {g.mode for g in sharing} >= {"pool", "dynamic"}
    assert figures.growth_title("h2", "pool") == "h2 window pool"
    fig = plot.draw(figures.growth_figure(sharing))
    titles = [ax.get_title() for ax in fig.axes]
    assert "h2 window pool" in titles and "h2 dynamic window" in titles
    plot._pyplot().close(fig)


def test_stream_finish_linear_from_zero_with_slow_streams_marked() -> None:
    finish = finish_series(_measurements(QUICK / "sharing.jsonl"))
    slow = [f for f in finish if f.slow]
    assert slow and all(f.label.endswith("slow") for f in slow)
    fig = plot.draw(figures.finish_figure(finish))
    ax = fig.axes[0]
    assert ax.get_xscale() == "linear" and ax.get_xlim()[0] == 0
    assert len(ax.patches) == sum(len(f.finish_ms) for f in finish)
    from matplotlib.colors import to_rgba

    red = [p for p in ax.patches if p.get_facecolor() == to_rgba(figures.SLOW)]
    assert len(red) == sum(f.slow for f in finish)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["stream read at full speed", "slow stream (paced reader)"]
    assert _texts(ax.get_yticklabels()) == [f.label for f in finish]
    plot._pyplot().close(fig)


# --- streamed, bounded ----------------------------------------------------------------------

N_RECORDS = 8_000
PEAK_BOUND_BYTES = 2 * 2**20  # streamed 0.8 MiB; the 8,000 records held would take 4.6


def _many(template: tuple[Measurement, ...]) -> Iterator[Measurement]:
    """Many runs of the fixture's configurations, each a fresh object with its own timing."""
    for i in range(N_RECORDS):
        m = template[i % len(template)]
        if m.result is not None:
            stretch = 1 + (i % 7) / 100
            result = dataclasses.replace(m.result, elapsed_s=m.result.elapsed_s * stretch)
            m = dataclasses.replace(m, result=result)
        yield dataclasses.replace(m, tags=dataclasses.replace(m.tags, round=i))


def test_plot_data_streams_8000_records_in_bounded_memory_and_equals_the_whole_path() -> None:
    template = _measurements(RELEASE / "tables.jsonl") + _measurements(QUICK / "sharing.jsonl")
    tracemalloc.start()
    try:
        data = PlotData()
        data.add_all(_many(template))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PEAK_BOUND_BYTES, f"peak {peak / 2**20:.1f} MiB"
    whole = list(_many(template))
    assert data.window_points() == window_points(whole)
    assert data.growth_series() == growth_series(whole)
    assert data.finish_series() == finish_series(whole)


def test_a_comparison_streamed_from_its_file_draws_every_sample() -> None:
    path = RELEASE / "compare.jsonl"
    warnings: list[str] = []
    data = PlotData()
    data.add_all(r for r in iter_records(path, warnings) if isinstance(r, Measurement))
    (series,) = data.compare_series()
    ok = [m for m in read_records(path).measurements if m.ok]
    assert len(series.samples) == len(ok) and warnings == []
    assert series.baseline_median is not None


def test_report_streamed_equals_the_whole_file_and_drops_lone_runs() -> None:
    from kit.report.document import render_records, report_chunks, scan_records

    for path in (RELEASE / "runs.jsonl", RELEASE / "compare.jsonl", QUICK / "links.jsonl"):
        scan = scan_records(iter_records(path, []), csv=True)
        streamed = "".join(report_chunks(scan, lambda p=path: iter_records(p, []), "f", width=100))
        whole = read_records(path)
        assert streamed == render_records(whole, "f", width=100)
        assert scan.runs + len(scan.campaigns) == len(whole.measurements)
        assert "throughput_mib_s" in scan.csv_columns
        assert all(m.tags.campaign for m in scan.campaigns)  # lone records not kept


# --- throughput over time, the estimator table ------------------------------------------------


def _data(*names: str) -> PlotData:
    data = PlotData()
    for name in names:
        data.add_all(_measurements(QUICK / name))
    return data


def test_throughput_over_time_one_panel_per_run_capped_with_the_bounds_drawn() -> None:
    data = _data("links.jsonl")
    series = data.throughput_series()
    assert len(series) == MAX_THROUGHPUT_RUNS and data.throughput_runs == 13
    fig = plot.draw(figures.throughput_figure(series, data.throughput_runs))
    assert fig.get_suptitle().endswith("(first 6 of 13 runs)")
    assert len(fig.axes) == len(series)
    for ax, s in zip(fig.axes, series, strict=True):
        assert ax.get_title().startswith(s.label)
        assert ax.get_xlabel() == "ms since the timed phase began" and ax.get_ylim()[0] == 0
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend[:2] == ["delivered", "link rate"]
        # A static window of one BDP: its window / RTT is the rate, drawn; a dynamic
        # window grown far past the BDP is named in the title, not drawn off scale.
        assert ("window / RTT" in legend) == s.window_static
        # Physics: the delivered rate never exceeds the link's (+ one bucket of slack per
        # interval: the trace counts a bucket where it starts) and a ramp starts near 0.
        rate = s.rate_mib_s or 0.0
        assert max(v for _, v in s.points) <= rate * 1.25
        assert s.points[0][1] < rate * 0.95
    plot._pyplot().close(fig)


def test_estimator_figure_grouped_bars_per_estimator_and_link() -> None:
    bars = _data("links.jsonl", "policies.jsonl").estimator_bars()
    assert figures.estimator_studies(bars) == ["estimator table", "policies table"]
    fig = plot.draw(figures.estimator_figure(bars))
    fig.canvas.draw()
    windows, ramps, pol_windows, pol_ramps = fig.axes
    assert fig.get_size_inches()[0] * plot.DPI == 900  # as wide as every figure
    assert _texts(windows.get_xticklabels()) == ["grpcio dynamic", "h2 dynamic", "h2 static bdp"]
    assert len(_texts(pol_windows.get_xticklabels())) == 13  # models beside real stacks
    assert "real-grpc-go" in _texts(pol_ramps.get_xticklabels())
    legend = [t.get_text() for t in windows.get_legend().get_texts()]
    assert legend == ["window = BDP", "100Mbit-20ms", "100Mbit-50ms", "100Mbit-100ms", "1Gbit-20ms"]
    assert [t.get_text() for t in pol_ramps.get_legend().get_texts()] == [
        "100Mbit-20ms, 1 stream",
        "100Mbit-20ms, 4 streams",
    ]
    assert len(windows.patches) == 3 * 4 and len(pol_windows.patches) == 13 * 2
    assert windows.get_yscale() == "log" and ramps.get_ylabel() == "ms"
    assert not any("^" in t for t in _texts(windows.get_yticklabels()))
    # A static window of one BDP is one BDP: its bars stand at 1.
    static = [b for b in bars if b.estimator == "h2 static bdp"]
    assert static and all(b.window_over_bdp == 1.0 for b in static)
    plot._pyplot().close(fig)
