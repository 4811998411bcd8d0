"""``kit report`` on a records file of any size: a line per run, the latest runs' tables,
memory bounded by the cap on tables, not by the records (2,000 vs 20,000 runs)."""

from __future__ import annotations

import dataclasses
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from kit.cli import main
from kit.report.document import MAX_RUN_TABLES, render_records, report_chunks, scan_records
from kit.results.records import Measurement
from kit.results.store import iter_records, read_records

FIXTURES = Path(__file__).parent.parent / "fixtures"
TEMPLATES = (FIXTURES / "release-0.1" / "runs.jsonl", FIXTURES / "runs" / "h2-8-streams.jsonl")
# Holding every run's table (~3 KB) and summary line would take ~70 MiB at 12,000 runs;
# streamed, the peak is the cap's tables and a record in flight (measured 0.06-0.1 MiB at
# both sizes; the records here are objects, a file's lines add one line's bytes).
PEAK_BOUND_BYTES = 2 * 2**20
GROWTH_BOUND, GROWTH_SLACK_BYTES = 1.5, 256 * 2**10  # 10x the runs: the peak barely moves


def _templates() -> list[Measurement]:
    found = [r for p in TEMPLATES for r in read_records(p).measurements]
    assert len(found) == 6 and not any(m.tags.campaign for m in found)
    return found


def _runs(n: int, templates: list[Measurement]) -> Iterator[Measurement]:
    """``n`` lone runs, each a fresh object (its own start time), as a file's lines are."""
    for i in range(n):
        m = templates[i % len(templates)]
        meta = dataclasses.replace(m.meta, started_at=f"2026-12-01T{i // 3600 % 24:02d}:00:00")
        yield dataclasses.replace(m, meta=meta)


def _peak_of_report(n: int, templates: list[Measurement]) -> tuple[int, int, str]:
    """(peak traced bytes, characters printed, the report's last chunk) for ``n`` runs."""
    tracemalloc.start()
    try:
        scan = scan_records(_runs(n, templates))
        printed, last = 0, ""
        for chunk in report_chunks(scan, lambda: _runs(n, templates), "runs.jsonl"):
            printed += len(chunk)
            last = chunk or last
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, printed, last


def test_report_memory_is_bounded_from_1200_to_12000_runs() -> None:
    templates = _templates()
    small, small_chars, _ = _peak_of_report(1_200, templates)
    large, large_chars, _ = _peak_of_report(12_000, templates)
    assert large < PEAK_BOUND_BYTES, f"peak {large / 2**20:.2f} MiB at 12,000 runs"
    assert large < small * GROWTH_BOUND + GROWTH_SLACK_BYTES, (
        f"{small / 2**20:.2f} -> {large / 2**20:.2f} MiB"
    )
    # the output itself grows (a summary line per run): only what is held does not
    assert large_chars > small_chars * 5


def _file(tmp_path: Path, runs: int) -> Path:
    lines = [line for p in TEMPLATES for line in p.read_bytes().splitlines()]
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"".join(lines[i % len(lines)] + b"\n" for i in range(runs)))
    return path


def _report(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as done:
        main(["report", *args])
    assert done.value.code == 0
    return capsys.readouterr().out


def test_a_long_runs_file_prints_every_summary_line_and_the_latest_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    runs = MAX_RUN_TABLES + 5
    path = _file(tmp_path, runs)
    text = _report([str(path)], capsys)
    assert text.startswith(f"{runs} runs\n\n")
    summary = text.split("\n\n")[1].splitlines()
    assert summary[0].split()[:3] == ["#", "started", "client"]
    assert len(summary) == 2 + runs and summary[-1].lstrip().startswith(f"{runs} ")
    assert all(len(line) <= 100 for line in text.splitlines() if str(path) not in line)
    assert f"every run's table (5 more):\n  kit report --all {path}\n" in text
    shown = [n for n in range(1, runs + 1) if f"\nrun {n} of {runs}\n" in text]
    assert shown == list(range(6, runs + 1))  # the latest MAX_RUN_TABLES, in order
    every = _report([str(path), "--all"], capsys)
    assert [n for n in range(1, runs + 1) if f"\nrun {n} of {runs}\n" in every] == list(
        range(1, runs + 1)
    )
    assert "kit report --all" not in every
    # the whole-file renderer (tests, --out) prints the same report
    assert render_records(read_records(path), str(path), width=100) == text


def test_report_csv_streams_every_run_under_one_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, 30)
    out = tmp_path / "runs.csv"
    _report([str(path), "--csv", str(out)], capsys)
    lines = out.read_text().splitlines()
    assert len(lines) == 31 and lines[0].startswith("schema,status,client,")
    warnings: list[str] = []
    assert sum(1 for _ in iter_records(path, warnings)) == 30 and warnings == []


def test_a_file_of_no_records_is_named_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "notes.md"
    path.write_text("".join(f"# line {i}\n" for i in range(500)))
    with pytest.raises(SystemExit) as done:
        main(["report", str(path)])
    assert done.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) <= 7, err  # the first few lines, how many more, and the verdict
    assert err[-1] == f"kit: error: {path} is not a kit records file (no line of it is a record)"
    assert "495 more line(s) skipped likewise" in err[-2]
