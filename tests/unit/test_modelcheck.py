"""The modelcheck plan and verdicts, without processes."""

from __future__ import annotations

from kit.analysis.modelcheck import CheckRow, LoadShift
from kit.analysis.stats import summarize
from kit.plan.modelcheck import (
    CELLS,
    CONTROL_KEY,
    campaign,
    parse_campaign,
    plan,
    split_key,
)


def test_every_cell_and_stack_runs_twice_per_round() -> None:
    runs = campaign("quiet", 0).schedule()
    keys = [split_key(r.key) for r in runs]
    for cell in CELLS:
        for stack in ("real", "model"):
            assert keys.count((cell.name, stack)) == 2
    assert CONTROL_KEY in {r.key for r in runs}


def test_rounds_alternate_conditions_and_reshuffle() -> None:
    specs = plan(2)
    assert [c for c, _ in specs] == ["quiet", "busy", "quiet", "busy"]
    orders = [[r.key for r in s.schedule()] for _, s in specs]
    assert len({tuple(o) for o in orders}) == 4
    assert parse_campaign(specs[3][1].name) == ("busy", 1)
    assert parse_campaign("compare-abc") is None


def row(real: list[float], model: list[float], floor: float | None) -> CheckRow:
    return CheckRow(CELLS[0], "quiet", summarize(real), summarize(model), floor, 0)


def test_verdicts() -> None:
    assert row([10, 10], [10.5, 10.5], 5.0).verdict == "within"
    assert row([10, 10], [12, 12], 5.0).verdict == "outside"
    assert row([10, 10], [10, 10], 25.0).verdict == "not decided"
    assert row([10, 10], [10, 10], None).verdict == "not decided"
    assert row([10, 10], [11, 11], 5.0).ratio == 1.1


def test_load_notes() -> None:
    assert "model moves" in LoadShift(CELLS[0], 1.0, 1.3).note
    assert LoadShift(CELLS[0], 1.02, 0.97).note.startswith("neither")
