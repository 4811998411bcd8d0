"""The modelcheck plan and verdicts, without processes."""

from __future__ import annotations

import pytest

from kit.analysis.link import delivered_mib_s
from kit.analysis.modelcheck import CheckRow, CpuUse, LoadShift, cpu_use
from kit.analysis.stats import summarize
from kit.errors import UsageError
from kit.plan.modelcheck import (
    CELLS,
    CONTROL_KEY,
    PAIR_NAMES,
    PAIRS,
    campaign,
    control_key,
    pair_cells,
    parse_campaign,
    parse_pairs,
    plan,
    split_key,
)
from kit.plan.units import MIB
from kit.report.modelcheck import render
from kit.results.client import ClientResult
from kit.results.records import (
    DeliveryTrace,
    FrameSummary,
    MachineLoad,
    Measurement,
    ProcessCpu,
    RunMeta,
)

MS = 1_000_000


def test_every_cell_and_stack_runs_twice_per_round() -> None:
    runs = campaign("quiet", 0).schedule()
    keys = [split_key(r.key) for r in runs]
    for cell in pair_cells("grpc-go"):
        for stack in ("real", "model"):
            assert keys.count((cell.name, stack)) == 2
    assert CONTROL_KEY in {r.key for r in runs}
    assert {name for name, _ in keys} == {c.name for c in pair_cells("grpc-go")}


def test_each_pair_is_its_own_campaign_against_its_own_server() -> None:
    for pair in PAIR_NAMES:
        spec = campaign("busy", 1, pair=pair)
        assert parse_campaign(spec.name) == ("busy", 1)
        assert control_key(pair) in {c.key for c in spec.cells}
        for c in spec.cells:
            name, stack = split_key(c.key)
            assert name in {cell.name for cell in pair_cells(pair)}
            assert c.trial.server.kind == PAIRS[pair].real.split(":")[0]
            assert c.trial.client.kind == ("h2" if stack == "model" else c.trial.server.kind)
    tonic = campaign("quiet", 0, pair="hyper").cells[0].trial
    assert ("http2_adaptive_window", 1) in tonic.client.channel_options  # hyper's estimator on
    assert campaign("quiet", 0, pair="hyper").name == "modelcheck-hyper-quiet-r1"
    assert campaign("quiet", 0).name == "modelcheck-quiet-r1"  # grpc-go's, as before


def test_pairs_parse_and_plan_in_turn() -> None:
    assert parse_pairs("all") == PAIR_NAMES
    assert parse_pairs("hyper, grpc-java") == ("hyper", "grpc-java")
    for bad in ("foo", "hyper,hyper", ""):
        with pytest.raises(UsageError, match="--pair"):
            parse_pairs(bad)
    names = [s.name for _, s in plan(1, pairs=("hyper", "grpc-java"))]
    assert names == [
        "modelcheck-hyper-quiet-r1",
        "modelcheck-grpc-java-quiet-r1",
        "modelcheck-hyper-busy-r1",
        "modelcheck-grpc-java-busy-r1",
    ]


def test_rounds_alternate_conditions_and_reshuffle() -> None:
    specs = plan(2)
    assert [c for c, _ in specs] == ["quiet", "busy", "quiet", "busy"]
    orders = [[r.key for r in s.schedule()] for _, s in specs]
    assert len({tuple(o) for o in orders}) == 4
    assert parse_campaign(specs[3][1].name) == ("busy", 1)
    assert parse_campaign("compare-abc") is None


def row(real: list[float], model: list[float], floor: float | None, rounds: int = 3) -> CheckRow:
    return CheckRow(CELLS[0], "quiet", summarize(real), summarize(model), floor, 0, rounds=rounds)


def test_verdicts() -> None:
    assert row([10, 10], [10.5, 10.5], 5.0).verdict == "within"
    assert row([10, 10], [12, 12], 5.0).verdict == "outside"
    # 1.2 against 1.1 at a 5% floor: one round's interval (±12%) still reaches 1.1
    assert row([10, 10], [12, 12], 5.0, rounds=1).verdict == "not decided (needs 3 rounds)"
    assert row([10, 10], [20, 20], 5.0, rounds=1).verdict == "outside"  # far beyond the noise
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


def _delivered_run(start_ms: int, buckets: tuple[int, ...], end_ms: int) -> Measurement:
    """A run whose link delivered ``buckets`` (10 ms each from 0) and whose client timed
    [start_ms, end_ms]; the cell's link has 10 ms of down delay."""
    cell = pair_cells("grpc-java")[0]  # 100 Mbit/s x 100 ms: 50 ms down
    trial = cell.trial("real")
    trace = DeliveryTrace(origin_ns=0, bucket_ns=10 * MS, bytes=buckets)
    result = ClientResult(
        client="grpc-java",
        bytes=sum(buckets),
        elapsed_s=(end_ms - start_ms) / 1e3,
        t_start_ns=start_ms * MS,
        t_end_ns=end_ms * MS,
    )
    return Measurement(
        trial=trial, status="ok", result=result, frames=FrameSummary(delivered_down=trace)
    )


def test_delivered_throughput_starts_at_the_first_byte_not_at_the_clients_clock() -> None:
    """A client that sent its request 60 ms late: its own clock counts the 60 ms, the link's
    delivery from its first byte does not."""
    late = _delivered_run(0, (0,) * 6 + (MIB,) * 10 + (MIB,) * 5, 210)  # ends 160 ms + 50 ms down
    assert delivered_mib_s(late) == pytest.approx(10 * MIB / MIB / 0.1)  # 10 buckets, 0.1 s
    early = _delivered_run(0, (MIB,) * 10 + (MIB,) * 5, 150)
    assert delivered_mib_s(early) == pytest.approx(100.0)
    assert late.throughput_mib_s is not None and late.throughput_mib_s < 100.0
    unlimited = Measurement(
        trial=late.trial, status="ok", result=late.result, frames=FrameSummary()
    )
    assert delivered_mib_s(unlimited) is None  # no delivery trace without a rate


def test_the_report_names_each_pairs_stacks() -> None:
    java, tonic = pair_cells("grpc-java")[0], pair_cells("hyper")[0]
    rows = [
        CheckRow(java, "quiet", summarize([10, 10]), summarize([10.2, 10.2]), 3.0, 0, cpu(0)),
        CheckRow(tonic, "busy", summarize([9, 9]), summarize([9, 9]), 3.0, 0),
    ]
    text = render(rows, [LoadShift(tonic, 1.0, 1.3)])
    assert "grpc-java / h2 grpc-java" in text and "tonic / h2 hyper" in text
    assert "MiB/s delivered" in text and "3.3x grpc-java/MiB" in text
    assert "the model moves with the load, tonic does not" in text
    assert [r.verdict for r in rows] == ["within", "within"]
