"""The ratio, starvation and sharing checks in one short round: a ratio that misses its bar
by less than the round's noise can tell is "not decided (1 round; needs N)", not FAILS; a
miss far beyond the noise still FAILS. Synthetic records of the real plans (one round, the
control's two copies setting the noise floor)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from tables_support import campaign_tags, synthetic

from kit.analysis.cells import CampaignView, group_campaigns
from kit.analysis.tables.checks import Bar, ratio_spread_pct, settled_ratio
from kit.analysis.tables.sharing import sharing_bars
from kit.analysis.tables.starvation import starvation_bar
from kit.analysis.tables.windows import ratio_bars
from kit.plan.tables import TablesSettings, plan_tables
from kit.plan.units import MIB
from kit.report.tables.checks import failed_line
from kit.results.records import Measurement

Rate = Callable[[str], float]  # a cell's key -> its MiB/s (copy 0)


def _records(
    table: str, rate: Rate, noise: float, edit: Callable[..., Measurement] | None = None
) -> dict[str, CampaignView]:
    """One round of ``table``'s plan; the control's second copy ``noise`` apart."""
    out: list[Measurement] = []
    for campaign in plan_tables(TablesSettings(rounds=1, only=(table,))):
        for run in campaign.spec.schedule():
            tags = campaign_tags(campaign, run.cell, run.round_index, run.copy)
            mib_s = rate(campaign.name + ":" + run.key) * (1 + noise * run.copy)
            m = synthetic(run.cell.trial, tags, mib_s=mib_s)
            out.append(edit(m, mib_s) if edit else m)
    return group_campaigns(out)


def _undecided(bar: Bar) -> int:
    """The rounds an undecided bar says it needs."""
    assert bar.holds is None and bar.undecided, bar
    found = re.search(r"1 round; needs (\d+)\+?\)?$", bar.detail)
    assert found is not None, bar.detail
    return int(found.group(1))


def test_a_ratio_spreads_as_its_medians_floors_in_quadrature() -> None:
    assert ratio_spread_pct(3.0, 4.0) == 5.0 and ratio_spread_pct(5.0, None) is None
    near = settled_ratio(Bar("r", False, "28.0x"), 28.0, 30.0, 8.0, rounds=1)
    far = settled_ratio(Bar("r", False, "5.0x"), 5.0, 30.0, 8.0, rounds=1)
    assert near.undecided and far.holds is False and not far.undecided
    assert settled_ratio(Bar("r", True, "40x"), 40.0, 30.0, 8.0, rounds=1).holds is True


# --- table 1: the window ratio at 20 ms, and at loopback -------------------------------------


def _windows(ratio20: float, loop_ratio: float) -> Rate:
    def rate(name_key: str) -> float:
        name, key = name_key.split(":")
        ratio = ratio20 if name.endswith("rtt20ms") else loop_ratio
        if key.startswith("h2-static-4MiB"):
            return 10.0 * ratio
        return 10.0  # 64 KiB, and every other cell (the control among them)

    return rate


def test_the_20ms_ratio_near_its_bar_is_not_decided_in_one_noisy_round() -> None:
    at20, loop = ratio_bars(_records("windows", _windows(28.0, 2.0), noise=0.08))
    assert _undecided(at20) >= 2 and "28.0x" in at20.detail
    assert loop.holds is True
    assert failed_line([at20, loop]) is None


def test_the_20ms_ratio_far_below_its_bar_fails_in_one_round() -> None:
    at20, _ = ratio_bars(_records("windows", _windows(5.0, 2.0), noise=0.08))
    assert at20.holds is False and not at20.undecided
    assert failed_line([at20]) is not None


def test_the_loopback_ratio_near_a_third_of_20ms_is_not_decided_and_far_above_fails() -> None:
    _, near = ratio_bars(_records("windows", _windows(60.0, 21.0), noise=0.08))
    assert _undecided(near) >= 2  # 21x against 20x (a third of 60x): within the noise
    _, far = ratio_bars(_records("windows", _windows(60.0, 55.0), noise=0.08))
    assert far.holds is False and not far.undecided


def test_a_quiet_round_decides_a_near_miss() -> None:
    """The same 28x against 30x at a 0.1% floor: the noise cannot flip it, so it FAILS."""
    at20, _ = ratio_bars(_records("windows", _windows(28.0, 2.0), noise=0.001))
    assert at20.holds is False and not at20.undecided


# --- table 3: starvation ---------------------------------------------------------------------


def _starvation(ratio: float) -> Rate:
    return lambda name_key: 300.0 / ratio if name_key.endswith("h2-conn-64KiB") else 300.0


def test_starvation_near_its_bar_is_not_decided_and_far_from_it_fails() -> None:
    near = starvation_bar(_records("starvation", _starvation(9.4), noise=0.08))
    assert _undecided(near) >= 2 and near.detail.startswith("9.")  # 9.0x: the control's copies
    far = starvation_bar(_records("starvation", _starvation(2.0), noise=0.08))
    assert far.holds is False and not far.undecided
    held = starvation_bar(_records("starvation", _starvation(30.0), noise=0.08))
    assert held.holds is True


# --- table 7: a fast stream beside a slow reader ---------------------------------------------


def _sharing(read_ratio: float) -> tuple[Rate, Callable[..., Measurement]]:
    """Every policy's fast stream at 20 MiB/s beside a fast one; beside a slow reader, the
    read-credit policy's at ``read_ratio`` of that, the others' unchanged."""

    def rate(name_key: str) -> float:
        key = name_key.split(":")[1]
        return 20.0 * read_ratio if key == "read-4MiB-beside-slow" else 20.0

    def edit(m: Measurement, mib_s: float) -> Measurement:
        assert m.result is not None
        fixed = m.trial.workload.bytes_per_stream or 8 * MIB
        finish = (fixed / MIB / mib_s,) * m.trial.workload.streams
        sizes = (fixed,) * m.trial.workload.streams
        result = dataclasses.replace(m.result, stream_bytes=sizes, stream_finish_s=finish)
        return dataclasses.replace(m, result=result)

    return rate, edit


def _read_bar(read_ratio: float, noise: float) -> Bar:
    rate, edit = _sharing(read_ratio)
    bars = sharing_bars(_records("sharing", rate, noise, edit))
    return next(b for b in bars if "read-4MiB" in b.name)


def test_sharing_ratio_near_its_bar_is_not_decided_and_far_from_it_fails() -> None:
    near = _read_bar(0.53, noise=0.08)  # 0.53x against <= 0.5x
    assert _undecided(near) >= 2 and "0.53x" in near.detail
    far = _read_bar(0.95, noise=0.08)
    assert far.holds is False and not far.undecided
    assert _read_bar(0.1, noise=0.08).holds is True
