"""kit.plan.schedule: seeded interleaved schedule, duplicate controls, resume, ETA."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kit.errors import UsageError
from kit.plan.schedule import (
    ScheduledRun,
    estimate_remaining_s,
    plan_rounds,
    remaining,
    run_id,
    unknown_run_ids,
)


@dataclass(frozen=True)
class Cell:
    """Anything keyed can be scheduled (the kit schedules ``kit.plan.campaign.Cell``)."""

    key: str
    payload: object


def _cells(*keys: str) -> list[Cell]:
    return [Cell(k, f"payload-{k}") for k in keys]


keys_strategy = st.lists(
    st.text(alphabet="abcdefgh:0123", min_size=1, max_size=6), min_size=1, max_size=8, unique=True
)


def _by_round(schedule: list[ScheduledRun[Cell]]) -> dict[int, list[ScheduledRun[Cell]]]:
    rounds: dict[int, list[ScheduledRun[Cell]]] = {}
    for run in schedule:
        rounds.setdefault(run.round_index, []).append(run)
    return rounds


def test_small_schedule_shape() -> None:
    schedule = plan_rounds(_cells("ctl", "a", "b"), rounds=3, seed=1, control_key="ctl")
    assert len(schedule) == 3 * 4
    for r, runs in _by_round(schedule).items():
        assert [run.position for run in runs] == [0, 1, 2, 3]
        assert Counter(run.key for run in runs) == {"ctl": 2, "a": 1, "b": 1}
        assert sorted(run.copy for run in runs if run.key == "ctl") == [0, 1]
        assert all(run.round_index == r for run in runs)
    assert schedule[0].cell.payload == f"payload-{schedule[0].key}"


def test_run_id_format() -> None:
    run = ScheduledRun(round_index=2, position=0, cell=Cell("ctl", None), copy=1)
    assert run.run_id == "r2:ctl:1" == run_id(2, "ctl", 1)


def test_order_is_reshuffled_between_rounds() -> None:
    cells = _cells("ctl", *"abcdefg")
    orders = {
        tuple(run.run_id.split(":", 1)[1] for run in runs)
        for runs in _by_round(plan_rounds(cells, 10, seed=3, control_key="ctl")).values()
    }
    assert len(orders) > 1


def test_cell_order_does_not_change_the_schedule() -> None:
    forward = plan_rounds(_cells("ctl", "a", "b", "c"), 4, seed=9, control_key="ctl")
    backward = plan_rounds(_cells("c", "b", "a", "ctl"), 4, seed=9, control_key="ctl")
    assert [r.run_id for r in forward] == [r.run_id for r in backward]


def test_control_copies_are_never_adjacent_when_avoidable() -> None:
    for seed in range(50):
        schedule = plan_rounds(_cells("ctl", "a"), 5, seed=seed, control_key="ctl")
        for runs in _by_round(schedule).values():
            assert [run.key for run in runs] == ["ctl", "a", "ctl"]


def test_control_only_plan_still_runs_every_copy() -> None:
    schedule = plan_rounds(_cells("ctl"), 2, seed=0, control_key="ctl", control_copies=3)
    assert Counter(run.run_id for run in schedule) == {
        f"r{r}:ctl:{c}": 1 for r in range(2) for c in range(3)
    }


def test_copy_zero_is_not_always_first() -> None:
    schedule = plan_rounds(_cells("ctl", *"abcd"), 40, seed=5, control_key="ctl")
    firsts = {
        next(run.copy for run in runs if run.key == "ctl") for runs in _by_round(schedule).values()
    }
    assert firsts == {0, 1}


@pytest.mark.parametrize(
    ("cells", "rounds", "control", "copies", "message"),
    [
        ([], 1, "ctl", 2, "at least one cell"),
        (_cells("ctl", "ctl"), 1, "ctl", 2, "duplicate keys ctl"),
        (_cells("ctl", ""), 1, "ctl", 2, "non-empty key"),
        (_cells("a"), 1, "ctl", 2, "'ctl' is not one of the cells"),
        (_cells("ctl"), 0, "ctl", 2, "rounds: 0"),
        (_cells("ctl"), 1, "ctl", 1, "control copies: 1"),
    ],
)
def test_plan_validation(
    cells: list[Cell], rounds: int, control: str, copies: int, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        plan_rounds(cells, rounds, seed=0, control_key=control, control_copies=copies)


@given(keys_strategy, st.integers(1, 6), st.integers(0, 2**32), st.integers(2, 4), st.data())
def test_schedule_properties(
    keys: list[str], rounds: int, seed: int, copies: int, data: st.DataObject
) -> None:
    control = data.draw(st.sampled_from(keys))
    cells = _cells(*keys)
    schedule = plan_rounds(cells, rounds, seed, control, copies)
    assert schedule == plan_rounds(cells, rounds, seed, control, copies)  # deterministic
    assert len({run.run_id for run in schedule}) == len(schedule)  # ids unique, even with ':'
    for runs in _by_round(schedule).values():
        expected = [(k, 0) for k in keys] + [(control, c) for c in range(1, copies)]
        assert sorted((run.key, run.copy) for run in runs) == sorted(expected)  # a permutation
        assert [run.key for run in runs].count(control) == copies
        if copies <= len(keys):  # enough other cells to keep the copies apart
            for before, after in pairwise(runs):
                assert not (before.key == control and after.key == control)
    assert sorted({run.round_index for run in schedule}) == list(range(rounds))


@given(
    keys_strategy,
    st.integers(1, 5),
    st.integers(0, 1000),
    st.lists(st.integers(0, 200), max_size=40),
    st.lists(st.text(max_size=5), max_size=3),
)
def test_resume_never_reruns_or_skips(
    keys: list[str], rounds: int, seed: int, done_idx: list[int], foreign: list[str]
) -> None:
    schedule = plan_rounds(_cells(*keys), rounds, seed, control_key=keys[0])
    done = {schedule[i % len(schedule)].run_id for i in done_idx}
    todo = remaining(schedule, [*done, *foreign])
    todo_ids = [run.run_id for run in todo]
    assert not done & set(todo_ids)  # never re-runs
    assert set(todo_ids) | done == {run.run_id for run in schedule}  # never skips
    assert todo == [run for run in schedule if run.run_id in set(todo_ids)]  # schedule order
    # Resuming with another seed still skips exactly what is done.
    other = remaining(plan_rounds(_cells(*keys), rounds, seed + 1, keys[0]), done)
    assert {run.run_id for run in other} == set(todo_ids)


def test_unknown_run_ids_flags_a_changed_plan() -> None:
    schedule = plan_rounds(_cells("ctl", "a"), 2, seed=0, control_key="ctl")
    assert unknown_run_ids(schedule, ["r0:a:0", "r5:a:0", "r0:gone:0"]) == ["r0:gone:0", "r5:a:0"]


def test_estimate_uses_per_cell_medians() -> None:
    schedule = plan_rounds(_cells("ctl", "slow"), 2, seed=0, control_key="ctl")
    pending = remaining(schedule, [run.run_id for run in schedule if run.round_index == 0])
    # Pending: round 1 = ctl x2 + slow x1. A timed-out 60 s ctl run does not skew it.
    keys = [run.key for run in pending]
    eta = estimate_remaining_s(keys, {"ctl": [1.0, 1.2, 60.0], "slow": [10.0]})
    assert eta == pytest.approx(1.2 * 2 + 10.0)


def test_estimate_falls_back_to_overall_median() -> None:
    assert estimate_remaining_s(["new"], {"a": [2.0, 4.0], "b": []}) == pytest.approx(3.0)


def test_estimate_with_a_plan_adds_the_observed_overhead_to_unseen_cells() -> None:
    planned = {"a": 1.0, "b": 5.0}
    # Before anything ran: plan + the default overhead (0.8 s per cell).
    assert estimate_remaining_s(["a", "b"], {}, planned) == pytest.approx(1.8 + 5.8)
    # "a" ran twice at 1.5 s: 0.5 s overhead; "b" costs its plan plus that.
    assert estimate_remaining_s(["a", "b"], {"a": [1.5, 1.5]}, planned) == pytest.approx(7.0)


def test_estimate_edge_cases() -> None:
    assert estimate_remaining_s([], {}) == 0.0
    assert estimate_remaining_s(["a"], {}) is None
