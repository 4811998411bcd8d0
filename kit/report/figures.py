"""Pure: what each figure shows, as frozen records (``FigureSpec``: panels, series, axes,
bound lines, legend entries), built from the figures' data (``kit.analysis.series``).

``kit.report.plot`` draws these with matplotlib and nothing else: every number, label,
scale and legend entry of a figure is decided here, so a figure is checked by reading its
description, without a plotting library. Text here is plain (the renderer keeps a "$" in a
name from starting matplotlib's mathtext).
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from kit.analysis.compare import sample_of
from kit.analysis.knee import Sweep, is_knee_campaign, sweep_of_records, swept_window
from kit.analysis.series import (
    CompareSeries,
    EstimatorBar,
    Finish,
    Growth,
    PlotData,
    Throughput,
    WindowPoint,
    compare_series,
)
from kit.plan.units import MIB, format_bytes
from kit.results.records import Measurement

Scale = Literal["linear", "log2", "log10"]
Ticks = Literal["auto", "size", "rate"]  # size: 64 KiB, 1 MiB; rate: 0.5, 10, 100
Mark = Literal["points", "line", "dashed", "step", "bar", "hbar"]
LineStyle = Literal["-", "--", ":"]
FontSize = Literal["small", "medium", "large"]

# Okabe and Ito's colour-blind-safe palette; each stack its own colour *and* marker, so two
# stacks stay apart in grey and where their points coincide.
OKABE_ITO = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}
STACK_STYLES: dict[str, tuple[str, str]] = {  # client kind -> (colour, marker)
    "grpcio": (OKABE_ITO["blue"], "o"),
    "h2": (OKABE_ITO["orange"], "s"),
    "grpc-go": (OKABE_ITO["green"], "^"),
    "grpc-java": (OKABE_ITO["vermillion"], "D"),
    "grpc-js": (OKABE_ITO["purple"], "v"),
    "tonic": (OKABE_ITO["sky"], "P"),
}
OTHER_STYLE = (OKABE_ITO["black"], "X")  # a client kind from a newer release
PALETTE = tuple(OKABE_ITO[c] for c in ("blue", "orange", "green", "vermillion", "purple",
                                       "sky", "black", "yellow"))  # fmt: skip
SLOW, FULL = OKABE_ITO["vermillion"], OKABE_ITO["blue"]
BOUND_GREY = "grey"
MAX_GROWTH_LINES = 8  # a legend beyond this overflows a panel


def cycle_colour(index: int) -> str:
    """The ``index``-th colour of lines that are not stacks (runs, rounds, links)."""
    return PALETTE[index % len(PALETTE)]


def stack_style(client: str) -> tuple[str, str]:
    """A stack's (colour, marker) in every figure."""
    return STACK_STYLES.get(client, OTHER_STYLE)


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
    marker: str = "o"  # points: matplotlib's marker ("o", "s", "^", "*")
    hollow: bool = False  # points: outlined only, so one drawn over another leaves it seen
    size: float = 6.0  # points: the marker's size

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
    """Every figure the data supports, in the order they are written, each title wrapped
    to the width it is drawn in (``fitted``)."""
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
    knees = [ms for ms in data.compares.values() if is_knee_campaign(ms)]
    others = [m for ms in data.compares.values() if not is_knee_campaign(ms) for m in ms]
    for index, series in enumerate(compare_series(others), start=1):
        out.append(compare_figure(series, f"compare-{index}.png"))
    out += [knee_figure(sweep_of_records(ms), ms) for ms in knees]
    return [fitted(spec) for spec in out]


# --- titles drawn whole -----------------------------------------------------------------------

FIGURE_WIDTH_PX = 900.0  # kit.report.plot draws 9 x 5 inches at 100 dpi
# Average character widths of the figures' font (DejaVu Sans at 100 dpi), measured.
CHAR_PX: dict[FontSize, float] = {"small": 6.4, "medium": 7.4, "large": 8.9}
PANEL_MARGIN_PX = 70.0  # a panel's tick labels and axis label, beside its title
LEGEND_OUTSIDE_PX = 150.0  # a legend drawn to the right of its panel


def title_columns(spec: FigureSpec, panel: Panel | None = None) -> int:
    """How many characters of a title fit on one line: the figure's (``panel`` None) or a
    panel's, in the font size each is drawn in."""
    if panel is None:
        return int((FIGURE_WIDTH_PX - 20) / CHAR_PX["large"])
    columns = min(len(spec.panels), spec.columns) or 1
    width = FIGURE_WIDTH_PX / columns - PANEL_MARGIN_PX
    width -= LEGEND_OUTSIDE_PX if panel.legend_outside else 0.0
    return int(width / CHAR_PX["small" if panel.small else "medium"])


def wrapped(title: str, columns: int) -> str:
    """``title`` broken at spaces into lines of at most ``columns`` (its own breaks kept);
    nothing is cut."""
    lines = [textwrap.fill(line, columns, break_long_words=False) for line in title.split("\n")]
    return "\n".join(lines)


def fitted(spec: FigureSpec) -> FigureSpec:
    """``spec`` with its title and every panel's wrapped to the width drawn."""
    panels = tuple(
        dataclasses.replace(p, title=wrapped(p.title, title_columns(spec, p))) for p in spec.panels
    )
    return dataclasses.replace(spec, title=wrapped(spec.title, title_columns(spec)), panels=panels)


# --- throughput vs window -------------------------------------------------------------------


def window_panels(points: Sequence[WindowPoint]) -> list[tuple[str, float]]:
    """One panel per study and RTT: a window table's cells never share a panel with
    another study's."""
    return sorted({(p.study, p.rtt_ms) for p in points})


def window_figure(points: Sequence[WindowPoint]) -> FigureSpec:
    panels = tuple(_window_panel(points, study, rtt) for study, rtt in window_panels(points))
    return FigureSpec(
        "throughput-vs-window.png",
        "Throughput against the window in flight (median run of each setting)",
        panels,
        sharey=True,
    )


WINDOW_AXIS = "window in flight per RTT"  # streams x stream window, or the conn. window
CONN_BOUND = "ringed: the connection window binds (drawn at it)"


def window_series_label(client: str, streams: int) -> str:
    """``h2``, ``h2, 4 streams``."""
    return client + (f", {streams} streams" if streams > 1 else "")


def _stack_order(client: str) -> int:
    return list(STACK_STYLES).index(client) if client in STACK_STYLES else len(STACK_STYLES)


def _window_panel(points: Sequence[WindowPoint], study: str, rtt: float) -> Panel:
    """Each stack its colour and marker (hollow for one stream, filled for several); a run
    at the window it had in flight, and ringed when its connection window bound it; the
    window / RTT line across the windows run, or a level line when the panel has one."""
    mine = [p for p in points if p.study == study and p.rtt_ms == rtt]
    groups = sorted({(p.client, p.streams) for p in mine}, key=lambda g: (_stack_order(g[0]), g))
    series = []
    for client, streams in groups:
        theirs = sorted(
            (p for p in mine if (p.client, p.streams) == (client, streams)),
            key=lambda p: p.window_bytes,
        )
        colour, marker = stack_style(client)
        xs = tuple(float(p.window_bytes) for p in theirs)
        ys = tuple(p.throughput_mib_s for p in theirs)
        label = window_series_label(client, streams)
        series.append(
            Series("points", xs, ys, label, colour, marker=marker, hollow=streams == 1, size=8.0)
        )
    if bound := [p for p in mine if p.conn_bound]:
        xs = tuple(float(p.window_bytes) for p in bound)
        ys = tuple(p.throughput_mib_s for p in bound)
        ring = Series("points", xs, ys, CONN_BOUND, OKABE_ITO["black"], hollow=True, size=16.0)
        series.append(ring)
    windows = sorted({p.window_bytes for p in mine})
    bounds = []
    if rtt > 0 and len(windows) > 1:
        ys = tuple(w / MIB / (rtt / 1000) for w in windows)
        series.append(Series("dashed", tuple(map(float, windows)), ys, "window / RTT", BOUND_GREY))
    elif rtt > 0 and windows:
        only = windows[0]
        label = f"window / RTT ({format_bytes(only)} / {rtt:g} ms)"
        bounds.append(Bound(only / MIB / (rtt / 1000), label, BOUND_GREY, "--"))
    rates = sorted({p.rate_mib_s for p in mine if p.rate_mib_s is not None})
    bounds += [Bound(r, f"link rate {r:.3g} MiB/s", OKABE_ITO["vermillion"], ":") for r in rates]
    where = "loopback" if rtt == 0 else f"RTT {rtt:g} ms"
    return Panel(
        f"{study}: {where}",
        window_axis(WINDOW_AXIS, windows),
        Axis("throughput (MiB/s)", "log10", "rate"),
        tuple(series),
        tuple(bounds),
    )


def window_axis(label: str, windows: Sequence[int]) -> Axis:
    """A log axis of windows, ticked at the windows run only (64 KiB, 1 MiB)."""
    ticks = tuple((float(w), format_bytes(w)) for w in sorted(set(windows)))
    return Axis(label, "log2", "size", categories=ticks)


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
            colour = cycle_colour(i)
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
        points.append(Series("points", shifted, ys, f"round {r + 1}", cycle_colour(r)))
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
        bounds.append(Bound(s.rate_mib_s, "link rate", OKABE_ITO["vermillion"], ":"))
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
        (Series("step", xs, ys, "delivered", OKABE_ITO["blue"]),),
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
        out.append(Series("bar", xs, ys, link, cycle_colour(i), width=width))
    return tuple(out)


def _link_order(link: str) -> tuple[float, float, str]:
    """Links by rate (100 Mbit before 1 Gbit), then RTT, then name ("100Mbit-20ms, 4 streams")."""
    found = re.match(r"([\d.]+)([GM])bit-([\d.]+)ms", link)
    if found is None:
        return 0.0, 0.0, link
    scale = 1e9 if found[2] == "G" else 1e6
    return float(found[1]) * scale, float(found[3]), link


# --- the knee of a window sweep ----------------------------------------------------------------


def knee_name(sweep: Sweep) -> str:
    """The PNG of a sweep: ``knee-1stream.png``, ``knee-grpc-go-8streams.png``."""
    kind = "" if sweep.client == "h2" else f"{sweep.client}-"
    streams = f"{sweep.streams}stream" + ("s" if sweep.streams > 1 else "")
    return f"knee-{kind}{streams}.png"


def knee_figure(sweep: Sweep, runs: Sequence[Measurement]) -> FigureSpec:
    """Which window is enough: throughput against the window set (log axis, windows in
    order), every run and the medians; the bound each window allows (window / RTT, the
    link's rate); the 90 % of the best line and the knee on it, the answer, marked."""
    knee, points = sweep.knee, sweep.knee.points
    top = knee_top(sweep)
    each = [
        (w, v) for m in runs if (w := swept_window(m.trial)) and (v := sample_of(m, "throughput"))
    ]
    streams = f"{sweep.streams} stream" + ("s" if sweep.streams > 1 else "")
    highest = max([*(v for _, v in each), top, *(p.max for p in points)])
    panel = Panel(
        f"{sweep.client}, {streams}, RTT {sweep.rtt_ms:g} ms: {sweep.swept} swept",
        window_axis("window set (--window)", [p.window_bytes for p in points]),
        Axis("throughput (MiB/s)", lower=0.0, upper=highest * 1.15),
        _knee_series(sweep, each),
        _knee_bounds(sweep, top),
        legend_outside=True,
    )
    size = format_bytes(knee.knee.window_bytes)
    title = f"Which window is enough? {size} reaches {knee.fraction:.0%} of the best measured"
    if knee.knee.window_bytes == points[-1].window_bytes:
        title += " (the largest tried: the knee may lie beyond)"
    return FigureSpec(knee_name(sweep), title, (panel,), columns=1)


def knee_top(sweep: Sweep) -> float:
    """What the knee's fraction is of: the best median, or the link's rate when lower."""
    best = sweep.knee.best.median
    return best if sweep.rate_mib_s is None else min(sweep.rate_mib_s, best)


def _knee_series(sweep: Sweep, each: Sequence[tuple[int, float]]) -> tuple[Series, ...]:
    colour, marker = stack_style(sweep.client)
    knee, points = sweep.knee, sweep.knee.points
    windows = tuple(float(p.window_bytes) for p in points)
    medians = tuple(p.median for p in points)
    runs_x, runs_y = tuple(float(w) for w, _ in each), tuple(v for _, v in each)
    series = [
        Series("line", windows, medians, "median of the runs", colour),
        Series("points", runs_x, runs_y, "each run", colour, marker=marker, hollow=True, size=7),
    ]
    bound = [(float(p.window_bytes), p.theory_mib_s) for p in points if p.theory_mib_s]
    if len(bound) > 1:
        label = "window / RTT" if sweep.rate_mib_s is None else "min(window / RTT, rate)"
        xs = tuple(x for x, _ in bound)
        ys = tuple(y for _, y in bound if y is not None)
        series.append(Series("dashed", xs, ys, label, BOUND_GREY))
    size = format_bytes(knee.knee.window_bytes)
    label = f"knee: {size}, the smallest window at >= {knee.fraction:.0%} of the best"
    at = ((float(knee.knee.window_bytes),), (knee.knee.median,))
    series.append(Series("points", *at, label, OKABE_ITO["black"], marker="*", size=16.0))
    return tuple(series)


def _knee_bounds(sweep: Sweep, top: float) -> tuple[Bound, ...]:
    fraction = sweep.knee.fraction
    line = f"{fraction:.0%} x the best ({top:.3g} MiB/s) = {fraction * top:.3g} MiB/s"
    bounds = [Bound(fraction * top, line, OKABE_ITO["green"], ":")]
    if sweep.rate_mib_s is not None:
        rate = f"link rate {sweep.rate_mib_s:.3g} MiB/s"
        bounds.append(Bound(sweep.rate_mib_s, rate, OKABE_ITO["vermillion"], ":"))
    return tuple(bounds)
