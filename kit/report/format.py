"""Formatting shared by every report: numbers, windows, settings, warnings. Pure."""

from __future__ import annotations

import itertools
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tabulate import tabulate

from kit.analysis.cells import OTHER_LOAD_CORES, CellFlags, CpuLimit
from kit.analysis.stats import Summary
from kit.plan.trial import Trial
from kit.plan.units import format_bytes
from kit.plan.units import sig3 as sig3  # re-exported: reports take their numbers from here
from kit.results.records import FrameSummary


def fmt_mib_s(value: float | None) -> str:
    return "-" if value is None else sig3(value)


# A throughput unit: its name and MiB/s -> that unit (``--units``).
UNITS: dict[str, float] = {"MiB/s": 1.0, "MB/s": 2**20 / 1e6, "Mbit/s": 8 * 2**20 / 1e6}


def fmt_rate(value_mib_s: float | None, unit: str = "MiB/s") -> str:
    """A throughput in MiB/s shown in ``unit`` (three significant figures)."""
    return "-" if value_mib_s is None else sig3(value_mib_s * UNITS[unit])


def fmt_size(n_bytes: float) -> str:
    """The reports' sizes, in one unit family: binary units with a space, three figures
    (77.8 MiB, 256 KiB, 512 B; 4000000 B reads 3.81 MiB, never "4 MB" beside MiB). One
    formatter for every size a report prints."""
    return format_bytes(n_bytes, digits=None)


def fmt_window(window_bytes: int | None) -> str:
    return "-" if window_bytes is None else fmt_size(window_bytes)


def fmt_ms(value: float | None, digits: int = 2) -> str:
    """Milliseconds in three significant figures (``digits`` is kept for old callers)."""
    return "-" if value is None else sig3(value)


def fmt_range(summary: Summary | None, fmt: Callable[[float], str]) -> str:
    """'123.4 (120.1-125.0)', or the single value for one sample, or '-'."""
    if summary is None:
        return "-"
    if summary.n == 1:
        return fmt(summary.median)
    return f"{fmt(summary.median)} ({fmt(summary.min)}-{fmt(summary.max)})"


def cpu_warning(limit: CpuLimit | None) -> str:
    """Why a result may be CPU-bound rather than window-bound, or "" when nothing says so."""
    if limit is None:
        return ""
    if limit.processes:
        shares = ", ".join(f"{role} {fraction:.0%}" for role, fraction in limit.processes)
        return f"CPU-bound ({shares} of a core): this result is not window-bound"
    return (
        f"CPU-saturated machine ({limit.busy_cores:.2f} of {limit.cpus:.0f} cores busy, "
        f"{limit.other_cores:.2f} outside the measurement path): this result is not window-bound"
    )


# What each client's dynamic window is (as shipped; h2's is the kit's model of grpc-go).
DYNAMIC_LABELS = {
    "h2": "dynamic (grpc-go-style BDP)",
    "grpcio": "dynamic (C-core BDP)",
    "grpc-go": "dynamic (BDP estimator)",
    "grpc-java": "dynamic (Netty auto flow control)",
    "grpc-js": "dynamic (no estimator: 65535)",
    "tonic": "dynamic (hyper defaults: fixed 2 MiB)",
}


def mode_label(trial: Trial) -> str:
    mode = trial.client.window_mode
    if mode == "dynamic":
        return DYNAMIC_LABELS.get(trial.client.kind, "dynamic")
    if trial.client.is_model():
        return f"{mode} model"
    return mode


def pings_text(frames: FrameSummary, server: bool = False) -> str:
    """PINGs the client (or the server) sent; the client's say how many were the kit's own
    RTT probes (the kit probes from the client only)."""
    if server:
        return str(frames.server.pings_sent)
    sent, probes = frames.client.pings_sent, frames.rtt_probe_pings
    return f"{sent} ({probes} kit RTT probes)" if probes else str(sent)


# Settings outside RFC 9113 that stacks send, by the id the frame tap records them under.
EXTENSION_SETTINGS = {
    "0xfe03": "GRPC_ALLOW_TRUE_BINARY_METADATA",
    "0xfe04": "GRPC_PREFERRED_RECEIVE_MESSAGE_SIZE",
}
# The settings that bound a download's windows and frames: shown first, the rest on --verbose.
WINDOW_SETTINGS = ("INITIAL_WINDOW_SIZE", "MAX_FRAME_SIZE")


def setting_name(key: str) -> str:
    return EXTENSION_SETTINGS.get(key, key)


def settings_text(settings: dict[str, int], verbose: bool = True) -> str:
    """Every setting (``verbose``), or the window-related ones and a count of the others."""
    named = {setting_name(k): v for k, v in settings.items()}
    if verbose:
        return " ".join(f"{k}={v}" for k, v in named.items()) or "(empty)"
    shown = [f"{k}={v}" for k, v in named.items() if k in WINDOW_SETTINGS]
    hidden = len(named) - len(shown)
    if hidden:
        shown.append(f"(+{hidden} more, --verbose)")
    return " ".join(shown) or "(empty)"


def short_error(error: str, limit: int = 80) -> str:
    text = " ".join((error or "unknown error").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def flags_text(flags: CellFlags) -> str:
    """The notes column: control, CPU-bound rounds, machine load, spread > 10%, failures."""
    out = ["control (2 copies per round)"] if flags.control else []
    if flags.cpu_bound:
        shares = ", ".join(f"{role} {n}/{flags.ok_runs}" for role, n in flags.cpu_bound)
        out.append(f"CPU-bound: {shares}")
    if flags.saturated:
        out.append(f"CPU-saturated machine {flags.saturated}/{flags.ok_runs}")
    if flags.other_load:
        out.append(f"other work >= {OTHER_LOAD_CORES:g} core {flags.other_load}/{flags.ok_runs}")
    if flags.spread_pct is not None:
        out.append(f"spread {sig3(flags.spread_pct)}%")
    if flags.failed:
        out.append(f"failed {flags.failed}/{flags.runs}: {short_error(flags.first_error)}")
    return "; ".join(out)


def markdown_table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    """A GitHub-markdown table of text cells; cells are never read as numbers (``1.0`` and
    ``0.950`` stay as they were formatted)."""
    return tabulate(rows, headers=list(headers), tablefmt="github", disable_numparse=True)


# --- a table laid out from its widths, printed a row at a time ---------------------------------


@dataclass
class ColumnWidths:
    """The widest cell of each column, measured one row at a time (``measure``): a table too
    long to hold (a records file's runs) is laid out from these, then printed a row at a
    time (``StreamTable``), in memory bounded by its columns, not its rows."""

    head: tuple[str, ...]
    widest: list[int]

    @classmethod
    def of(cls, head: Sequence[str]) -> ColumnWidths:
        return cls(tuple(head), [len(h) for h in head])

    def measure(self, row: Sequence[str]) -> None:
        for i, cell in enumerate(row):
            self.widest[i] = max(self.widest[i], len(cell))

    def layout(
        self, caps: Sequence[int], width: int = 100, right: Sequence[int] = ()
    ) -> StreamTable:
        """Columns as wide as their widest cell, at most their cap; the widest shrink (never
        below 6) until a line fits ``width``."""
        cols = [min(w, c) for w, c in zip(self.widest, caps, strict=True)]
        for _ in range(4 * len(cols) * width):  # bounded: each pass narrows a column
            excess = sum(cols) + 2 * (len(cols) - 1) - width
            widest = max(range(len(cols)), key=lambda i: cols[i])
            if excess <= 0 or cols[widest] <= 6:
                break
            cols[widest] = max(6, cols[widest] - excess)
        return StreamTable(self.head, tuple(cols), frozenset(right))


@dataclass(frozen=True)
class StreamTable:
    """A ``simple`` table (a header, a dashed rule, rows; two spaces between columns) of
    fixed column widths: a cell wider than its column wraps onto the next lines."""

    head: tuple[str, ...]
    widths: tuple[int, ...]
    right: frozenset[int] = frozenset()

    def header(self) -> str:
        rule = tuple("-" * w for w in self.widths)
        return self.row(self.head) + "\n" + self._line(rule)

    def row(self, cells: Sequence[str]) -> str:
        wrapped = [textwrap.wrap(c, w) or [""] for c, w in zip(cells, self.widths, strict=True)]
        lines = itertools.zip_longest(*wrapped, fillvalue="")
        return "\n".join(self._line(line) for line in lines)

    def _line(self, cells: Sequence[str]) -> str:
        padded = (
            c.rjust(w) if i in self.right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, self.widths, strict=True))
        )
        return "  ".join(padded).rstrip()


# --- tables whose rows never wrap --------------------------------------------------------------

ELLIPSIS = "…"
MIN_NAME_WIDTH = 12


def keyed_names(names: Sequence[str], width: int) -> tuple[list[str], list[str]]:
    """Names as a column ``width`` wide: a name that fits as it is; a longer one cut with
    "…" and numbered ``[n]``, its whole name in a legend line ``[n] name`` under the table."""
    shown: list[str] = []
    legend: list[str] = []
    for name in names:
        if len(name) <= width:
            shown.append(name)
            continue
        tag = f"[{len(legend) + 1}]"
        shown.append(name[: max(1, width - len(tag) - 2)] + ELLIPSIS + " " + tag)
        legend.append(f"{tag} {name}")
    return shown, legend


def one_line_table(
    rows: Sequence[Sequence[str]], head: Sequence[str], width: int = 100, name_col: int = 0
) -> tuple[str, list[str], list[str]]:
    """A ``simple`` table whose every row is one line within ``width``: the other columns
    as wide as their cells, the names' column (``name_col``) what is left (at least
    ``MIN_NAME_WIDTH``), a name too long for it cut and keyed (``keyed_names``). Returns the
    table, the legend of the cut names (empty when every name fits) and the names shown."""
    widths = ColumnWidths.of(head)
    for row in rows:
        widths.measure(row)
    others = sum(w for i, w in enumerate(widths.widest) if i != name_col)
    room = max(MIN_NAME_WIDTH, width - others - 2 * (len(head) - 1))
    names, legend = keyed_names([row[name_col] for row in rows], room)
    widths.widest[name_col] = max(len(head[name_col]), *(len(n) for n in names))
    table = StreamTable(widths.head, tuple(widths.widest))
    lines = [table.header()]
    for row, name in zip(rows, names, strict=True):
        lines.append(table.row([*row[:name_col], name, *row[name_col + 1 :]]))
    return "\n".join(lines), legend, names


def short_verdict(verdict: str, reason: bool = True) -> str:
    """A verdict for a table cell: the noise floor (printed under the table) left out, and
    with ``reason=False`` why a change is within noise too."""
    text = re.sub(r" \(±[\d.]+% floor\)", "", verdict)  # "-6.1% slower (±2.0% floor)"
    text = re.sub(r"; ±[\d.]+% floor\)", ")", text)  # "within noise (rounds overlap; ±...)"
    if not reason:
        text = re.sub(r"(within noise) \([^)]*\)$", r"\1", text)
    return text
