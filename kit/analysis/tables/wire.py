"""Pure: what table 2 (the window layers on the wire) reads from a ``kit tables`` run.

Its rows are table 1's 20 ms cells, in the reference's row order; each row shows the frame
tap of the cell's median round (the round closest to the median throughput).
"""

from __future__ import annotations

from kit.analysis.cells import CampaignView, CellView, throughput
from kit.analysis.tables.windows import row_order
from kit.plan.tables.wire import WIRE_CAMPAIGN
from kit.results.records import Measurement


def wire_view(views: dict[str, CampaignView]) -> CampaignView | None:
    return views.get(WIRE_CAMPAIGN)


def wire_rows(view: CampaignView) -> list[CellView]:
    """Table 1's 20 ms cells in the reference's row order."""
    return sorted(view.cells, key=row_order)


def median_round(cell: CellView) -> Measurement | None:
    """The round whose frames the table shows (None: every round failed)."""
    return cell.median_run(throughput)
