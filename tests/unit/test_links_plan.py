"""The estimator table's plan: links, cells, the static window of exactly the BDP, cold starts."""

from __future__ import annotations

from kit.plan.tables import TablesSettings, plan_tables
from kit.plan.tables.links import BAR_CASE, LINK_CASES, LINKS_CAMPAIGN, LINKS_CONTROL, link_cells
from kit.plan.trial import bdp_bytes, theory_mib_s
from kit.plan.units import MIB


def test_every_link_gets_both_estimators_and_a_static_bdp_window() -> None:
    cells = link_cells(quick=False)
    assert len(cells) == 3 * len(LINK_CASES)
    statics = [c for c in cells if c.trial.client.window_mode == "static"]
    for cell in statics:
        assert cell.trial.client.window_bytes == bdp_bytes(cell.trial)
    assert all(not c.trial.workload.warmup for c in cells)  # the estimators' whole climb
    dynamic = next(c for c in cells if c.key == "100Mbit-20ms-grpcio-dynamic")
    assert theory_mib_s(dynamic.trial) == 100e6 / 8 / MIB  # a dynamic window's bound: the rate


def test_durations_cover_20_rtts_and_the_bar_link_runs_3_s_even_quick() -> None:
    for quick in (False, True):
        for cell in link_cells(quick):
            assert cell.trial.workload.duration_s >= 20 * cell.trial.link.rtt_ms / 1000
        bar = [c for c in link_cells(quick) if c.key.startswith(BAR_CASE.name + "-")]
        assert {
            c.trial.workload.duration_s for c in bar if c.trial.client.window_mode == "dynamic"
        } == {3.0}
    assert sum(c.trial.workload.duration_s for c in link_cells(False)) < 20


def test_links_is_a_named_table_with_its_own_control() -> None:
    campaigns = plan_tables(TablesSettings(only=("links",), rounds=3))
    assert [c.name for c in campaigns] == [LINKS_CAMPAIGN]
    spec = campaigns[0].spec
    assert spec.control_key == LINKS_CONTROL
    runs = spec.schedule()
    assert len(runs) == 3 * (len(spec.cells) + 1)  # every cell per round, the control twice
