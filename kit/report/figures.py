"""Pure: what each figure shows, as frozen records (``FigureSpec``: panels, series, axes,
bound lines, legend entries), built from the figures' data (``kit.analysis.series``).

``kit.report.plot`` draws these with matplotlib and nothing else: every number, label,
scale and legend entry of a figure is decided here, so a figure is checked by reading its
description, without a plotting library. Text here is plain (the renderer keeps a "$" in a
name from starting matplotlib's mathtext).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from kit.analysis.series import (
    CompareSeries,
    EstimatorBar,
    Finish,
    Growth,
    PlotData,
    Throughput,
    WindowPoint,
)
from kit.plan.units import MIB

Scale = Literal["linear", "log2", "log10"]
Ticks = Literal["auto", "size", "rate"]  # size: 64 KiB, 1 MiB; rate: 0.5, 10, 100
Mark = Literal["points", "line", "dashed", "step", "bar", "hbar"]
LineStyle = Literal["-", "--", ":"]

COLOURS = {"grpcio": "tab:blue", "h2": "tab:orange"}
SLOW, FULL = "tab:red", "tab:blue"
MAX_GROWTH_LINES = 8  # a legend beyond this overflows a panel


@dataclass(frozen=True)
class Axis:
    label: str = ""
    scale: Scale = "linear"
    ticks: Ticks = "auto"
    lower: float | None = None
    upper: float | None = None
    categories: tuple[tuple[float, str], ...] = ()  # named ticks: (position, name)
    rotation: float = 0.0  # of the categories' names
    inverted: bool = False


@dataclass(frozen=True)
class Series:
    """Points, a line or bars; ``label`` is its legend entry ("" for none)."""

    mark: Mark
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    label: str = ""
    colour: str | None = None
    alpha: float = 1.0
    width: float = 0.8  # bars: their width (``hbar``: their height)
    markers: bool = False  # a dot at each point of a line or step

    @property
    def is_bar(self) -> bool:
        return self.mark in ("bar", "hbar")


@dataclass(frozen=True)
class Bound:
    """A horizontal line at ``value`` (a rate, window / RTT), or a band ``low``..``high``
    around it; ``label`` is its legend entry ("" for none)."""

    value: float
    label: str = ""
    colour: str = "grey"
    style: LineStyle = "--"
    band: tuple[float, float] | None = None


@dataclass(frozen=True)
class Swatch:
    """A legend entry that is a colour, for bars coloured by kind (slow / full-speed)."""

    label: str
    colour: str


@dataclass(frozen=True)
class Panel:
    title: str
    x: Axis
    y: Axis
    series: tuple[Series, ...] = ()
    bounds: tuple[Bound, ...] = ()
    swatches: tuple[Swatch, ...] = ()
    legend_outside: bool = False  # to the right of the panel (many bars' links)
    grid: Literal["both", "x", "y"] = "both"
    small: bool = False  # small title and labels (many panels)

    @property
    def legend(self) -> tuple[str, ...]:
        """The legend's entries in their order: lines and points, the bounds, then bars
        and swatches."""
        lines = [s.label for s in self.series if s.label and not s.is_bar]
        bars = [s.label for s in self.series if s.label and s.is_bar]
        bounds = [b.label for b in self.bounds if b.label]
        return (*lines, *bounds, *bars, *(s.label for s in self.swatches))


@dataclass(frozen=True)
class FigureSpec:
    name: str  # the PNG's file name
    title: str
    panels: tuple[Panel, ...]
    columns: int = 3  # panels per row at most
    sharey: bool = False
    height_in: float = 5.0  # of one row of panels


def describe(data: PlotData) -> list[FigureSpec]:
    """Every figure the data supports, in the order they are written."""
    out: list[FigureSpec] = []
    if points := data.window_points():
        out.append(window_figure(points))
    if growth := data.growth_series():
        out.append(growth_figure(growth))
    if finish := data.finish_series():
        out.append(finish_figure(finish))
    if throughput := data.throughput_series():
        out.append(throughput_figure(throughput, data.throughput_runs))
    if estimators := data.estimator_bars():
        out.append(estimator_figure(estimators))
    for index, series in enumerate(data.compare_series(), start=1):
        out.append(compare_figure(series, f"compare-{index}.png"))
    return out


# --- throughput vs window -------------------------------------------------------------------


def window_panels(points: Sequence[WindowPoint]) -> list[tuple[str, float]]:
    """One panel per study and RTT: a window table's cells never share a panel with
    another study's."""
    return sorted({(p.study, p.rtt_ms) for p in points})


def window_figure(points: Sequence[WindowPoint]) -> FigureSpec:
    panels = tuple(_window_panel(points, study, rtt) for study, rtt in window_panels(points))
    lines = "window / RTT" + (", link rate" if any(p.rate_mib_s for p in points) else "")
    return FigureSpec(
        "throughput-vs-window.png",
        f"Throughput against the static window (median run; lines: {lines})",
        panels,
        sharey=True,
    )


def _window_panel(points: Sequence[WindowPoint], study: str, rtt: float) -> Panel:
    mine = [p for p in points if p.study == study and p.rtt_ms == rtt]
    series = []
    for client in sorted({p.client for p in mine}):
        theirs = sorted((p for p in mine if p.client == client), key=lambda p: p.window_bytes)
        xs = tuple(float(p.window_bytes) for p in theirs)
        ys = tuple(p.throughput_mib_s for p in theirs)
        series.append(Series("points", xs, ys, client, COLOURS.get(client), alpha=0.7))
    windows = sorted({p.window_bytes for p in mine})
    if rtt > 0 and windows:
        lo, hi = windows[0] / 1.5, windows[-1] * 1.5
        ys = (lo / MIB / (rtt / 1000), hi / MIB / (rtt / 1000))
        series.append(Series("dashed", (lo, hi), ys, "window / RTT", "grey"))
    rates = sorted({p.rate_mib_s for p in mine if p.rate_mib_s is not None})
    bounds = tuple(Bound(rate, f"link rate {rate:.3g} MiB/s", "tab:red", ":") for rate in rates)
    where = "loopback" if rtt == 0 else f"RTT {rtt:g} ms"
    return Panel(
        f"{study}: {where}",
        Axis("stream window", "log2", "size"),
        Axis("throughput (MiB/s)", "log10", "rate"),
        tuple(series),
        bounds,
    )


# --- window growth ----------------------------------------------------------------------------


def growth_title(client: str, mode: str) -> str:
    """A pool run is a pool (one budget shared by the streams), not a dynamic window."""
    return {
        "pool": f"{client} window pool",
        "bdp-off": f"{client} dynamic window, BDP probing off",
    }.get(mode, f"{client} dynamic window")


def growth_panels(series: Sequence[Growth]) -> list[tuple[str, str]]:
    return sorted({(g.client, g.mode) for g in series})


def growth_figure(series: Sequence[Growth]) -> FigureSpec:
    panels = []
    for client, mode in growth_panels(series):
        mine = [g for g in series if g.client == client and g.mode == mode]
        lines: list[Series] = []
        for i, g in enumerate(mine[:MAX_GROWTH_LINES]):
            colour = f"C{i}"
            xs, ys = zip(*g.stream_window, strict=True) if g.stream_window else ((), ())
            ws = tuple(map(float, ys))
            lines.append(Series("step", tuple(xs), ws, g.label, colour, markers=True))
            if g.conn_credit:
                cx, cy = zip(*g.conn_credit, strict=True)
                lines.append(Series("dashed", cx, tuple(map(float, cy)), "", colour, alpha=0.6))
        timed = all(g.timed for g in mine)
        shown = (
            "" if len(mine) <= MAX_GROWTH_LINES else f" (first {MAX_GROWTH_LINES} of {len(mine)})"
        )
        panels.append(
            Panel(
                growth_title(client, mode) + shown,
                Axis("ms since the timed phase began" if timed else "SETTINGS frame (in order)"),
                Axis("window", "log2", "size"),
                tuple(lines),
            )
        )
    return FigureSpec(
        "window-growth.png",
        "Window growth, one line per run (solid: stream window announced; "
        "dashed: connection credit granted)",
        tuple(panels),
        sharey=True,
    )


# --- per-stream finish times --------------------------------------------------------------------


def finish_figure(series: Sequence[Finish]) -> FigureSpec:
    """Horizontal bars, one row per stream, grouped by cell: a linear axis from 0, so a
    0.3 ms spread looks like 0.3 ms; names stay readable however many cells there are."""
    slow_y: list[float] = []
    slow_x: list[float] = []
    full_y: list[float] = []
    full_x: list[float] = []
    y, ticks = 0.0, []
    for s in series:
        for stream, ms in enumerate(s.finish_ms):
            (slow_y if stream < s.slow else full_y).append(y)
            (slow_x if stream < s.slow else full_x).append(ms)
            y += 1
        ticks.append((y - (len(s.finish_ms) + 1) / 2, s.label))
        y += 1
    bars = [Series("hbar", tuple(full_x), tuple(full_y), colour=FULL)]
    swatches = [Swatch("stream read at full speed", FULL)]
    if slow_x:
        bars.append(Series("hbar", tuple(slow_x), tuple(slow_y), colour=SLOW))
        swatches.append(Swatch("slow stream (paced reader)", SLOW))
    rows = sum(len(s.finish_ms) for s in series) + len(series)
    panel = Panel(
        "Per-stream finish times (one bar per stream, median run of each cell)",
        Axis("finish time (ms since the timed phase began)", lower=0.0),
        Axis(categories=tuple(ticks), inverted=True),
        tuple(bars),
        swatches=tuple(swatches),
        grid="x",
    )
    height = min(12.0, max(5.0, 1.5 + 0.22 * rows))
    return FigureSpec("stream-finish.png", "", (panel,), columns=1, height_in=height)


# --- comparisons ---------------------------------------------------------------------------------


def compare_figure(series: CompareSeries, name: str = "compare-1.png") -> FigureSpec:
    bounds: list[Bound] = []
    median = series.baseline_median
    if median is not None and series.floor_pct is not None:
        band = median * series.floor_pct / 100
        label = f"baseline ± noise floor {series.floor_pct:.3g}%"
        bounds.append(Bound(median, label, "grey", "-", (median - band, median + band)))
    elif median is not None:
        bounds.append(Bound(median, "", "grey", "-"))
    rounds = sorted({r for _, r, _ in series.samples})
    points = []
    for r in rounds:
        xs = [series.keys.index(k) for k, rr, _ in series.samples if rr == r]
        ys = tuple(v for _, rr, v in series.samples if rr == r)
        shifted = tuple(x + 0.05 * (r - len(rounds) / 2) for x in xs)
        points.append(Series("points", shifted, ys, f"round {r + 1}", f"C{r % 10}"))
    names = tuple((float(i), k) for i, k in enumerate(series.keys))
    panel = Panel(
        series.title,
        Axis(categories=names, rotation=15),
        Axis(series.unit),
        tuple(points),
        tuple(bounds),
        grid="y",
    )
    return FigureSpec(name, "", (panel,), columns=1)


# --- throughput over time -------------------------------------------------------------------


def throughput_title(shown: int, runs: int) -> str:
    more = f" (first {shown} of {runs} runs)" if runs > shown else ""
    return f"Throughput over time, one panel per run{more}"


def throughput_figure(series: Sequence[Throughput], runs: int) -> FigureSpec:
    """Delivered MiB/s per interval, a linear axis from 0: the ramp and any stall show as
    they happened. The rate and window / RTT bounds are lines; a bound far above the rate
    (a window much larger than the path needs) is named in the title, not drawn off-scale."""
    panels = tuple(_throughput_panel(s, first_column=i % 3 == 0) for i, s in enumerate(series))
    return FigureSpec("throughput-over-time.png", throughput_title(len(series), runs), panels)


def _throughput_panel(s: Throughput, first_column: bool) -> Panel:
    xs = tuple(t for t, _ in s.points)
    ys = tuple(v for _, v in s.points)
    top = max([*ys, s.rate_mib_s or 0.0]) * 1.25 or 1.0
    if ys and s.end_ms is not None:  # a step holds each value to its interval's end
        xs, ys = (*xs, s.end_ms), (*ys, ys[-1])
    bounds = []
    if s.rate_mib_s:
        bounds.append(Bound(s.rate_mib_s, "link rate", "tab:red", ":"))
    name = "window / RTT" if s.window_static else "final window / RTT"
    title = s.label
    if s.window_rtt_mib_s and s.window_rtt_mib_s <= top:
        bounds.append(Bound(s.window_rtt_mib_s, name, "grey", "--"))
    elif s.window_rtt_mib_s:
        title += f"\n{name} {s.window_rtt_mib_s:.0f} MiB/s (off scale)"
    return Panel(
        f"{title}\n{s.interval_ms:g} ms intervals",
        Axis("ms since the timed phase began", lower=0.0),
        Axis("MiB/s" if first_column else "", lower=0.0, upper=top),
        (Series("step", xs, ys, "delivered", "tab:blue"),),
        tuple(bounds),
        small=True,
    )


# --- the estimator table ----------------------------------------------------------------------


def estimator_studies(bars: Sequence[EstimatorBar]) -> list[str]:
    return sorted({b.study for b in bars})


def estimator_figure(bars: Sequence[EstimatorBar]) -> FigureSpec:
    """Per study two panels, one above the other: final window / BDP (log: 0.06 to 67 on one
    axis) and time to 90% of the rate; estimators along x, one bar per link: a few legend
    entries, however many estimators."""
    panels: list[Panel] = []
    for study in estimator_studies(bars):
        mine = [b for b in bars if b.study == study]
        panels.append(
            Panel(
                f"{study}: final window / BDP",
                _estimator_axis(mine),
                Axis("final window / BDP", "log10", "rate"),
                _grouped(mine, lambda b: b.window_over_bdp),
                (Bound(1.0, "window = BDP", "grey", "-"),),
                legend_outside=True,
                grid="y",
            )
        )
        panels.append(
            Panel(
                f"{study}: time to 90% of the rate (none: never)",
                _estimator_axis(mine),
                Axis("ms"),
                _grouped(mine, lambda b: b.ramp_90_ms),
                legend_outside=True,
                grid="y",
            )
        )
    return FigureSpec(
        "estimators.png",
        "Estimators against the link: how large the window grew, how fast it got there",
        tuple(panels),
        columns=1,
        height_in=4.0,
    )


def _estimator_axis(bars: Sequence[EstimatorBar]) -> Axis:
    names = tuple((float(i), e) for i, e in enumerate(sorted({b.estimator for b in bars})))
    return Axis(categories=names, rotation=30)


def _grouped(
    bars: Sequence[EstimatorBar], value: Callable[[EstimatorBar], float | None]
) -> tuple[Series, ...]:
    estimators = sorted({b.estimator for b in bars})
    links = sorted({b.link for b in bars}, key=_link_order)
    width = 0.8 / len(links)
    out = []
    for i, link in enumerate(links):
        found = {b.estimator: value(b) for b in bars if b.link == link}
        xs = tuple(e + (i - (len(links) - 1) / 2) * width for e in range(len(estimators)))
        ys = tuple(found.get(name) or 0.0 for name in estimators)
        out.append(Series("bar", xs, ys, link, f"C{i}", width=width))
    return tuple(out)


def _link_order(link: str) -> tuple[float, float, str]:
    """Links by rate (100 Mbit before 1 Gbit), then RTT, then name ("100Mbit-20ms, 4 streams")."""
    found = re.match(r"([\d.]+)([GM])bit-([\d.]+)ms", link)
    if found is None:
        return 0.0, 0.0, link
    scale = 1e9 if found[2] == "G" else 1e6
    return float(found[1]) * scale, float(found[3]), link
