"""``make bench``'s line for the full ``make tables`` run: it is not run by the bench (17
minutes on 2 cores), so its time and checks are read from the newest records of a full run
(every table, the default rounds, not ``--quick``) in ``results/``, and said as such."""

from __future__ import annotations

from pathlib import Path

from kit.analysis.cells import group_campaigns
from kit.analysis.tables import evaluate_bars
from kit.campaign.tables import RECORDS_GLOB, stored_settings
from kit.plan.tables import TablesSettings
from kit.report.tables.checks import shortened
from kit.results.store import read_records
from kit.tools.benchline import BenchLine

TABLES_GOAL_S = 12 * 60.0


def tables_lines(results: Path = Path("results")) -> list[BenchLine]:
    """The time of the newest full run (every session's, a resumed run's parts summed) and
    its failing checks, or one line saying no full run is on record."""
    runs = sorted(results.glob(RECORDS_GLOB), key=lambda p: p.stat().st_mtime, reverse=True)
    path = next((p for p in runs if stored_settings(p) == TablesSettings()), None)
    if path is None:
        return [BenchLine("full make tables", "no full run in results/ (make tables)", "-", None)]
    read = read_records(path)
    sessions = read.sessions
    elapsed = sum(s.elapsed_s for s in sessions)
    complete = any(s.complete for s in sessions)
    cells = sum(s.cells_run for s in sessions)
    failing = [
        b.name for b in evaluate_bars(group_campaigns(read.measurements)) if b.holds is False
    ]
    where = f"{path.name}, not run by the bench"
    return [
        BenchLine(
            f"full make tables: time ({where})",
            f"{elapsed:.0f} s for {cells} cells" + ("" if complete else " (incomplete)"),
            f"<= {TABLES_GOAL_S:.0f} s",
            complete and elapsed <= TABLES_GOAL_S,
        ),
        BenchLine(
            f"full make tables: checks ({where})",
            f"{len(failing)} fail: " + "; ".join(shortened(n, 48) for n in failing)
            if failing
            else "none fails",
            "none fails (exit 0)",
            not failing,
        ),
    ]
