"""The modelcheck plan and verdicts, without processes."""

from __future__ import annotations

from kit.analysis.modelcheck import CheckRow, CpuUse, LoadShift, cpu_use
from kit.analysis.stats import summarize
from kit.plan.modelcheck import (
    CELLS,
    CONTROL_KEY,
    campaign,
    parse_campaign,
    plan,
    split_key,
)
from kit.plan.units import MIB
from kit.report.modelcheck import render
from kit.results.client import ClientResult
from kit.results.records import MachineLoad, Measurement, ProcessCpu, RunMeta


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


def cpu(limited: int, bound: int = 0, runs: int = 6) -> CpuUse:
    return CpuUse(0.3, 5.0, 1.5, runs, limited, bound, 1.98, 2.0)


def test_a_row_off_on_a_saturated_machine_says_cpu_limited_not_outside() -> None:
    off = CheckRow(CELLS[1], "quiet", summarize([80, 80]), summarize([57, 57]), 5.0, 0, cpu(5))
    assert off.verdict == "CPU-limited"
    assert "machine saturated in 5/6 model runs" in off.cpu_note
    assert "3.3x grpc-go's CPU per MiB" in off.cpu_note
    free = CheckRow(CELLS[1], "quiet", summarize([80, 80]), summarize([57, 57]), 5.0, 0, cpu(2))
    assert free.verdict == "outside"  # most runs had a core to spare: a real difference
    assert free.cpu_note == ""
    close = CheckRow(CELLS[1], "quiet", summarize([80, 80]), summarize([79, 79]), 5.0, 0, cpu(6))
    assert close.verdict == "within"
    assert (
        "CPU-bound in 3/6"
        in CheckRow(
            CELLS[1], "busy", summarize([80]), summarize([57]), 5.0, 0, cpu(3, bound=3)
        ).cpu_note
    )
    assert CheckRow(CELLS[1], "quiet", None, None, None, 0, cpu(0)).cpu_note == ""


def test_the_report_shows_the_model_clients_cpu_per_row() -> None:
    rows = [CheckRow(CELLS[1], "quiet", summarize([80, 80]), summarize([57, 57]), 5.0, 0, cpu(5))]
    text = render(rows, [])
    assert "0.30 core, 3.3x grpc-go/MiB" in text
    assert "1.98/2 busy, 5/6 limited" in text
    assert "How the model depends on the machine:" in text


def _run(cpu_s: float, client_cores: float, busy_cores: float) -> Measurement:
    return Measurement(
        trial=CELLS[1].trial("model"),
        status="ok",
        result=ClientResult(client="h2", bytes=16 * MIB, elapsed_s=0.25, cpu_s=cpu_s),
        cpu=(ProcessCpu("client", client_cores),),
        meta=RunMeta(cpus=2, machine=MachineLoad(busy_cores, 0.5, busy_cores - 0.5, 2.0)),
    )


def test_cpu_use_from_the_runs() -> None:
    real = [_run(0.024, 0.1, 1.0)]
    model = [_run(0.08, 0.3, 1.95), _run(0.08, 0.3, 1.0), _run(0.064, 0.95, 1.0)]
    use = cpu_use(real, model)
    assert use is not None
    assert use.model_ms_per_mib == 5.0 and use.real_ms_per_mib == 1.5
    assert (use.model_limited, use.model_client_bound, use.model_runs) == (2, 1, 3)
    assert use.mostly_limited
    assert cpu_use(real, []) is None
