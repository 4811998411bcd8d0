"""Pure rendering of records as PNG figures (matplotlib, headless Agg): name -> PNG bytes.

What each figure shows is decided by ``kit.report.figures`` (frozen descriptions: panels,
series, axes, bounds, legend entries); this module only draws a description.

Figures (each only when the records hold something for it):

- ``throughput-vs-window.png``: throughput against the window in flight (streams x stream
  window, or the connection window when smaller), log-log, one panel per RTT, each stack
  its own colour and marker; the window / RTT bound (and a link's rate bound, when a record
  has one) drawn as lines;
- ``window-growth.png``: how dynamic windows grew, one panel per client: the stream window
  the client announced and the connection credit it granted, over time (or by step for
  records without timestamps);
- ``stream-finish.png``: per-stream finish times of multi-stream fixed-size cells;
- ``throughput-over-time.png``: delivered MiB/s per interval of the first few runs with a
  delivery trace, one panel each, the link rate and window / RTT drawn as lines;
- ``estimators.png``: the estimator and policies tables as grouped bars: final window / BDP
  and time to 90% of the rate, per estimator (x) and link (bars);
- ``compare-N.png``: a comparison's sample of each round as dots, the baseline's median and
  noise band shaded;
- ``knee-*.png``: a window sweep (``kit knee``): throughput against the window set, in
  window order on a log axis, the window / RTT and rate bounds, the 90 % of the best line
  and the knee (the smallest window reaching it) marked.

The caller writes the bytes; nothing here touches the file system.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kit.analysis.series import PlotData
from kit.plan.units import format_bytes
from kit.report.figures import Axis, Bound, FigureSpec, Panel, Series, describe
from kit.results.records import Measurement

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SIZE_IN = (9.0, 5.0)
DPI = 100  # 900 x 500 pixels


def render_plots(measurements: Iterable[Measurement]) -> dict[str, bytes]:
    """Every figure the records support, as PNG bytes by file name. The records are
    aggregated as they come (``PlotData``): an iterator of any length is fine."""
    data = PlotData()
    data.add_all(measurements)
    return render_data(data)


def render_data(data: PlotData) -> dict[str, bytes]:
    return {spec.name: _png(draw(spec)) for spec in describe(data)}


def size_tick(value: float, _pos: object = None) -> str:
    """A tick in bytes as a size a person reads: 64 KiB, 1 MiB, 4 MiB (no 2^10)."""
    return format_bytes(round(value)) if value >= 1 else ""


def rate_tick(value: float, _pos: object = None) -> str:
    """A tick in MiB/s as a plain number: 0.5, 10, 100 (no 9x10^1)."""
    return f"{value:g}"


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


# --- drawing a description ------------------------------------------------------------------


def draw(spec: FigureSpec) -> Figure:
    """The matplotlib figure of a description: its panels in rows of ``spec.columns``."""
    panels = len(spec.panels)
    cols = min(panels, spec.columns)
    rows = (panels + cols - 1) // cols
    height = spec.height_in * (rows if cols == 1 and rows > 1 else max(1.0, rows * 0.8))
    fig: Figure
    fig, grid = _pyplot().subplots(
        rows,
        cols,
        figsize=(SIZE_IN[0], height),
        squeeze=False,
        sharey=spec.sharey,
        layout="constrained",
    )
    flat = [ax for row in grid for ax in row]
    for spare in flat[panels:]:
        spare.set_visible(False)
    for ax, panel in zip(flat, spec.panels, strict=False):
        _draw_panel(ax, panel)
    if spec.title:
        fig.suptitle(_plain(spec.title))
    return fig


def _draw_panel(ax: Axes, panel: Panel) -> None:
    handles: dict[str, Any] = {}
    for s in panel.series:
        artist = _draw_series(ax, s)
        if s.label:
            handles[s.label] = artist
    for b in panel.bounds:
        artist = _draw_bound(ax, b)
        if b.label:
            handles[b.label] = artist
    _axis(ax, panel.x, "x")
    _axis(ax, panel.y, "y")
    size = "small" if panel.small else "medium"
    ax.set_title(_plain(panel.title), fontsize=size)
    ax.grid(True, axis=panel.grid, which="both", alpha=0.3)
    _legend(ax, panel, handles)


def _draw_series(ax: Axes, s: Series) -> Any:
    label = _plain(s.label) if s.label else None
    xs, ys = list(s.xs), list(s.ys)
    if s.mark == "points":
        face = "none" if s.hollow else s.colour
        return ax.plot(
            xs,
            ys,
            linestyle="none",
            marker=s.marker,
            markersize=s.size,
            color=s.colour,
            markerfacecolor=face,
            markeredgewidth=1.5 if s.hollow else 1.0,
            alpha=s.alpha,
            label=label,
        )[0]
    if s.mark in ("line", "dashed"):
        style = "--" if s.mark == "dashed" else "-"
        marker = s.marker if s.markers else ""
        return ax.plot(xs, ys, style, marker=marker, color=s.colour, alpha=s.alpha, label=label)[0]
    if s.mark == "step":
        marker, size = ("o", 3.0) if s.markers else ("", 0.0)
        return ax.step(
            xs, ys, where="post", color=s.colour, label=label, marker=marker, markersize=size
        )[0]
    if s.mark == "bar":
        return ax.bar(xs, ys, s.width, color=s.colour, label=label)
    return ax.barh(ys, xs, s.width, color=s.colour, label=label)


def _draw_bound(ax: Axes, b: Bound) -> Any:
    label = _plain(b.label) if b.label else None
    if b.band is not None:
        ax.axhline(b.value, color=b.colour, linewidth=1)
        return ax.axhspan(b.band[0], b.band[1], color=b.colour, alpha=0.2, label=label)
    width = 1 if b.style == "-" else None
    return ax.axhline(b.value, color=b.colour, linestyle=b.style, linewidth=width, label=label)


def _axis(ax: Axes, axis: Axis, which: str) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    part = ax.xaxis if which == "x" else ax.yaxis
    scale = getattr(ax, f"set_{which}scale")
    if axis.scale == "log2":
        scale("log", base=2)
    elif axis.scale == "log10":
        scale("log")
    if axis.ticks == "size":
        part.set_major_formatter(FuncFormatter(size_tick))
    elif axis.ticks == "rate":
        if axis.scale == "log10":
            part.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            part.set_minor_formatter(NullFormatter())
        part.set_major_formatter(FuncFormatter(rate_tick))
    if axis.categories:
        getattr(ax, f"set_{which}ticks")([p for p, _ in axis.categories])
        names = [_plain(n) for _, n in axis.categories]
        align = {"ha": "right"} if axis.rotation >= 30 else {}
        getattr(ax, f"set_{which}ticklabels")(
            names, fontsize="small", rotation=axis.rotation, **align
        )
    if axis.inverted:
        part.set_inverted(True)
    if axis.lower is not None or axis.upper is not None:
        getattr(ax, f"set_{which}lim")(axis.lower, axis.upper)
    if axis.label:
        getattr(ax, f"set_{which}label")(_plain(axis.label))


def _legend(ax: Axes, panel: Panel, handles: dict[str, Any]) -> None:
    from matplotlib.patches import Patch

    for swatch in panel.swatches:
        handles[swatch.label] = Patch(color=swatch.colour, label=_plain(swatch.label))
    entries = [handles[label] for label in panel.legend if label in handles]
    if not entries:
        return
    names = [_plain(label) for label in panel.legend if label in handles]
    if panel.legend_outside:
        ax.legend(entries, names, fontsize="x-small", loc="upper left", bbox_to_anchor=(1, 1))
    else:
        ax.legend(entries, names, fontsize="x-small" if panel.small else "small")


def plot_links(names: Sequence[str]) -> str:
    """Markdown that shows the figures written beside a document."""
    if not names:
        return ""
    lines = ["## Figures", ""]
    lines += [f"![{name.removesuffix('.png')}]({name})" for name in names]
    return "\n".join(lines) + "\n"
