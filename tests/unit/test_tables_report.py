"""kit.report.tables over kit.analysis (cells, tables, checks): synthetic records in, markdown
tables and checks out."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tables_support import campaign_tags, frames, synthetic

from kit.analysis.cells import group_campaigns, throughput
from kit.analysis.tables import evaluate_bars
from kit.cli import main
from kit.cli.tables import _failed_text
from kit.plan.tables import TableCampaign, TablesSettings, plan_tables
from kit.report.tables import render_tables
from kit.results.records import (
    FrameSummary,
    Measurement,
    SessionRecord,
    SideFrames,
    WindowUpdates,
)
from kit.results.store import RecordsRead, append_record, read_records

Spec = Callable[[str, int, int], dict[str, Any]]


def records_for(campaign: TableCampaign, spec: Spec) -> list[Measurement]:
    """One synthetic record per scheduled run; spec(key, round, copy) -> synthetic() kwargs."""
    out = []
    for run in campaign.spec.schedule():
        tags = campaign_tags(campaign, run.cell, run.round_index, run.copy)
        out.append(synthetic(run.cell.trial, tags, **spec(run.key, run.round_index, run.copy)))
    return out


LOOPBACK = {"4MiB": 400.0, "1MiB": 380.0, "256KiB": 300.0, "64KiB": 200.0}


def table1_spec(rtt_ms: float) -> Spec:
    def spec(key: str, round_index: int, copy: int) -> dict[str, Any]:
        window = key.rsplit("-", 1)[-1]
        if rtt_ms == 0:
            rate = LOOPBACK.get(window, 300.0)
        elif key.startswith("h2-static"):
            rate = (
                {"64KiB": 64, "256KiB": 256, "1MiB": 1024, "4MiB": 4096}[window]
                / 1024
                / (rtt_ms / 1000)
                * 0.95
            )
        else:
            rate = 50.0
        kwargs: dict[str, Any] = {"mib_s": rate * (1 + 0.01 * round_index + 0.005 * copy)}
        if rtt_ms == 5 and key == "grpcio-static-256KiB":
            kwargs["failed"] = "client timed out after 30 s and was stopped"
        if rtt_ms == 0 and key == "h2-static-4MiB":
            kwargs["cpu"] = (("client", 0.97), ("proxy", 0.5), ("server", 0.4))
        if rtt_ms == 20 and key == "grpcio-dynamic-timed":
            kwargs["mib_s"] = (100.0, 130.0, 115.0)[round_index]
        if rtt_ms == 20 and key == "h2-dynamic-8MiB":
            kwargs["frames"] = frames(
                {"INITIAL_WINDOW_SIZE": 65535}, [65535, 131072], [65535, 131072, 262144, 524288]
            )
        return kwargs

    return spec


def starvation_spec(key: str, round_index: int, copy: int) -> dict[str, Any]:
    rate = 10.0 if key == "h2-conn-64KiB" else 300.0
    return {"mib_s": rate + round_index, "finish_s": (1.5, 1.55, 1.6, 1.62)}


def unary_spec(key: str, round_index: int, copy: int) -> dict[str, Any]:
    base = 5.9 + 0.05 * round_index + 0.02 * copy + (0.03 if "static" in key else 0.0)
    return {"latencies_ms": tuple(base + 0.01 * i for i in range(20))}


UPLOAD_RATES = {"64KiB": 2.0, "1.4MB": 10.0, "4MiB": 26.0, "dynamic": 80.0}


def upload_spec(key: str, round_index: int, copy: int) -> dict[str, Any]:
    """Server window sets the rate; the 16 MiB client window changes nothing (within noise)."""
    window = key.split("-server-", 1)[1].split("-client-", 1)[0]
    rate = UPLOAD_RATES[window] * (1 + 0.02 * round_index + 0.01 * copy)
    return {
        "mib_s": rate,
        "frames": FrameSummary(
            server=SideFrames(
                settings={"INITIAL_WINDOW_SIZE": 65536},
                conn_window_updates=WindowUpdates(count=2, total=262144, first=(65536, 196617)),
            )
        ),
    }


def all_records(settings: TablesSettings) -> list[Measurement]:
    records: list[Measurement] = []
    for campaign in plan_tables(settings):
        if campaign.name.startswith("table1-"):
            rtt = campaign.spec.cells[0].trial.link.rtt_ms
            records += records_for(campaign, table1_spec(rtt))
        elif campaign.name == "table3-starvation":
            records += records_for(campaign, starvation_spec)
        elif campaign.name.startswith("table5-"):
            records += records_for(campaign, upload_spec)
        else:
            records += records_for(campaign, unary_spec)
    return records


SETTINGS = TablesSettings(rounds=3, seed=2)
SESSION = SessionRecord(
    started_at="",
    elapsed_s=250.0,
    cells_run=216,
    cells_planned=216,
    complete=True,
    load_1min=(0.4, 1.9),
)


def _read(measurements: list[Measurement]) -> RecordsRead:
    return RecordsRead(tuple(measurements), tables_plans=(SETTINGS,), sessions=(SESSION,))


@pytest.fixture(scope="module")
def markdown() -> str:
    return render_tables(_read(all_records(SETTINGS)), "results/tables-x.jsonl")


def _row(markdown: str, section: str, label: str, transfer: str = "") -> str:
    text = markdown.split(section, 1)[1]
    return next(
        line for line in text.splitlines() if line.startswith(f"| {label} ") and transfer in line
    )


def test_median_and_min_max_and_reference(markdown: str) -> None:
    row = _row(markdown, "### RTT 20 ms", "h2 static 4 MiB")
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "192 (190-194)"  # rounds at +0%, +1%, +2%, in three figures
    assert cells[3] == "200" and cells[4] == "0.959"  # median 191.9 / theory, three figures
    assert cells[6] == "119.5"  # the reference's 20 ms / 4 MiB figure


def test_failed_cpu_bound_and_unstable_cells_are_marked(markdown: str) -> None:
    failed = _row(markdown, "### RTT 5 ms", "grpcio static 256 KiB")
    assert "FAILED" in failed and "failed 3/3: client timed out" in failed
    assert "| 0" not in failed  # a failed cell is never shown as zero
    assert "CPU-bound: client 3/3" in _row(markdown, "### loopback", "h2 static 4 MiB")
    assert "spread 26.1%" in _row(markdown, "### RTT 20 ms", "grpcio dynamic (C-core BDP)", "timed")


def test_dynamic_rows_state_their_transfer_and_only_the_short_one_gets_the_reference(
    markdown: str,
) -> None:
    short = _row(markdown, "### RTT 20 ms", "h2 dynamic (grpc-go-style BDP)", "8 MiB")
    timed = _row(markdown, "### RTT 20 ms", "h2 dynamic (grpc-go-style BDP)", "timed 1 s")
    assert "23.4" in short and "23.4" not in timed


def test_noise_floor_per_table(markdown: str) -> None:
    assert markdown.count("Noise floor (control `h2-static-1MiB`)") == 3
    assert "Noise floor (control `h2-conn-64KiB`)" in markdown
    assert "Noise floor (control `grpcio-dynamic`)" in markdown
    assert "3 rounds x 2 copies" in markdown


def test_wire_table_shows_growth_and_reference(markdown: str) -> None:
    row = _row(markdown, "## Table 2", "h2 dynamic (grpc-go-style BDP)", "8 MiB")
    assert "grew: 64 KiB -> 128 KiB -> 256 KiB -> 512 KiB (4 SETTINGS)" in row
    assert "INITIAL_WINDOW_SIZE=65535" in row
    assert "16384 16384 16384 16383 65535" in _row(
        markdown, "## Table 2", "reference: grpc-go dynamic"
    )
    assert "no tap records" in _row(markdown, "## Table 2", "h2 static 64 KiB")


def test_starvation_and_unary_tables(markdown: str) -> None:
    slow = _row(markdown, "## Table 3", "64 KiB (65536 B)")
    assert "1500 / 1550 / 1600 / 1620 (spread 120)" in slow and "1765.9 ms" in slow
    assert "12.5 (1280 ms)" in slow  # theory: the 64 KiB connection window binds
    assert "**27.4x** faster (reference: 44.5x)" in markdown
    row = _row(markdown, "## Table 4", "h2 static 64 KiB")
    assert "within noise" in row


def test_header_reports_settings_time_and_load(markdown: str) -> None:
    assert (
        "default cells" in markdown
        and "3 round(s), seed 2, tables windows,wire,starvation,unary" in markdown
    )
    assert "Measured 216 cells in 250 s (4 min 10 s" in markdown
    assert "load average during the run: 0.4-1.9" in markdown
    assert "kit report results/tables-x.jsonl" in markdown


def test_bars_evaluated_from_records(markdown: str) -> None:
    bars = {b.name.split(":")[0]: b for b in evaluate_bars(group_campaigns(all_records(SETTINGS)))}
    at20 = bars["RTT 20 ms"]
    # three rounds: the ratio carries its interval, the one its check was judged by
    assert at20.holds is True and at20.ci is not None and at20.value is not None
    assert at20.ci.low <= at20.value <= at20.ci.high
    assert at20.detail == f"64.0x {at20.ci.text()}"
    assert bars["loopback ratio far smaller (<= 1/3 of 20 ms)"].holds is True
    assert bars["starvation"].holds is True
    assert bars["unary"].holds is True
    assert bars["h2 static efficiency >= 0.90 where window/RTT <= 200 MiB/s"].holds is True
    assert "- holds: RTT 20 ms" in markdown


def test_bars_fail_or_are_not_measured_honestly() -> None:
    settings = TablesSettings(rounds=1, only=("windows",))
    records = [
        m
        for m in all_records(settings)
        if m.tags.key != "h2-static-64KiB" or m.tags.campaign != "table1-rtt20ms"
    ]
    slow = [
        m
        for m in records
        if m.tags.campaign == "table1-rtt5ms" and m.tags.key == "h2-static-256KiB"
    ]
    assert slow and (slow[0].throughput_mib_s or 0) > 0
    views = group_campaigns(records)
    bars = {b.name.split(":")[0]: b for b in evaluate_bars(views)}
    assert bars["RTT 20 ms"].holds is None  # its 64 KiB cell is missing
    assert bars["starvation"].holds is None and bars["unary"].holds is None
    cell = views["table1-rtt5ms"].cell("h2-static-256KiB")
    assert cell is not None and cell.summary(throughput) is not None


def test_report_command_rerenders_without_measuring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tables.jsonl"
    append_record(path, SETTINGS)
    append_record(path, SESSION)
    for m in all_records(SETTINGS):
        append_record(path, m)
    out = tmp_path / "tables.md"
    with pytest.raises(SystemExit) as exc:
        main(["report", str(path), "--markdown", "--out", str(out)])
    assert exc.value.code == 0
    printed = capsys.readouterr().out
    written = out.read_text()
    assert written.startswith(printed) and "## Table 4" in printed
    # The file also links the figures, written beside it.
    assert "![throughput-vs-window](throughput-vs-window.png)" in written[len(printed) :]
    assert (tmp_path / "throughput-vs-window.png").stat().st_size > 10_000
    with pytest.raises(SystemExit) as exc:
        main(["report", str(path)])  # laid out for a terminal: within 100 columns
    laid_out = capsys.readouterr().out
    assert exc.value.code == 0 and "## Table 4" in laid_out
    assert max(len(line) for line in laid_out.splitlines()) <= 100


def test_report_command_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "runs.jsonl"
    empty.write_text(
        '{"schema": 2, "kind": "tables-session", "started_at": "", "elapsed_s": 1.0, '
        '"cells_run": 0, "cells_planned": 0, "complete": true}\n'
    )
    # A missing records file is bad input, like any other wrong path the user names.
    for argv, code in (([str(empty)], 2), ([str(tmp_path / "missing.jsonl")], 2)):
        with pytest.raises(SystemExit) as exc:
            main(["report", *argv])
        assert exc.value.code == code
        err = capsys.readouterr().err
        assert err.startswith("kit: error: ") and err.count("\n") == 1


def test_a_record_with_a_zero_theory_does_not_break_the_checks() -> None:
    """Found by fuzzing ``kit report``: theory 0 divided the efficiency check by zero."""
    records = [replace(m, theory_mib_s=0.0) for m in all_records(TablesSettings(rounds=1))]
    bars = {b.name.split(":")[0]: b for b in evaluate_bars(group_campaigns(records))}
    assert bars["h2 static efficiency >= 0.90 where window/RTT <= 200 MiB/s"].holds is None


def test_uploads_table_shows_server_windows_theory_and_the_haproxy_shape(markdown: str) -> None:
    table = markdown.split("## Table 5", 1)[1].split("## Checks", 1)[0]
    at20, at103 = table.split("### RTT 103 ms", 1)
    row = _row(at103, "|", "h2 (receive window 64 KiB)", "| 64 KiB ")
    assert "5.1 Mbit/s" in row and "64 KiB; largest conn update 192 KiB" in row
    assert "| 0.607 " in row  # theory = 64 KiB / 103 ms = 0.607 MiB/s
    grpcio = _row(at103, "|", "grpcio", "| 4 MiB ")
    assert "257 Mbit/s" in grpcio and "| 38.8 " in grpcio
    assert "(64 KiB window)" not in at20  # HAProxy measured at 103 ms only
    effects = at103.split("The write path follows the server's window only", 1)[1]
    assert "client receive window 64 KiB -> 16 MiB (server 4 MiB): within noise" in effects
    assert "server receive window 64 KiB -> 4 MiB (client 64 KiB): +" in effects


def test_upload_bars(markdown: str) -> None:
    checks = markdown.split("## Checks", 1)[1]
    # three rounds: the ratio beside the interval it was judged by
    assert re.search(
        r"holds: uploads at 103 ms: server window 4 MiB >= 8x 64 KiB \(h2\) "
        r"\(13\.1x \[\d+\.\d, \d+\.\d\]\)",
        checks,
    ), checks
    assert (
        "holds: uploads: the client's receive window is within noise, the server's is not" in checks
    )


def test_the_runs_last_line_counts_a_pairs_hang_up_apart_from_failures() -> None:
    """A stack pair whose run ended in error is the pairs table's finding, not a failure of
    the run: the last line counts it apart (from the records: 1 of the quick pairs' 56)."""
    fixtures = Path(__file__).parent.parent / "fixtures" / "tables-quick"
    pairs = read_records(fixtures / "pairs.jsonl").measurements
    stacks = read_records(fixtures / "stacks.jsonl").measurements
    ended = sum(1 for m in pairs if not m.ok)
    assert ended == 1
    assert _failed_text([*stacks, *pairs]) == (
        "0 failed (and 1 stack pair(s) whose run ended in error: the pairs table says why)"
    )
    broken = [replace(stacks[0], status="failed"), *stacks[1:]]
    assert _failed_text(broken) == "1 failed"
