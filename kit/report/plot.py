"""Pure rendering of records as PNG figures (matplotlib, headless Agg): name -> PNG bytes.

Figures (each only when the records hold something for it):

- ``throughput-vs-window.png``: throughput against the static stream window, log-log, one
  panel per RTT, one colour per client; the window / RTT bound (and a link's rate bound,
  when a record has one) drawn as lines;
- ``window-growth.png``: how dynamic windows grew, one panel per client: the stream window
  the client announced and the connection credit it granted, over time (or by step for
  records without timestamps);
- ``stream-finish.png``: per-stream finish times of multi-stream cells;
- ``throughput-over-time.png``: delivered MiB/s per interval of the first few runs with a
  delivery trace, one panel each, the link rate and window / RTT drawn as lines;
- ``estimators.png``: the estimator and policies tables as grouped bars: final window / BDP
  and time to 90% of the rate, per estimator (x) and link (bars);
- ``compare-N.png``: a comparison's sample of each round as dots, the baseline's median and
  noise band shaded.

The caller writes the bytes; nothing here touches the file system.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kit.analysis.series import (
    CompareSeries,
    EstimatorBar,
    Finish,
    Growth,
    PlotData,
    Throughput,
    WindowPoint,
)
from kit.plan.units import format_bytes
from kit.results.records import Measurement

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SIZE_IN = (9.0, 5.0)
DPI = 100  # 900 x 500 pixels
COLOURS = {"grpcio": "tab:blue", "h2": "tab:orange"}
MIB = 2**20


def render_plots(measurements: Iterable[Measurement]) -> dict[str, bytes]:
    """Every figure the records support, as PNG bytes by file name. The records are
    aggregated as they come (``PlotData``): an iterator of any length is fine."""
    data = PlotData()
    data.add_all(measurements)
    return render_data(data)


def render_data(data: PlotData) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    points = data.window_points()
    if points:
        out["throughput-vs-window.png"] = _png(_window_figure(points))
    growth = data.growth_series()
    if growth:
        out["window-growth.png"] = _png(_growth_figure(growth))
    finish = data.finish_series()
    if finish:
        out["stream-finish.png"] = _png(_finish_figure(finish))
    throughput = data.throughput_series()
    if throughput:
        out["throughput-over-time.png"] = _png(_throughput_figure(throughput, data.throughput_runs))
    estimators = data.estimator_bars()
    if estimators:
        out["estimators.png"] = _png(_estimator_figure(estimators))
    for index, series in enumerate(data.compare_series(), start=1):
        out[f"compare-{index}.png"] = _png(_compare_figure(series))
    return out


def size_tick(value: float, _pos: object = None) -> str:
    """A tick in bytes as a size a person reads: 64 KiB, 1 MiB, 4 MiB (no 2^10)."""
    return format_bytes(round(value)) if value >= 1 else ""


def rate_tick(value: float, _pos: object = None) -> str:
    """A tick in MiB/s as a plain number: 0.5, 10, 100 (no 9x10^1)."""
    return f"{value:g}"


def _readable_log_axes(ax: Axes, x_bytes: bool) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if x_bytes:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(size_tick))
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(rate_tick))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _pyplot() -> Any:
    """matplotlib, headless (Agg: no display is needed or looked for). Imported on first use:
    it costs every other command ~0.5 s to start."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


def _plain(text: str) -> str:
    """A name from users or records as plain text: a "$" would start mathtext (a parse
    error, or the name drawn as a formula). Mathtext stays on for the log axes' ticks."""
    return text.replace("$", r"\$")


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        # A name in a script the font lacks (CJK, emoji) is drawn as boxes, not a warning
        # per glyph on the user's terminal.
        warnings.filterwarnings(
            "ignore", message=r"Glyph \d+ .* missing from", category=UserWarning
        )
        fig.savefig(buffer, format="png", dpi=DPI)
    _pyplot().close(fig)
    return buffer.getvalue()


def _figure(
    panels: int = 1, sharey: bool = False, size: tuple[float, float] = SIZE_IN
) -> tuple[Figure, list[Axes]]:
    """Panels in rows of at most three, so many panels stay readable."""
    cols = min(panels, 3)
    rows = (panels + cols - 1) // cols
    fig, axes = _pyplot().subplots(
        rows,
        cols,
        figsize=(size[0], size[1] * max(1.0, rows * 0.8)),
        squeeze=False,
        sharey=sharey,
        layout="constrained",
    )
    flat = [ax for row in axes for ax in row]
    for spare in flat[panels:]:
        spare.set_visible(False)
    return fig, flat[:panels]


# --- throughput vs window -------------------------------------------------------------------


def window_panels(points: Sequence[WindowPoint]) -> list[tuple[str, float]]:
    """One panel per study and RTT: a window table's cells never share a panel with
    another study's."""
    return sorted({(p.study, p.rtt_ms) for p in points})


def _window_figure(points: Sequence[WindowPoint]) -> Figure:
    panels = window_panels(points)
    fig, axes = _figure(len(panels), sharey=True)
    for ax, (study, rtt) in zip(axes, panels, strict=True):
        mine = [p for p in points if p.study == study and p.rtt_ms == rtt]
        for client in sorted({p.client for p in mine}):
            theirs = sorted((p for p in mine if p.client == client), key=lambda p: p.window_bytes)
            ax.plot(
                [p.window_bytes for p in theirs],
                [p.throughput_mib_s for p in theirs],
                "o",
                alpha=0.7,
                color=COLOURS.get(client),
                label=_plain(client),
            )
        _bounds(ax, mine, rtt)
        _readable_log_axes(ax, x_bytes=True)
        where = "loopback" if rtt == 0 else f"RTT {rtt:g} ms"
        ax.set_title(f"{study}: {where}", fontsize="medium")
        ax.set_xlabel("stream window")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    axes[0].set_ylabel("throughput (MiB/s)")
    lines = "window / RTT" + (", link rate" if any(p.rate_mib_s for p in points) else "")
    fig.suptitle(f"Throughput against the static window (median run; lines: {lines})")
    return fig


def _bounds(ax: Axes, points: Sequence[WindowPoint], rtt_ms: float) -> None:
    windows = sorted({p.window_bytes for p in points})
    if rtt_ms > 0 and windows:
        lo, hi = windows[0] / 1.5, windows[-1] * 1.5
        ax.plot(
            [lo, hi],
            [lo / MIB / (rtt_ms / 1000), hi / MIB / (rtt_ms / 1000)],
            "--",
            color="grey",
            label="window / RTT",
        )
    rates = sorted({p.rate_mib_s for p in points if p.rate_mib_s is not None})
    for rate in rates:
        ax.axhline(rate, color="tab:red", linestyle=":", label=f"link rate {rate:.3g} MiB/s")


# --- window growth ----------------------------------------------------------------------------


MAX_GROWTH_LINES = 8  # a legend beyond this overflows a panel


def growth_title(client: str, mode: str) -> str:
    """A pool run is a pool (one budget shared by the streams), not a dynamic window."""
    return {
        "pool": f"{client} window pool",
        "bdp-off": f"{client} dynamic window, BDP probing off",
    }.get(mode, f"{client} dynamic window")


def growth_panels(series: Sequence[Growth]) -> list[tuple[str, str]]:
    return sorted({(g.client, g.mode) for g in series})


def _growth_figure(series: Sequence[Growth]) -> Figure:
    panels = growth_panels(series)
    fig, axes = _figure(len(panels), sharey=True)
    for ax, (client, mode) in zip(axes, panels, strict=True):
        mine = [g for g in series if g.client == client and g.mode == mode]
        for g in mine[:MAX_GROWTH_LINES]:
            _growth_lines(ax, g)
        ax.set_yscale("log", base=2)
        from matplotlib.ticker import FuncFormatter

        ax.yaxis.set_major_formatter(FuncFormatter(size_tick))
        timed = all(g.timed for g in mine)
        ax.set_xlabel("ms since the timed phase began" if timed else "SETTINGS frame (in order)")
        shown = (
            "" if len(mine) <= MAX_GROWTH_LINES else f" (first {MAX_GROWTH_LINES} of {len(mine)})"
        )
        ax.set_title(_plain(growth_title(client, mode) + shown), fontsize="medium")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="x-small")
    axes[0].set_ylabel("window")
    fig.suptitle(
        "Window growth, one line per run (solid: stream window announced; "
        "dashed: connection credit granted)"
    )
    return fig


def _growth_lines(ax: Axes, g: Growth) -> None:
    line = ax.step(
        [x for x, _ in g.stream_window],
        [w for _, w in g.stream_window],
        where="post",
        marker="o",
        markersize=3,
        label=_plain(g.label),
    )
    if g.conn_credit:
        ax.plot(
            [x for x, _ in g.conn_credit],
            [c for _, c in g.conn_credit],
            "--",
            color=line[0].get_color(),
            alpha=0.6,
        )


# --- per-stream finish times --------------------------------------------------------------------


SLOW, FULL = "tab:red", "tab:blue"


def _finish_figure(series: Sequence[Finish]) -> Figure:
    """Horizontal bars, one row per stream, grouped by cell: a linear axis from 0, so a
    0.3 ms spread looks like 0.3 ms; names stay readable however many cells there are."""
    rows = sum(len(s.finish_ms) for s in series) + len(series)
    fig, axes = _figure(size=(SIZE_IN[0], min(12.0, max(SIZE_IN[1], 1.5 + 0.22 * rows))))
    ax = axes[0]
    y, ticks, names = 0.0, [], []
    for s in series:
        for stream, ms in enumerate(s.finish_ms):
            ax.barh(y, ms, 0.8, color=SLOW if stream < s.slow else FULL)
            y += 1
        ticks.append(y - (len(s.finish_ms) + 1) / 2)
        names.append(_plain(s.label))
        y += 1
    ax.set_yticks(ticks)
    ax.set_yticklabels(names, fontsize="small")
    ax.invert_yaxis()
    ax.set_xlim(left=0)
    ax.set_xlabel("finish time (ms since the timed phase began)")
    ax.grid(True, axis="x", alpha=0.3)
    _finish_legend(ax, any(s.slow for s in series))
    ax.set_title("Per-stream finish times (one bar per stream, median run of each cell)")
    return fig


def _finish_legend(ax: Axes, any_slow: bool) -> None:
    from matplotlib.patches import Patch

    handles = [Patch(color=FULL, label="stream read at full speed")]
    if any_slow:
        handles.append(Patch(color=SLOW, label="slow stream (paced reader)"))
    ax.legend(handles=handles, fontsize="small", loc="lower right")


# --- comparisons ---------------------------------------------------------------------------------


def _compare_figure(series: CompareSeries) -> Figure:
    fig, axes = _figure()
    ax = axes[0]
    if series.baseline_median is not None and series.floor_pct is not None:
        band = series.baseline_median * series.floor_pct / 100
        ax.axhspan(
            series.baseline_median - band,
            series.baseline_median + band,
            color="grey",
            alpha=0.2,
            label=f"baseline ± noise floor {series.floor_pct:.3g}%",
        )
    if series.baseline_median is not None:
        ax.axhline(series.baseline_median, color="grey", linewidth=1)
    rounds = sorted({r for _, r, _ in series.samples})
    for r in rounds:
        xs = [series.keys.index(k) for k, rr, _ in series.samples if rr == r]
        ys = [v for _, rr, v in series.samples if rr == r]
        ax.plot(
            [x + 0.05 * (r - len(rounds) / 2) for x in xs],
            ys,
            "o",
            color=f"C{r % 10}",
            label=f"round {r + 1}",
        )
    ax.set_xticks(range(len(series.keys)))
    ax.set_xticklabels([_plain(k) for k in series.keys], fontsize="small", rotation=15)
    ax.set_ylabel(_plain(series.unit))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="x-small")
    ax.set_title(_plain(series.title), fontsize="medium")
    return fig


# --- throughput over time -------------------------------------------------------------------


def throughput_title(shown: int, runs: int) -> str:
    more = f" (first {shown} of {runs} runs)" if runs > shown else ""
    return f"Throughput over time, one panel per run{more}"


def _throughput_figure(series: Sequence[Throughput], runs: int) -> Figure:
    """Delivered MiB/s per interval, a linear axis from 0: the ramp and any stall show as
    they happened. The rate and window / RTT bounds are lines; a bound far above the rate
    (a window much larger than the path needs) is named in the title, not drawn off-scale."""
    fig, axes = _figure(len(series))
    for ax, s in zip(axes, series, strict=True):
        xs = [t for t, _ in s.points]
        ys = [v for _, v in s.points]
        ax.step(xs, ys, where="post", color="tab:blue", label="delivered")
        top = max([*ys, s.rate_mib_s or 0.0]) * 1.25 or 1.0
        if s.rate_mib_s:
            ax.axhline(s.rate_mib_s, color="tab:red", linestyle=":", label="link rate")
        name = "window / RTT" if s.window_static else "final window / RTT"
        title = _plain(s.label)
        if s.window_rtt_mib_s and s.window_rtt_mib_s <= top:
            ax.axhline(s.window_rtt_mib_s, color="grey", linestyle="--", label=name)
        elif s.window_rtt_mib_s:
            title += f"\n{name} {s.window_rtt_mib_s:.0f} MiB/s (off scale)"
        ax.set_ylim(0, top)
        ax.set_xlim(left=0)
        ax.set_title(f"{title}\n{s.interval_ms:g} ms intervals", fontsize="small")
        ax.set_xlabel("ms since the timed phase began", fontsize="small")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="x-small", loc="lower right")
    for ax in axes[:: min(len(axes), 3)]:
        ax.set_ylabel("MiB/s")
    fig.suptitle(throughput_title(len(series), runs))
    return fig


# --- the estimator table ----------------------------------------------------------------------


def estimator_studies(bars: Sequence[EstimatorBar]) -> list[str]:
    return sorted({b.study for b in bars})


def _estimator_figure(bars: Sequence[EstimatorBar]) -> Figure:
    """Per study two panels, one above the other (900 pixels wide, as every figure): final
    window / BDP (log: 0.06 to 67 on one axis) and time to 90% of the rate; estimators along x, one bar per link: a few legend
    entries, however many estimators."""
    studies = estimator_studies(bars)
    fig: Figure
    fig, grid = _pyplot().subplots(
        2 * len(studies),
        1,
        figsize=(SIZE_IN[0], SIZE_IN[1] * 0.8 * 2 * len(studies)),
        squeeze=False,
        layout="constrained",
    )
    for i, study in enumerate(studies):
        mine = [b for b in bars if b.study == study]
        _estimator_row(grid[2 * i][0], grid[2 * i + 1][0], study, mine)
    fig.suptitle("Estimators against the link: how large the window grew, how fast it got there")
    return fig


def _estimator_row(windows: Axes, ramps: Axes, study: str, bars: Sequence[EstimatorBar]) -> None:
    from matplotlib.ticker import FuncFormatter

    _grouped(windows, bars, lambda b: b.window_over_bdp)
    windows.set_yscale("log")
    windows.yaxis.set_major_formatter(FuncFormatter(rate_tick))
    windows.axhline(1.0, color="grey", linewidth=1, label="window = BDP")
    windows.set_ylabel("final window / BDP")
    windows.set_title(f"{study}: final window / BDP", fontsize="medium")
    _grouped(ramps, bars, lambda b: b.ramp_90_ms)
    ramps.set_ylabel("ms")
    ramps.set_title(f"{study}: time to 90% of the rate (none: never)", fontsize="medium")
    for ax in (windows, ramps):
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _grouped(ax: Axes, bars: Sequence[EstimatorBar], value: Any) -> None:
    estimators = sorted({b.estimator for b in bars})
    links = sorted({b.link for b in bars}, key=_link_order)
    width = 0.8 / len(links)
    for i, link in enumerate(links):
        found = {b.estimator: value(b) for b in bars if b.link == link}
        xs = [e + (i - (len(links) - 1) / 2) * width for e in range(len(estimators))]
        ys = [found.get(name) or 0.0 for name in estimators]
        ax.bar(xs, ys, width, color=f"C{i}", label=_plain(link))
    ax.set_xticks(range(len(estimators)))
    ax.set_xticklabels([_plain(e) for e in estimators], fontsize="small", rotation=30, ha="right")
    ax.grid(True, axis="y", which="both", alpha=0.3)


def _link_order(link: str) -> tuple[float, float, str]:
    """Links by rate (100 Mbit before 1 Gbit), then RTT, then name ("100Mbit-20ms, 4 streams")."""
    found = re.match(r"([\d.]+)([GM])bit-([\d.]+)ms", link)
    if found is None:
        return 0.0, 0.0, link
    scale = 1e9 if found[2] == "G" else 1e6
    return float(found[1]) * scale, float(found[3]), link


def plot_links(names: Sequence[str]) -> str:
    """Markdown that shows the figures written beside a document."""
    if not names:
        return ""
    lines = ["## Figures", ""]
    lines += [f"![{name.removesuffix('.png')}]({name})" for name in names]
    return "\n".join(lines) + "\n"
