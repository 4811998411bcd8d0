"""Pure: the figures of the tables, computed from a ``kit tables`` run's records.

One module per table (``windows`` is table 1, ``wire`` 2, ``starvation`` 3, ``unary`` 4,
``uploads`` 5, ``links`` 6, ``sharing`` 7, ``stacks`` 8, ``policies`` 9, ``loss`` 10) holds its figures and its checks against the
reference; everything ``kit.report.tables`` prints that is a number or a verdict comes from
them. This module holds what every table shares: which tables a run holds, what its
sessions took, and every table's checks together.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from kit.analysis.cells import CampaignView, other_cores
from kit.analysis.tables.checks import Bar
from kit.analysis.tables.links import links_bars, links_view
from kit.analysis.tables.loss import loss_bars, loss_view
from kit.analysis.tables.pairs import pairs_view
from kit.analysis.tables.policies import policies_bars, policies_held
from kit.analysis.tables.sharing import sharing_bars, sharing_view
from kit.analysis.tables.stacks import stacks_bars, stacks_held
from kit.analysis.tables.starvation import starvation_bar, starvation_view
from kit.analysis.tables.unary import unary_bar, unary_view
from kit.analysis.tables.uploads import upload_bars, upload_views
from kit.analysis.tables.windows import efficiency_bar, ratio_bars, table1_views
from kit.analysis.tables.wire import wire_view
from kit.plan.tables import TablesSettings
from kit.results.records import Measurement, RunMeta, SessionRecord


def tables_in(plans: Sequence[TablesSettings], views: dict[str, CampaignView]) -> list[str]:
    """Which tables to render (by name): the run's --only, else whatever the records hold."""
    if plans:
        return list(plans[0].only)
    # Records without a plan line list uploads last: the order releases have always used.
    held = {
        "windows": bool(table1_views(views)),
        "wire": wire_view(views) is not None,
        "starvation": starvation_view(views) is not None,
        "unary": unary_view(views) is not None,
        "links": links_view(views) is not None,
        "sharing": sharing_view(views) is not None,
        "uploads": bool(upload_views(views)),
        "stacks": stacks_held(views),
        "policies": policies_held(views),
        "loss": loss_view(views) is not None,
        "pairs": pairs_view(views) is not None,
    }
    return [table for table, found in held.items() if found]


def evaluate_bars(views: dict[str, CampaignView]) -> list[Bar]:
    """Every table's checks, in the order they have always been listed (table 1's efficiency
    after tables 3 and 4); a table the records do not hold adds none or "not measured"."""
    bars = [*ratio_bars(views), starvation_bar(views), unary_bar(views), efficiency_bar(views)]
    bars += upload_bars(views) + links_bars(views) + sharing_bars(views) + stacks_bars(views)
    return bars + policies_bars(views) + loss_bars(views)


@dataclass(frozen=True)
class SessionFacts:
    """What the sessions of a tables run took, and how loaded the machine was."""

    sessions: int
    cells_run: int
    elapsed_s: float
    load_range: tuple[float, float] | None
    other_cores: tuple[float, float] | None  # (median, max) over ok cells
    meta: RunMeta | None


def session_facts(
    sessions: Sequence[SessionRecord], measurements: Sequence[Measurement]
) -> SessionFacts:
    loads = [x for s in sessions for x in s.load_1min if x is not None]
    others = sorted(other_cores(m) for m in measurements if m.ok and m.meta.machine is not None)
    return SessionFacts(
        sessions=len(sessions),
        cells_run=sum(s.cells_run for s in sessions),
        elapsed_s=sum(s.elapsed_s for s in sessions),
        load_range=(min(loads), max(loads)) if loads else None,
        other_cores=(statistics.median(others), others[-1]) if others else None,
        meta=measurements[0].meta if measurements else None,
    )
