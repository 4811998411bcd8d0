"""Table 8, the stacks: analysis, checks and rendering over a real quick run of it
(``tests/fixtures/tables-quick/stacks.jsonl``), plus the paths a quick run cannot show
(noise wider than a check's tolerance, a stack that was not built)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tables_support import synthetic

from kit.analysis.cells import CampaignView, group_campaigns
from kit.analysis.tables import evaluate_bars
from kit.analysis.tables.stacks import (
    Advertised,
    advertised,
    credit_bar,
    model_ratios,
    stack_version,
    windows_view,
)
from kit.campaign.tables import run_tables
from kit.plan import programs
from kit.plan.programs import Program
from kit.plan.tables import TablesSettings, plan_tables
from kit.plan.tables.stacks import STACKS_WINDOWS_CAMPAIGN, windows_cells, windows_key
from kit.plan.trial import Trial
from kit.report.tables import render_tables
from kit.report.tables.checks import render_bars
from kit.report.tables.stacks import StacksViews, render_stacks
from kit.results.records import Measurement, RunTags
from kit.results.store import RecordsRead, read_records
from kit.topology.topology import Topology

STORED = Path(__file__).resolve().parents[1] / "fixtures" / "tables-quick" / "stacks.jsonl"
KIB = 1024


@pytest.fixture(scope="module")
def read() -> RecordsRead:
    return read_records(STORED)


def _views(read: RecordsRead) -> dict[str, CampaignView]:
    return group_campaigns(read.measurements)


def test_the_fixture_is_a_quick_run_of_every_stack(read: RecordsRead) -> None:
    views = _views(read)
    windows = windows_view(views)
    assert windows is not None
    versions = {stack_version(c).split()[0] for c in windows.cells}
    assert versions == {"grpcio", "h2", "grpc-go", "grpc-java", "grpc-js", "tonic"}
    assert all(" " in stack_version(c) for c in windows.cells)  # "grpc-go 1.85.0"


def test_what_each_stack_advertised_on_the_wire(read: RecordsRead) -> None:
    windows = windows_view(_views(read))
    assert windows is not None

    def seen(kind: str, window: int | None) -> Advertised | None:
        cell = windows.cell(windows_key(20.0, kind, window))
        assert cell is not None
        return advertised(cell)

    go = seen("grpc-go", None)
    assert go is not None and go.initial_bytes is None  # grpc-go's dynamic SETTINGS: none
    assert go.conn_start_bytes == 65535 and go.growth_steps > 0  # grows from 64 KiB
    grpcio = seen("grpcio", None)
    assert grpcio is not None and grpcio.initial_bytes == 4 * 1024 * KIB
    assert grpcio.conn_start_bytes is not None and grpcio.conn_start_bytes >= 4 * 1024 * KIB - 1
    js = seen("grpc-js", None)
    assert js is not None and (js.initial_bytes, js.final_bytes, js.growth_steps) == (
        65535,
        65535,
        0,
    )
    java = seen("grpc-java", None)
    assert java is not None and java.initial_bytes == 1024 * KIB  # Netty's 1 MiB start
    for kind in ("h2", "grpc-go", "grpc-js"):
        static = seen(kind, 64 * KIB)
        assert static is not None and static.initial_bytes == 64 * KIB
        assert static.conn_start_bytes == 64 * KIB  # the connection window follows it


def test_checks_over_the_quick_run(read: RecordsRead) -> None:
    bars = {b.name.split(" (")[0]: b for b in evaluate_bars(_views(read)) if "stacks:" in b.name}
    assert len(bars) == 7
    bound = next(b for n, b in bars.items() if "no static window" in n)
    assert bound.holds is True  # physics: no stack beats window/RTT (C-core exempt)
    for kind in ("grpc-go", "grpc-java", "grpc-js"):
        credit = next(b for n, b in bars.items() if f"{kind} static 64 KiB" in n)
        assert credit.holds is not None or credit.undecided, credit  # measured
    rate = next(b for n, b in bars.items() if "more than the rate" in n)
    assert rate.holds is True
    js = next(b for n, b in bars.items() if "grpc-js's server" in n)
    assert js.holds is None and not js.undecided  # quick runs no default-window uploads


def test_model_beside_real_grpc_go(read: RecordsRead) -> None:
    links = _views(read)["table8-links"]
    ratios = model_ratios(links)
    assert [r.link for r in ratios] == ["100Mbit-20ms"]
    assert ratios[0].throughput is not None and 0.5 < ratios[0].throughput < 2.0


def test_the_report_renders_every_part(read: RecordsRead) -> None:
    text = render_tables(read, "stacks.jsonl")
    assert "## Table 8: the stacks side by side" in text
    for part in ("### A. ", "#### RTT 20 ms", "### B. ", "### C. ", "model of grpc-go beside"):
        assert part in text
    for header in ("SETTINGS INITIAL_WINDOW_SIZE", "conn window at start", "final window / BDP"):
        assert header in text
    assert "not sent (65535)" in text  # grpc-go's dynamic SETTINGS
    assert "grpc-java 1.85.1" in text and "grpc-js 1.14.7" in text
    assert text.count("Noise floor (control ") == 3
    assert "quarter-window credit" in text and "half-window" in text


def _credit_records(efficiencies: list[float]) -> dict[str, CampaignView]:
    """grpc-go's 64 KiB cell at 20 ms over rounds with these efficiencies, and a steady
    control (so the noise is the cell's own spread)."""
    cells = {c.key: c for c in windows_cells(quick=False)}
    cell = cells[windows_key(20.0, "grpc-go", 64 * KIB)]
    control = cells["rtt20ms-h2-static-1MiB"]
    theory = 64 * KIB / 0.02 / (1024 * KIB)
    records = []
    for i, eff in enumerate(efficiencies):
        tags = RunTags(campaign=STACKS_WINDOWS_CAMPAIGN, round=i, key=cell.key, run_id=f"{i}")
        records.append(synthetic(cell.trial, tags, mib_s=eff * theory))
        for copy in (0, 1):
            ctags = RunTags(
                campaign=STACKS_WINDOWS_CAMPAIGN,
                round=i,
                key=control.key,
                copy=copy,
                control=True,
                run_id=f"c{i}{copy}",
            )
            records.append(synthetic(control.trial, ctags, mib_s=40.0))
    return group_campaigns(records)


def test_credit_check_holds_fails_or_is_not_decided() -> None:
    holds = credit_bar(_credit_records([0.60, 0.62, 0.64]), "grpc-go")
    assert holds.holds is True
    fails = credit_bar(_credit_records([0.30, 0.31, 0.32]), "grpc-go")
    assert fails.holds is False and not fails.undecided
    noisy = credit_bar(_credit_records([0.20, 0.40, 0.90]), "grpc-go")
    assert noisy.holds is None and noisy.undecided and "3 rounds, needs" in noisy.detail
    assert "- not decided: stacks: grpc-go static 64 KiB" in render_bars([noisy])


def test_a_stack_that_was_not_built_gets_one_line() -> None:
    skipped = ("grpc-java skipped: stacks/grpc-java/target/kit-grpc-java.jar is missing",)
    text = render_stacks(StacksViews(None, None, None, skipped))
    assert "- grpc-java skipped: stacks/grpc-java/target/kit-grpc-java.jar is missing" in text
    assert "- grpc-go: no cells in these records" in text
    assert "- grpc-java: no cells" not in text  # one line per stack: the skipped one says why


class FakeTopology(Topology):
    def __init__(self, calls: list[Trial]) -> None:
        super().__init__(warm_up=False)
        self.calls = calls

    def measure(self, trial: Trial, tags: RunTags | None = None) -> Measurement:
        self.calls.append(trial)
        return synthetic(trial, tags or RunTags(), mib_s=10.0)


def test_run_tables_skips_a_stack_that_is_not_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    absent = Program(("nothing",), needs=(str(tmp_path / "absent.jar"),), hint="build it")
    built = Program(("nothing",), needs=(), hint="")  # the other stacks, built or not here
    for kind in ("grpc-go", "grpc-js", "tonic"):
        monkeypatch.setitem(programs.CLIENT_PROGRAMS, kind, built)
        monkeypatch.setitem(programs.SERVER_PROGRAMS, kind, built)
    monkeypatch.setitem(programs.CLIENT_PROGRAMS, "grpc-java", absent)
    monkeypatch.setitem(programs.SERVER_PROGRAMS, "grpc-java", absent)
    settings = TablesSettings(quick=True, rounds=1, only=("stacks",))
    lines: list[str] = []
    calls: list[Trial] = []
    path = tmp_path / "t.jsonl"
    outcome = run_tables(
        settings, path, topology_factory=lambda: FakeTopology(calls), on_skip=lines.append
    )
    assert lines == [f"grpc-java skipped: {tmp_path / 'absent.jar'} is missing (build it)"]
    planned = sum(len(c.spec.schedule()) for c in plan_tables(settings))
    java = [t for t in calls if "grpc-java" in (t.client.kind, t.server.kind)]
    assert not java and outcome.cells_run == len(calls) == planned - 2 - 1 - 1  # A, B, C
    session = read_records(path).sessions[0]
    assert session.skipped == tuple(lines) and session.complete
    text = render_tables(read_records(path), str(path))
    assert f"- grpc-java skipped: {tmp_path / 'absent.jar'} is missing (build it)" in text
