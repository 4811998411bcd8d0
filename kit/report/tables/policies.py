"""Pure rendering: table 9, the receive-window policies side by side
(``kit.analysis.tables.policies``)."""

from __future__ import annotations

from dataclasses import dataclass

from kit.analysis.cells import CampaignView, CellView, throughput
from kit.analysis.tables.policies import (
    ModelRatio,
    committed_bytes,
    links_view,
    model_ratios,
    sharing_rows,
    sharing_view,
)
from kit.analysis.tables.sharing import SharingRow
from kit.analysis.tables.stacks import stack_version
from kit.plan.tables.policies import (
    POLICY_LINK_CASES,
    POLICY_NAMES,
    QUIC_POLICIES,
    REAL_NAMES,
    STATIC_WINDOW,
    STREAM_COUNTS,
    link_key,
    real_key,
)
from kit.plan.tables.sharing import SHARING_READ_RATE_BITS_S, SHARING_RTT_MS
from kit.plan.trial import bdp_bytes
from kit.plan.units import format_rate
from kit.report.format import fmt_size, markdown_table, short_error
from kit.report.tables.cells import floor_line
from kit.report.tables.links import estimator_columns, metric_range
from kit.report.tables.sharing import SHARING_HEADERS, sharing_row

OWN_POLICIES = ("pool", "static")  # the kit's own, not a model of a stack


@dataclass(frozen=True)
class PoliciesViews:
    """Table 9's two campaigns (either may be missing)."""

    links: CampaignView | None
    sharing: CampaignView | None


def policies_views(views: dict[str, CampaignView]) -> PoliciesViews | None:
    found = PoliciesViews(links_view(views), sharing_view(views))
    return found if found.links or found.sharing else None


def policy_text(name: str) -> str:
    """``hyper (model)``, ``quic-go (model, QUIC's rules on HTTP/2)``, ``static 64 KiB``."""
    if name == "static":
        return f"static {fmt_size(STATIC_WINDOW)}"
    if name == "pool":
        return "pool (the kit's)"
    quic = ", QUIC's rules on HTTP/2" if name in QUIC_POLICIES else ""
    return f"{name} (model{quic})"


# --- part A ----------------------------------------------------------------------------------

LINKS_HEADERS = (
    "streams",
    "policy",
    "steady / rate",
    "Mbit/s (whole phase)",
    "final window / BDP",
    "to 90%: ms",
    "RTTs",
    "bytes",
    "PINGs",
    "peak queue",
    "peak committed",
    "notes",
)


def _notes(cell: CellView) -> str:
    flags = estimator_columns(cell)[-1]
    if cell.ok or not cell.failed:
        return flags
    return short_error(cell.failed[0].error) or flags


def _row(cell: CellView, who: str, streams: int) -> list[str]:
    columns = estimator_columns(cell)[:-1]
    committed = metric_range(cell, committed_bytes, fmt_size)
    return [str(streams), who, *columns, committed, _notes(cell)]


def _link_title(view: CampaignView, case_name: str) -> str | None:
    for cell in view.cells:
        if cell.key.startswith(case_name + "-"):
            link = cell.trial.link
            rate = link.rate_down_bits_s
            rate_text = "unlimited" if rate is None else format_rate(rate)
            bdp = fmt_size(bdp_bytes(cell.trial) or 0)
            return f"#### {rate_text} x {link.rtt_ms:g} ms (BDP {bdp}), cold"
    return None


def _link_rows(view: CampaignView, case_name: str) -> list[list[str]]:
    case = next(c for c in POLICY_LINK_CASES if c.name == case_name)
    rows = []
    for streams in STREAM_COUNTS:
        for name in POLICY_NAMES:
            if (cell := view.cell(link_key(case, streams, name))) is not None:
                rows.append(_row(cell, policy_text(name), streams))
        for stack in REAL_NAMES:
            if (cell := view.cell(real_key(case, streams, stack))) is not None:
                rows.append(_row(cell, f"{stack_version(cell)} (real)", streams))
    return rows


def _ratio_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _ratio_row(r: ModelRatio) -> list[str]:
    return [
        f"{r.model} model / real {r.stack}",
        r.link,
        str(r.streams),
        _ratio_text(r.throughput),
        _ratio_text(r.delivered),
        _ratio_text(r.final_window),
        _ratio_text(r.ramp),
    ]


def _render_links(view: CampaignView) -> list[str]:
    parts = []
    for case in POLICY_LINK_CASES:
        title = _link_title(view, case.name)
        if title is not None:
            parts += [title, markdown_table(_link_rows(view, case.name), LINKS_HEADERS)]
    headers = (
        "model / real stack",
        "link",
        "streams",
        "throughput",
        "delivered",
        "final window",
        "to 90%",
    )
    ratios = [_ratio_row(r) for r in model_ratios(view)]
    return [
        *parts,
        floor_line(view, throughput),
        "**The models beside the real stacks** (medians; > 1: the model moved more, grew "
        "larger or took longer):\n\n" + markdown_table(ratios, headers),
    ]


# --- part B ----------------------------------------------------------------------------------


def _render_sharing(view: CampaignView) -> list[str]:
    rows = [
        sharing_row(SharingRow(r.key, policy_text(r.key), r.beside_slow, r.beside_fast))
        for r in sharing_rows(view)
    ]
    return [markdown_table(rows, SHARING_HEADERS), floor_line(view, throughput)]


# --- the section -----------------------------------------------------------------------------


def render_policies(found: PoliciesViews) -> str:
    parts = ["## Table 9: receive-window policies side by side (h2 client, grpcio server)", INTRO]
    if found.links is not None:
        parts += ["### A. Every policy on links with a bottleneck, one and four streams"]
        parts += _render_links(found.links)
    if found.sharing is not None:
        rate = format_rate(SHARING_READ_RATE_BITS_S)
        parts += [
            f"### B. A fast stream beside a slow reader ({rate}) or a fast one, "
            f"{SHARING_RTT_MS:g} ms, one connection"
        ]
        parts += _render_sharing(found.sharing)
    parts.append(FOOTNOTES)
    return "\n\n".join(parts)


INTRO = (
    "The kit's h2 client runs each stack's receive-window policy (a *model*: the stack's "
    "rules re-implemented in the kit's sans-IO receiver) against the grpcio server through "
    "the same delay line; the real stacks whose policies are modelled run beside them "
    "(*real*; tonic with its adaptive window on, hyper's BDP estimator, which it ships off). "
    "Every cell is a cold connection (only the one-Ping warm-up), 256 KiB messages. quic-go's "
    "and QUICHE's rules are applied to HTTP/2: a QUIC stream is a stream, MAX_DATA the "
    "connection window."
)

FOOTNOTES = """Notes:
- Part A's columns are the estimator table's (table 6): *steady / rate* over the second half
  of the timed phase; *final window / BDP* the last stream window the client announced (the
  tap); *to 90%* the time, round trips and bytes until one RTT's delivery first reached 90%
  of the rate; *PINGs* the client's, less the kit's RTT probes; *peak queue* the largest
  backlog at the bottleneck. *peak committed*: the most stream credit the receiver had
  granted that the sender had not yet used, summed over the connection's streams, as the
  tap saw it: the memory the receiver promised (the connection window may hold the sender
  below it). *final window* is the last SETTINGS INITIAL_WINDOW_SIZE: a policy that grows
  its streams with WINDOW_UPDATEs instead keeps its start value there (0.1-0.3x the BDP
  here), and *peak committed* is its memory figure. A *FAILED* row's note is the client's
  error.
- Model / real compares medians of the same link and stream count, measured in the same
  rounds; with one or two rounds on a shared machine a ratio inside the noise floor is not
  a difference. *throughput* is each client's own (bytes over its timed phase), *delivered*
  what the link carried from its first byte to the client's end, per second: it leaves out
  the time a client takes to send its first request (a fresh JVM's first grpc-java call:
  40-120 ms more than the others), which no window rule causes; the check judges it.
- Part B as the sharing table (table 7): two streams of fixed size on one connection, the
  first read at the slow rate or at full speed; *ratio* = the fast stream's throughput
  beside the slow reader / beside a fast one (1: no head-of-line blocking)."""
