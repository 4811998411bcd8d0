"""Pure rendering of records as PNG figures (matplotlib, headless Agg): name -> PNG bytes.

Figures (each only when the records hold something for it):

- ``throughput-vs-window.png``: throughput against the static stream window, log-log, one
  panel per RTT, one colour per client; the window / RTT bound (and a link's rate bound,
  when a record has one) drawn as lines;
- ``window-growth.png``: how dynamic windows grew, one panel per client: the stream window
  the client announced and the connection credit it granted, over time (or by step for
  records without timestamps);
- ``stream-finish.png``: per-stream finish times of multi-stream cells;
- ``compare-N.png``: a comparison's sample of each round as dots, the baseline's median and
  noise band shaded.

The caller writes the bytes; nothing here touches the file system.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kit.analysis.series import (
    CompareSeries,
    Finish,
    Growth,
    WindowPoint,
    compare_series,
    finish_series,
    growth_series,
    window_points,
)
from kit.results.records import Measurement

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SIZE_IN = (9.0, 5.0)
DPI = 100  # 900 x 500 pixels
COLOURS = {"grpcio": "tab:blue", "h2": "tab:orange"}
MIB = 2**20


def render_plots(measurements: Sequence[Measurement]) -> dict[str, bytes]:
    """Every figure the records support, as PNG bytes by file name."""
    out: dict[str, bytes] = {}
    points = window_points(measurements)
    if points:
        out["throughput-vs-window.png"] = _png(_window_figure(points))
    growth = growth_series(measurements)
    if growth:
        out["window-growth.png"] = _png(_growth_figure(growth))
    finish = finish_series(measurements)
    if finish:
        out["stream-finish.png"] = _png(_finish_figure(finish))
    for index, series in enumerate(compare_series(measurements), start=1):
        out[f"compare-{index}.png"] = _png(_compare_figure(series))
    return out


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


def _figure(panels: int = 1) -> tuple[Figure, list[Axes]]:
    fig, axes = _pyplot().subplots(1, panels, figsize=SIZE_IN, squeeze=False, layout="constrained")
    return fig, list(axes[0])


# --- throughput vs window -------------------------------------------------------------------


def _window_figure(points: Sequence[WindowPoint]) -> Figure:
    rtts = sorted({p.rtt_ms for p in points})
    fig, axes = _figure(len(rtts))
    for ax, rtt in zip(axes, rtts, strict=True):
        mine = [p for p in points if p.rtt_ms == rtt]
        for client in sorted({p.client for p in mine}):
            theirs = sorted((p for p in mine if p.client == client), key=lambda p: p.window_bytes)
            xs = [p.window_bytes / 1024 for p in theirs]
            ax.plot(
                xs,
                [p.throughput_mib_s for p in theirs],
                "o",
                alpha=0.7,
                color=COLOURS.get(client),
                label=_plain(client),
            )
        _bounds(ax, mine, rtt)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title("loopback" if rtt == 0 else f"RTT {rtt:g} ms")
        ax.set_xlabel("stream window (KiB)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    axes[0].set_ylabel("throughput (MiB/s)")
    fig.suptitle("Throughput against the static window (lines: window / RTT, rate)")
    return fig


def _bounds(ax: Axes, points: Sequence[WindowPoint], rtt_ms: float) -> None:
    windows = sorted({p.window_bytes for p in points})
    if rtt_ms > 0 and windows:
        lo, hi = windows[0] / 1.5, windows[-1] * 1.5
        ax.plot(
            [lo / 1024, hi / 1024],
            [lo / MIB / (rtt_ms / 1000), hi / MIB / (rtt_ms / 1000)],
            "--",
            color="grey",
            label="window / RTT",
        )
    rates = sorted({p.rate_mib_s for p in points if p.rate_mib_s is not None})
    for rate in rates:
        ax.axhline(rate, color="tab:red", linestyle=":", label=f"rate {rate:.3g} MiB/s")


# --- window growth ----------------------------------------------------------------------------


def _growth_figure(series: Sequence[Growth]) -> Figure:
    clients = sorted({g.client for g in series})
    fig, axes = _figure(len(clients))
    for ax, client in zip(axes, clients, strict=True):
        mine = [g for g in series if g.client == client]
        for g in mine:
            line = ax.step(
                [x for x, _ in g.stream_window],
                [w / 1024 for _, w in g.stream_window],
                where="post",
                marker="o",
                markersize=3,
                label=_plain(f"{g.label}: stream"),
            )
            if g.conn_credit:
                ax.plot(
                    [x for x, _ in g.conn_credit],
                    [c / 1024 for _, c in g.conn_credit],
                    "--",
                    color=line[0].get_color(),
                    alpha=0.6,
                    label=_plain(f"{g.label}: conn credit"),
                )
        ax.set_yscale("log", base=2)
        timed = all(g.timed for g in mine)
        ax.set_xlabel("ms since the timed phase began" if timed else "SETTINGS frame (in order)")
        ax.set_title(_plain(f"{client} dynamic window"))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="x-small")
    axes[0].set_ylabel("window (KiB)")
    fig.suptitle("Dynamic window growth (stream window announced; connection credit granted)")
    return fig


# --- per-stream finish times --------------------------------------------------------------------


def _finish_figure(series: Sequence[Finish]) -> Figure:
    fig, axes = _figure()
    ax = axes[0]
    width = 0.8 / max(len(s.finish_ms) for s in series)
    for index, s in enumerate(series):
        for stream, ms in enumerate(s.finish_ms):
            ax.bar(index + stream * width, ms, width, color=f"C{stream % 10}")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(series))])
    ax.set_xticklabels([_plain(s.label) for s in series], fontsize="small")
    ax.set_yscale("log")
    ax.set_ylabel("finish time (ms, log)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.set_title("Per-stream finish times (one bar per stream, median round)")
    return fig


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


def plot_links(names: Sequence[str]) -> str:
    """Markdown that shows the figures written beside a document."""
    if not names:
        return ""
    lines = ["## Figures", ""]
    lines += [f"![{name.removesuffix('.png')}]({name})" for name in names]
    return "\n".join(lines) + "\n"
