"""Every ratio the kit reports carries a 95% interval, and ``--until-decided`` adds rounds
only where one is not decided: pure tests of the bootstrap, of the one rule
(``kit.analysis.stats.decide``), of what users read (the printed lines checked against
intervals recomputed from the records), and of the runner's added rounds over a fake
topology (no sockets)."""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tables_support import campaign_tags, synthetic

from kit.analysis.cells import group_campaigns, throughput
from kit.analysis.compare import CompareMeta, build_report, samples_by_round
from kit.analysis.knee import KneePoint, Sweep, find_knee, knee_points
from kit.analysis.modelcheck import check_rows
from kit.analysis.stats import ConfidenceInterval, Figure, decide, ratio_interval, verdict
from kit.analysis.tables.checks import by_round
from kit.analysis.tables.starvation import starvation_bar
from kit.campaign.runner import UntilDecided, pending_runs, run_campaigns, run_tags
from kit.cli import main
from kit.cli.until import until_of
from kit.errors import UsageError
from kit.plan.campaign import CampaignSpec, Cell
from kit.plan.modelcheck import campaign as mc_campaign
from kit.plan.modelcheck import parse_campaign as parse_mc
from kit.plan.modelcheck import plan as mc_plan
from kit.plan.modelcheck import split_key
from kit.plan.options import PlanOptions
from kit.plan.presets import knee_from
from kit.plan.schedule import Budget, Undecided, added_round, added_run_ids, budget_of, plan_rounds
from kit.plan.tables import TablesSettings, plan_tables
from kit.plan.tables.starvation import STARVATION_CAMPAIGN
from kit.plan.trial import Trial
from kit.plan.units import MIB
from kit.report.compare import render_text, report_json
from kit.report.knee import knee_json, render_knee
from kit.report.modelcheck import render as render_modelcheck
from kit.report.tables.checks import bar_json, render_bars
from kit.results.client import ClientResult
from kit.results.records import Measurement, RunTags
from kit.results.store import append_record, read_records
from kit.tools.modelcheck import added_campaign, open_rows
from kit.tools.modelcheck import until_decided as mc_until

BASE = "baseline"


def _record(campaign: str, key: str, rnd: int, copy: int, mib_s: float) -> Measurement:
    tags = RunTags(campaign=campaign, key=key, round=rnd, copy=copy, control=key == BASE)
    result = ClientResult(client="h2", bytes=int(mib_s * MIB), elapsed_s=1.0)
    return Measurement(trial=Trial(), status="ok", result=result, tags=tags)


def _campaign(rounds: int, **cells: Callable[[int], float]) -> list[Measurement]:
    """``rounds`` rounds: the baseline twice (100 and 102 MiB/s), each cell once a round."""
    out = []
    for rnd in range(rounds):
        out += [_record("t", BASE, rnd, 0, 100.0), _record("t", BASE, rnd, 1, 102.0)]
        out += [_record("t", key, rnd, 0, value(rnd)) for key, value in cells.items()]
    return out


def _meta(*keys: str) -> CompareMeta:
    return CompareMeta("t", BASE, (BASE, *keys), {BASE: "grpcio", **{k: k for k in keys}})


# --- the bootstrap ---------------------------------------------------------------------------


def test_an_interval_is_seeded_and_needs_three_rounds() -> None:
    num = {r: [150.0 + 3 * r] for r in range(5)}
    den = {r: [100.0, 101.0 + r] for r in range(5)}
    first = ratio_interval(num, den, "cell")
    assert first is not None and first == ratio_interval(num, den, "cell")  # reproducible
    assert first.low <= 156.0 / 100.5 <= first.high and first.rounds == 5  # the medians'
    two = {r: v for r, v in num.items() if r < 2}
    assert ratio_interval(two, den, "cell") is None  # 2 rounds: no interval, not a fake one
    assert ratio_interval([1.0, 2.0], [1.0, 2.0, 3.0], "x") is None


def test_rounds_are_resampled_together_so_shared_drift_cancels() -> None:
    """A candidate always 1.2x the baseline of its own round, on a machine drifting 2x
    between rounds: by round the interval is tight at 1.2; as loose samples it is not."""
    rng = random.Random(5)
    drift = {r: rng.uniform(0.3, 1.0) for r in range(6)}
    base = {r: [100.0 * d, 100.0 * d] for r, d in drift.items()}
    cand = {r: [120.0 * d] for r, d in drift.items()}
    paired = ratio_interval(cand, base, "p")
    loose = ratio_interval(
        [v for r in cand.values() for v in r], [v for r in base.values() for v in r], "p"
    )
    assert paired is not None and loose is not None
    assert paired.low == pytest.approx(1.2) and paired.high == pytest.approx(1.2)
    assert loose.high - loose.low > 0.2


# --- the one rule ----------------------------------------------------------------------------


def test_decide_judges_the_whole_interval_and_names_the_rounds_it_needs() -> None:
    band = (0.95, 1.05)
    assert decide(Figure(1.02, None, 5, ConfidenceInterval(0.9, 1.3, 5)), band).verdict == "inside"
    assert decide(Figure(1.2, None, 5, ConfidenceInterval(1.1, 1.3, 5)), band).verdict == "outside"
    open_ = decide(Figure(1.2, None, 5, ConfidenceInterval(1.0, 1.4, 5)), band)
    # half-width 0.2 toward the band, 0.15 from its edge: 5 x (0.2 / 0.15)^2 = 8.9 -> 9
    assert open_.verdict == "not decided" and open_.needs == 9
    # a spread wider than the bootstrap's widens the interval (the floor's, at 5 rounds)
    wide = Figure(1.2, 40.0, 5, ConfidenceInterval(1.1, 1.3, 5))
    assert wide.interval is not None and wide.interval[0] < 1.1
    assert decide(wide, band).verdict == "not decided"
    assert decide(Figure(1.2, None, 5), band).rounds_text == "no noise floor to judge it by"


def test_a_verdict_needs_its_interval_beyond_the_floor() -> None:
    base = {r: [100.0, 101.0] for r in range(5)}
    clear = verdict(base, {r: [110.0 + r * 0.2] for r in range(5)}, 3.0)
    assert clear.label == "faster" and clear.ci is not None and clear.ci.low > 1.03
    near = verdict(base, {r: [(112.0, 100.0)[r % 2]] for r in range(5)}, 3.0)
    assert near.label == "not decided" and near.ci is not None and near.ci.low <= 1.03
    # the +3.2% against a 4.8% floor of the reference: inside the band, within noise
    assert verdict(base, {r: [103.7] for r in range(5)}, 4.8).label == "within noise"


# --- what users read, checked against intervals recomputed from the records ------------------

INTERVAL = re.compile(r"(\d+\.?\d*) \[(\d+\.?\d*), (\d+\.?\d*)\]")


def _shown(value: float, interval: ConfidenceInterval) -> str:
    def three(x: float) -> str:
        return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"

    return f"{three(value)} [{three(interval.low)}, {three(interval.high)}]"


def test_compare_prints_each_ratio_beside_its_interval_from_the_records() -> None:
    runs = _campaign(
        5, fast=lambda r: 150.0 + r, same=lambda r: 99.0 + r % 3, wide=lambda r: (90, 140)[r % 2]
    )
    report = build_report(_meta("fast", "same", "wide"), runs)
    text = render_text(report)
    assert all(len(line) <= 100 for line in text.splitlines())
    data = json.loads(json.dumps(report_json(report)))
    by_key = {r["name"]: r for r in data["rows"]}
    base = samples_by_round([m for m in runs if m.tags.key == BASE], "throughput")
    for key in ("fast", "same", "wide"):
        cand = samples_by_round([m for m in runs if m.tags.key == key], "throughput")
        again = ratio_interval(cand, base, f"compare:{key}")
        assert again is not None
        ratio = statistics_median(cand) / statistics_median(base)
        line = next(line for line in text.splitlines() if line.startswith(key))
        assert _shown(ratio, again) in line, line
        assert (by_key[key]["ci_low"], by_key[key]["ci_high"]) == (again.low, again.high)
    lines = {key: next(x for x in text.splitlines() if x.startswith(key)) for key in by_key}
    assert "faster" in lines["fast"] and "within noise" in lines["same"]
    assert "not decided" in lines["wide"]
    needs = report.row("wide").needs
    assert f"not decided: wide: its interval reaches into 1 ± the noise floor; needs {needs}" in (
        text
    )


def statistics_median(by_round: dict[int, list[float]]) -> float:
    values = sorted(v for r in by_round.values() for v in r)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def test_too_few_rounds_print_no_interval_but_say_so() -> None:
    report = build_report(_meta("fast"), _campaign(2, fast=lambda r: 150.0))
    line = next(x for x in render_text(report).splitlines() if x.startswith("fast"))
    assert "1.49 (n=2, no CI)" in line and "[" not in line  # 150 / 101
    row = next(r for r in report_json(report)["rows"] if r["name"] == "fast")
    assert row["ci_low"] is None and row["ci_high"] is None


def test_the_knee_prints_each_share_of_the_best_with_its_interval() -> None:
    runs = _campaign(4, **{"64KiB": lambda r: 30.0 + r, "256KiB": lambda r: (70.0, 96.0)[r % 2]})
    report = build_report(_meta("64KiB", "256KiB"), runs)
    windows = {BASE: 4 << 20, "64KiB": 64 << 10, "256KiB": 256 << 10}
    assert report.floor is not None
    knee = find_knee(knee_points(report, windows), floor_pct=report.floor.floor_pct)
    sweep = Sweep(report, knee, windows, "stream window", 20.0)
    text = render_knee(sweep)
    best = samples_by_round([m for m in runs if m.tags.key == BASE], "throughput")
    for key, shown in (("64KiB", "64 KiB"), ("256KiB", "256 KiB")):
        cell = samples_by_round([m for m in runs if m.tags.key == key], "throughput")
        again = ratio_interval(cell, best, f"knee:{key}")
        assert again is not None
        line = next(x for x in text.splitlines() if x.startswith(shown + " "))
        ratio = statistics_median(cell) / statistics_median(best)
        assert _shown(ratio, again) in line, line
    # 256 KiB at 0.82 of the best, its interval reaching 0.9: the knee may lie there
    assert "not decided: 256 KiB may reach 90% of the best too" in " ".join(text.split())
    point = next(p for p in knee_json(sweep)["points"] if p["key"] == "256KiB")
    assert point["decision"] == "not decided" and point["ci_high"] >= 0.9


def test_a_point_without_rounds_is_not_called_undecided() -> None:
    bare = [KneePoint(1, 50.0, 49.0, 51.0, None, False), KneePoint(2, 100.0, 99, 101, None, False)]
    assert find_knee(bare).undecided() == []


# --- --until-decided: the schedule, the runner, the command ----------------------------------


CELLS = (Cell(BASE, Trial()), Cell("a", Trial()), Cell("b", Trial()))


def test_an_added_round_runs_the_undecided_cells_and_the_controls_copies() -> None:
    runs = added_round(CELLS, ["b"], 5, seed=1, control_key=BASE)
    assert sorted((r.key, r.copy) for r in runs) == [("b", 0), (BASE, 0), (BASE, 1)]
    assert {r.round_index for r in runs} == {5}
    assert [r.run_id for r in runs] == [r.run_id for r in added_round(CELLS, ["b"], 5, 1, BASE)]
    schedule = plan_rounds(CELLS, 5, 1, BASE)
    assert added_run_ids(schedule, CELLS, [r.run_id for r in runs]) == {r.run_id for r in runs}
    assert added_run_ids(schedule, CELLS, ["r5:c:0", "r2:a:0", "r6:a:1"]) == set()
    with pytest.raises(UsageError, match="not a cell"):
        added_round(CELLS, ["zz"], 5, 1, BASE)


def test_the_budget_options_only_come_with_until_decided() -> None:
    assert budget_of(False, None, None) is None
    assert budget_of(True, None, "2m") == Budget(20, 120.0)
    with pytest.raises(UsageError, match="only with --until-decided"):
        budget_of(False, 8, None)
    with pytest.raises(UsageError, match="--max-rounds"):
        budget_of(True, 0, None)


class FakeTopology:
    """Measures instantly: cell ``b`` wobbles between 90 and 150, the rest are steady."""

    measured: list[RunTags]

    def __init__(self, values: Callable[[RunTags], float]) -> None:
        self.values, self.measured = values, []

    def __enter__(self) -> FakeTopology:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def measure(self, trial: Trial, tags: RunTags | None = None) -> Measurement:
        assert tags is not None
        self.measured.append(tags)
        mib_s = self.values(tags)
        result = ClientResult(client="h2", bytes=int(mib_s * MIB), elapsed_s=1.0)
        return Measurement(trial=trial, status="ok", result=result, tags=tags)


def _wobbly(tags: RunTags) -> float:
    if tags.key == "b":
        return (90.0, 150.0, 120.0)[tags.round % 3]
    return {"a": 150.0}.get(tags.key, 100.0 + tags.copy)


def _judge(spec: CampaignSpec, records: list[Measurement]) -> Undecided:
    meta = CompareMeta(spec.name, BASE, (BASE, "a", "b"), {})
    report = build_report(meta, records)
    return Undecided(report.undecided())


def test_the_runner_adds_rounds_to_the_undecided_cell_only_and_resume_keeps_them(
    tmp_path: Path,
) -> None:
    spec = CampaignSpec("u", CELLS, BASE, rounds=3, seed=1)
    topo = FakeTopology(_wobbly)
    path = tmp_path / "u.jsonl"
    until = UntilDecided(_judge, Budget(max_rounds=6))
    outcome = run_campaigns([spec], path, topology_factory=lambda: topo, until=until)  # type: ignore[arg-type,return-value]
    added = [t for t in topo.measured if t.round >= 3]
    assert outcome.until is not None and outcome.until.rounds_added == 3
    assert {t.key for t in added} == {BASE, "b"}  # "a" was decided after 3 rounds
    assert sum(t.key == BASE for t in added) == 2 * 3  # the control's two copies each round
    assert outcome.until.stopped_by == "--max-rounds 6 reached"
    assert set(outcome.until.still_open["u"]) == {"b"}
    # the added rounds are recorded like any round: a resume finds nothing stray or missing
    assert pending_runs([spec], path, resume=True) == []
    assert len(read_records(path).measurements) == len(topo.measured)


def test_the_time_limit_stops_before_a_round_that_would_end_after_it(tmp_path: Path) -> None:
    spec = CampaignSpec("t", CELLS, BASE, rounds=3, seed=1)
    topo = FakeTopology(_wobbly)
    until = UntilDecided(_judge, Budget(max_rounds=50, time_limit_s=1e-6))
    outcome = run_campaigns(  # type: ignore[arg-type,return-value]
        [spec], tmp_path / "t.jsonl", topology_factory=lambda: topo, until=until
    )
    assert outcome.until is not None and outcome.until.rounds_added == 0
    assert outcome.until.stopped_by.startswith("--time-limit")
    assert "b" in outcome.until.still_open["t"]


@pytest.fixture
def fake_compare(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[RunTags]]:
    """``kit compare`` measuring through a fake topology: candidate ``b`` wobbles."""
    measured: list[RunTags] = []

    def values(tags: RunTags) -> float:
        measured.append(tags)
        if tags.key.startswith("h2:window=2MiB"):
            return (90.0, 150.0, 120.0)[tags.round % 3]
        return 100.0 + tags.copy

    monkeypatch.setattr("kit.cli.compare.topology", lambda **_: FakeTopology(values))
    yield measured


def test_compare_until_decided_says_what_stayed_undecided(
    tmp_path: Path, fake_compare: list[RunTags], capsys: pytest.CaptureFixture[str]
) -> None:
    records = tmp_path / "c.jsonl"
    args = ["compare", "--rtt", "0", "--duration", "200ms", "--rounds", "3", "--records",
            str(records), "--baseline", "h2:window=1MiB", "--candidate", "h2:window=2MiB",
            "--until-decided", "--max-rounds", "5", "--time-limit", "10m"]  # fmt: skip
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code in (0, None)
    out, err = capsys.readouterr()
    assert max(t.round for t in fake_compare) == 4  # rounds 4 and 5 added, no more
    assert "until decided: 2 rounds added; stopped: --max-rounds 5 reached" in err
    assert re.search(r"- h2:window=2MiB: needs \d+\+? rounds", err), err
    line = next(x for x in out.splitlines() if x.startswith("h2:window=2MiB"))
    assert "not decided" in line and INTERVAL.search(line)
    assert "not decided: h2:window=2MiB: its interval reaches into 1 ± the noise floor" in out
    # resume: nothing left to run, the added rounds are kept as recorded
    before = len(read_records(records).measurements)
    with pytest.raises(SystemExit):
        main([*args[:-6], "--resume"])
    assert len(read_records(records).measurements) == before


# --- the model checks --------------------------------------------------------------------------


def _model_records(wobble: float) -> list[Measurement]:
    """Three rounds of grpc-go's quiet campaign, each stack at 50 MiB/s but the model of
    8MiB@20ms, which wobbles by ``wobble`` around 0.8 of it (outside its 10%)."""
    out = []
    for rnd in range(3):
        spec = mc_campaign("quiet", rnd)
        for run in spec.schedule():
            name, stack = split_key(run.key)
            mib_s = 50.0 + run.copy * 0.2
            if name == "8MiB@20ms" and stack == "model":
                mib_s = 40.0 * (1 + wobble * (-1) ** rnd)
            tags = RunTags(campaign=spec.name, key=run.key, round=0, copy=run.copy)
            result = ClientResult(client="h2", bytes=int(mib_s * MIB), elapsed_s=1.0)
            out.append(Measurement(trial=run.cell.trial, status="ok", result=result, tags=tags))
    return out


def test_a_model_check_prints_its_ratio_interval_and_adds_rounds_only_where_open() -> None:
    rows = check_rows(_model_records(wobble=0.05))
    row = next(r for r in rows if r.cell.name == "8MiB@20ms")
    assert row.rounds == 3 and row.ci is not None
    model = {r: [40.0 * (1 + 0.05 * (-1) ** r)] * 2 for r in range(3)}
    real = {r: [50.0, 50.2] for r in range(3)}
    again = ratio_interval(model, real, "modelcheck:8MiB@20ms:quiet")  # bytes are whole
    assert again is not None and (row.ci.low, row.ci.high) == pytest.approx((again.low, again.high))
    shown = row.figure.shown if row.figure else None  # the bootstrap's, widened to the spread's
    assert shown is not None and shown.low <= row.ci.low and shown.high >= row.ci.high
    assert f"{row.ratio:.2f} {shown.text()}" in render_modelcheck(rows, [])
    assert shown.high >= 0.9  # the printed interval reaches the tolerance: not decided
    assert row.undecided and row.verdict.startswith("not decided (needs")
    steady = [r for r in rows if r.cell.name != "8MiB@20ms"]
    assert all(not r.undecided for r in steady)
    open_ = open_rows(rows)
    assert open_ == {("grpc-go", "quiet"): {"8MiB@20ms": row.decision.needs}}  # type: ignore[union-attr]
    spec = added_campaign(_model_records(0.05), "grpc-go", "quiet", open_[("grpc-go", "quiet")],
                          seed=1, budget=Budget(max_rounds=5))  # fmt: skip
    assert spec is not None and spec.name == "modelcheck-quiet-r4"
    assert {split_key(c.key)[0] for c in spec.cells} == {"8MiB@20ms"}  # and its control
    assert spec.control_key in {c.key for c in spec.cells}
    full = added_campaign(_model_records(0.05), "grpc-go", "quiet", {}, 1, Budget(max_rounds=3))
    assert full is None  # three rounds are all --max-rounds 3 allows


def _measured(spec: CampaignSpec, value: Callable[[str, int], float]) -> list[Measurement]:
    out = []
    for run in spec.schedule():
        tags = run_tags(spec, run)
        mib_s = value(run.key, run.round_index) * (1 + 0.002 * run.copy)
        result = ClientResult(client="h2", bytes=int(mib_s * MIB), elapsed_s=1.0)
        out.append(Measurement(trial=run.cell.trial, status="ok", result=result, tags=tags))
    return out


def test_the_knee_adds_rounds_to_the_windows_that_may_still_reach_it_and_to_the_best() -> None:
    (plan,) = knee_from(
        PlanOptions(rtt="20ms", rounds=3), streams=1, min_window=64 << 10, max_window=1 << 20
    )
    spec = plan.campaign()
    keys = sorted(c.key for c in spec.cells)
    best = spec.control_key  # the largest window

    def value(key: str, rnd: int) -> float:
        if key == best:
            return 100.0
        if "256KiB" in key:
            return (80.0, 96.0)[rnd % 2]  # 0.8-0.96 of the best: may reach 90%
        return 30.0 if "64KiB" in key else 50.0

    until = until_of([plan], True, 6, None, knee=True)
    assert until is not None
    judged = until.judge(spec, _measured(spec, value))
    assert list(judged.cells) == [k for k in keys if "256KiB" in k]
    assert judged.with_cells == (best,)
    assert until_of([plan], False, None, None) is None


def test_modelcheck_until_decided_adds_rounds_to_the_open_row_until_its_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = tmp_path / "mc.jsonl"
    ran: list[str] = []

    def run_one(path: Path, condition: str, spec: CampaignSpec) -> None:
        """The model of 8MiB@20ms at 0.86 of the real stack, 0.94 every third round: its
        interval keeps reaching the 0.9 its tolerance allows; every other row agrees."""
        ran.append(spec.name)
        where = parse_mc(spec.name)
        model = 47.0 if where is not None and where[1] % 3 == 1 else 43.0
        for m in _measured(
            spec, lambda key, _: model if key.startswith("8MiB@20ms/model") else 50.0
        ):
            append_record(path, m)

    monkeypatch.setattr("kit.tools.modelcheck._run_one", run_one)
    for condition, spec in mc_plan(3, 1, ("grpc-go",)):
        if condition == "quiet":
            run_one(records, condition, spec)
    ran.clear()
    outcome = mc_until(records, 1, ("grpc-go",), Budget(max_rounds=5), time.monotonic())
    assert ran == ["modelcheck-quiet-r4", "modelcheck-quiet-r5"]  # the open row's condition only
    assert outcome.rounds_added == 2 and outcome.stopped_by == "--max-rounds 5 reached"
    assert list(outcome.still_open) == ["grpc-go (quiet)"]
    assert list(outcome.still_open["grpc-go (quiet)"]) == ["8MiB@20ms"]
    added = [
        m for m in read_records(records).measurements if m.tags.campaign.endswith(("r4", "r5"))
    ]
    assert {split_key(m.tags.key)[0] for m in added} == {"8MiB@20ms"}


# --- a table's check, as printed -------------------------------------------------------------


def test_a_tables_check_prints_the_interval_it_was_judged_by() -> None:
    """Table 3's starvation check over 4 rounds whose 64 KiB cell wobbles: the line
    printed holds the ratio and the interval recomputed from the records (the bootstrap's
    over rounds, widened to the one the control's floor gives)."""
    out = []
    for campaign in plan_tables(TablesSettings(rounds=4, only=("starvation",))):
        for run in campaign.spec.schedule():
            tags = campaign_tags(campaign, run.cell, run.round_index, run.copy)
            slow = (12.0, 16.0, 13.0, 15.0)[run.round_index]
            mib_s = slow if run.key == "h2-conn-64KiB" else 300.0 * (1 + 0.01 * run.copy)
            out.append(synthetic(run.cell.trial, tags, mib_s=mib_s))
    views = group_campaigns(out)
    bar = starvation_bar(views)
    view = views[STARVATION_CAMPAIGN]
    fast, slow = view.cell("h2-conn-4MiB"), view.cell("h2-conn-64KiB")
    ci = ratio_interval(by_round(fast, throughput), by_round(slow, throughput), "table3:starvation")
    floor = view.floor(throughput)
    assert ci is not None and floor is not None and bar.value is not None
    figure = Figure(bar.value, 2 * floor.floor_pct, floor.rounds, ci)  # two medians, sqrt(2)^2
    assert figure.shown is not None and bar.ci is not None
    assert (bar.ci.low, bar.ci.high) == pytest.approx((figure.shown.low, figure.shown.high))
    line = render_bars([bar]).splitlines()[-1]
    assert line == f"- holds: {bar.name} ({bar.value:.1f}x {figure.shown.text()})"
    assert bar_json(bar)["ci_low"] == pytest.approx(figure.shown.low)
