"""Pure rendering: the records of a ``kit tables`` run -> results/tables.md (markdown).

One module per table renders it (``windows`` is table 1, ``wire`` 2, ``starvation`` 3,
``unary`` 4, ``uploads`` 5, ``links`` 6, ``sharing`` 7, ``stacks`` 8, ``policies`` 9, ``loss`` 10), beside the reference study's
figure for the same row and ending with its noise floor, from the duplicate control's
copies; the figures come from ``kit.analysis.tables``. This module composes the document:
the header (records, settings, sessions, method), the tables the run asked for in table
order, and the checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from kit.analysis import reference as ref
from kit.analysis.cells import CampaignView, group_campaigns
from kit.analysis.tables import SessionFacts, evaluate_bars, session_facts, tables_in
from kit.analysis.tables.links import links_view
from kit.analysis.tables.loss import loss_view
from kit.analysis.tables.pairs import pairs_view
from kit.analysis.tables.sharing import sharing_view
from kit.analysis.tables.starvation import starvation_view
from kit.analysis.tables.unary import unary_view
from kit.analysis.tables.uploads import upload_views
from kit.analysis.tables.windows import table1_views
from kit.analysis.tables.wire import wire_view
from kit.plan.tables import TABLE_NUMBERS, TablesSettings
from kit.report.tables.checks import failed_line, render_bars
from kit.report.tables.links import render_links
from kit.report.tables.loss import render_loss
from kit.report.tables.pairs import render_pairs
from kit.report.tables.policies import policies_views, render_policies
from kit.report.tables.sharing import render_sharing
from kit.report.tables.stacks import render_stacks, stacks_views
from kit.report.tables.starvation import render_starvation
from kit.report.tables.unary import render_unary
from kit.report.tables.uploads import render_uploads
from kit.report.tables.windows import render_windows
from kit.report.tables.wire import render_wire
from kit.results.records import Measurement
from kit.results.store import RecordsRead


def _session_text(facts: SessionFacts) -> str:
    meta = facts.meta
    machine = (
        f"{meta.cpus if meta else '?'} CPUs, Python {meta.python if meta else '?'}, grpcio "
        f"{meta.grpcio if meta else '?'}, h2 {meta.h2 if meta else '?'}, "
        f"path: {meta.path if meta else '?'}"
    )
    if not facts.sessions:
        return f"Machine: {machine}."
    minutes, seconds = divmod(facts.elapsed_s, 60)
    load_others = ""
    if facts.other_cores is not None:
        median, top = facts.other_cores
        load_others = (
            f" Other processes used {median:.2f} cores in the median cell's timed window "
            f"(max {top:.2f})."
        )
    load = ""
    if facts.load_range is not None:
        load = f" 1-min load average during the run: {facts.load_range[0]:.1f}-{facts.load_range[1]:.1f}."
    return (
        f"Measured {facts.cells_run} cells in {facts.elapsed_s:.0f} s ({minutes:.0f} min "
        f"{seconds:.0f} s, {facts.sessions} session(s), warm-ups included). "
        f"Machine: {machine}.{load}{load_others}"
    )


def _plan_text(plans: Sequence[TablesSettings]) -> str:
    if not plans:
        return "Settings: unknown (no plan record)."
    plan = plans[0]
    mode = "--quick (short cells)" if plan.quick else "default cells (1-1.5 s timed)"
    only = ",".join(plan.only)
    return f"Settings: {mode}, {plan.rounds} round(s), seed {plan.seed}, tables {only}."


METHOD = (
    "Method: every table is a campaign of rounds; each round runs every cell once plus a second "
    "copy of a control cell, in a seeded order reshuffled every round. Each cell is a fresh "
    "client process that warms its own connection before timing; each (server, delay line) "
    "ran one discarded warm-up trial first. Timed cells last max(20 RTTs, the time to carry "
    "4 MiB at window/RTT, 1 s), capped at 1.5 s (0.3-0.5 s, 1 MiB with --quick); h2 static "
    "rows whose window/RTT is at most 200 MiB/s carry a fixed transfer of that size instead "
    "(throughput = bytes / time from the request to the last byte, as in the reference). "
    "Each cell has a hard timeout."
)


T = TypeVar("T")


def _section(found: T | None, render: Callable[[T], str]) -> str | None:
    """A table's section from its campaigns (one, or one per RTT); None when there are none."""
    return render(found) if found else None


def _sections(
    views: dict[str, CampaignView], skipped: Sequence[str] = ()
) -> dict[str, Callable[[], str | None]]:
    """Every table's section, each rendered only when asked for; ``skipped``: the sessions'
    lines about stacks that were not built."""
    return {
        "windows": lambda: _section(table1_views(views), render_windows),
        "wire": lambda: _section(wire_view(views), render_wire),
        "starvation": lambda: _section(starvation_view(views), render_starvation),
        "unary": lambda: _section(unary_view(views), render_unary),
        "uploads": lambda: _section(upload_views(views), render_uploads),
        "links": lambda: _section(links_view(views), render_links),
        "sharing": lambda: _section(sharing_view(views), render_sharing),
        "stacks": lambda: _section(stacks_views(views, skipped), render_stacks),
        "policies": lambda: _section(policies_views(views), render_policies),
        "loss": lambda: _section(loss_view(views), render_loss),
        "pairs": lambda: _section(pairs_view(views), render_pairs),
    }


def _not_measured(table: str) -> str:
    return f"## Table {TABLE_NUMBERS[table]} ({table})\n\nNot measured in these records."


def render_bars_of(measurements: Sequence[Measurement]) -> str:
    """Just the checks, for the terminal at the end of a run."""
    return render_bars(evaluate_bars(group_campaigns(measurements)))


def failed_checks_line(measurements: Sequence[Measurement]) -> str | None:
    """The one line a tables run ends with when a check fails (None: none fails)."""
    return failed_line(evaluate_bars(group_campaigns(measurements)))


def render_tables(read: RecordsRead, records_name: str) -> str:
    """The whole results/tables.md: header, the tables the run asked for, the checks."""
    views = group_campaigns(read.measurements)
    wanted = tables_in(read.tables_plans, views)
    parts = [
        "# The reference tables, reproduced with kit",
        f"Records: `{records_name}` (re-render with `kit report {records_name}`). "
        + _plan_text(read.tables_plans),
        _session_text(session_facts(read.sessions, read.measurements)),
        METHOD,
        f"Reference figures: {ref.SOURCE}.",
    ]
    skipped = list(dict.fromkeys(line for s in read.sessions for line in s.skipped))
    sections = _sections(views, skipped)
    for table in wanted:
        text = sections[table]()
        parts.append(_not_measured(table) if text is None else text)
    parts.append(render_bars(evaluate_bars(views)))
    return "\n\n".join(parts) + "\n"
