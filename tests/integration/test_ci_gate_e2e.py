"""What a CI job types, on stored records: ``kit check`` passes (exit 0) and fails (exit 6) with
each printed median the one the records give; a bad expression is one line and exit 2;
``kit report --benchmark-json`` writes each cell's median; every ``--json`` loads back in
the one documented shape."""

from __future__ import annotations

import json
import re
import shlex
import statistics
from pathlib import Path
from typing import Any

import pytest
from cli_support import kit_here

from kit.analysis.benchmark import campaign_stem
from kit.analysis.cells import group_campaigns, throughput
from kit.analysis.flat import flat_row
from kit.results.store import read_records

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RUNS = FIXTURES / "runs" / "windows-20ms.jsonl"
COMPARE = FIXTURES / "release-0.1" / "compare.jsonl"
KEYS = [
    "kit_report",
    "kit",
    "records",
    "runs",
    "comparisons",
    "knees",
    "tables",
    "expectations",
    "findings",
    "rows",
]
DOCS = Path(__file__).resolve().parents[2] / "docs"
DOCUMENTED = DOCS / "reference" / "json.md"
LINE = re.compile(r"^  ([✓✗]) (holds|fails)  (.+): median (\S+) of (\d+) row\(s\)")


def _median(path: Path, column: str, **where: str) -> tuple[float, int]:
    """The median of a flat-row column over the rows matching ``where``, from the records."""
    rows = [flat_row(m) for m in read_records(path).measurements]
    kept = [r for r in rows if all(str(r[k]) == v for k, v in where.items())]
    values = [r[column] for r in kept if r[column] is not None]
    return statistics.median(values), len(values)


def _printed(stdout: str) -> dict[str, tuple[str, float, int]]:
    """Each judgement line: expectation -> (holds/fails, median, rows)."""
    found = {}
    for line in stdout.splitlines():
        match = LINE.match(line)
        if match:
            found[match.group(3)] = (match.group(2), float(match.group(4)), int(match.group(5)))
    return found


def test_check_passes_with_the_records_medians() -> None:
    efficiency, n = _median(RUNS, "efficiency")
    h2, n_h2 = _median(RUNS, "throughput_mib_s", client="h2")
    low, half = round(efficiency - 0.01, 3), round(h2 / 2, 1)
    done = kit_here(
        "check", str(RUNS), "--expect", f"efficiency>={low}",
        "-e", f"throughput_mib_s > {half} where client=h2",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"kit check: {len(read_records(RUNS).measurements)} row(s) of {RUNS}"
    assert lines[1] == "each expectation is judged on the median of the rows it matches:"
    printed = _printed(done.stdout)
    assert printed[f"efficiency>={low:g}"] == ("holds", pytest.approx(efficiency), n)
    assert printed[f"throughput_mib_s>{half:g} where client=h2"] == (
        "holds",
        pytest.approx(h2),
        n_h2,
    )
    assert lines[-1] == "kit check: every expectation holds (2)" and done.stderr == ""


def test_check_fails_with_exit_6_after_every_line() -> None:
    h2, n_h2 = _median(RUNS, "throughput_mib_s", client="h2")
    done = kit_here(
        "check", str(RUNS), "-e", "rtt_ms==20",
        "-e", "throughput_mib_s>=100000 where client=h2",
        "-e", "throughput_mib_s>=1 where client=grpc-go",
    )  # fmt: skip
    assert done.returncode == 6
    printed = _printed(done.stdout)
    assert printed["rtt_ms==20"][0] == "holds"
    assert printed["throughput_mib_s>=100000 where client=h2"] == (
        "fails",
        pytest.approx(h2),
        n_h2,
    )
    assert "  ✗ fails  throughput_mib_s>=1 where client=grpc-go: no row matches (client is " in (
        done.stdout
    )
    assert done.stderr == (
        "kit: error: 2 of 3 expectation(s) failed: throughput_mib_s>=100000 where client=h2; "
        "throughput_mib_s>=1 where client=grpc-go\n"
    )


@pytest.mark.parametrize(
    ("expression", "said"),
    [
        ("throughput>=100", "no column 'throughput' (closest: throughput_mib_s"),
        ("efficiency=>0.9", "not an expectation; write COLUMN OP NUMBER"),
        ("client>=1", "client is text, not a number"),
    ],
)
def test_a_bad_expression_is_one_line_and_exit_2(expression: str, said: str) -> None:
    done = kit_here("check", str(RUNS), "--expect", expression)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"kit: error: --expect {expression!r}: ") and said in done.stderr


def test_check_refuses_a_file_without_records_one_line_and_exit_2(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n", encoding="utf-8")
    done = kit_here("check", str(notes), "-e", "efficiency>=0.9")
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr.splitlines()[-1]
        == f"kit: error: {notes} is not a kit records file (no line of it is a record)"
    )


@pytest.mark.parametrize(
    "name", ["release-0.1/compare.jsonl", "knee/grpc-go.jsonl", "tables-quick/stacks.jsonl"]
)
def test_benchmark_json_entries_are_the_cells_medians(name: str, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = kit_here("report", str(FIXTURES / name), "--benchmark-json", str(out))
    assert done.returncode == 0, done.stderr
    entries = {e["name"]: e for e in json.loads(out.read_text(encoding="utf-8"))}
    assert f"{len(entries)} benchmark entries written to {out}" in done.stderr
    cells = [
        c
        for view in group_campaigns(read_records(FIXTURES / name).measurements).values()
        for c in view.cells
        if c.values(throughput) and c.trial.workload.kind != "unary"
    ]
    assert len(cells) == len(entries)
    for cell in cells:
        values = cell.values(throughput)
        entry = entries[f"{campaign_stem(cell.campaign)}/{cell.key}"]
        assert entry["unit"] == "MiB/s"
        assert entry["value"] == pytest.approx(statistics.median(values), rel=5e-4)
        low, high = (float(v) for v in entry["range"].split("-"))
        assert low == pytest.approx(min(values), rel=5e-3)
        assert high == pytest.approx(max(values), rel=5e-3)


def _report_json(*args: str) -> dict[str, Any]:
    done = kit_here(*args)
    assert done.returncode in (0, 6), done.stderr
    loaded: dict[str, Any] = json.loads(done.stdout)
    return loaded


def test_every_json_is_one_documented_shape() -> None:
    report = _report_json("report", str(COMPARE), "--json")
    check = _report_json("check", str(COMPARE), "--json", "-e", "throughput_mib_s>=1")
    for data in (report, check):
        assert list(data) == KEYS
        assert data["kit_report"] == 1 and isinstance(data["kit"], str) and data["kit"]
        assert json.loads(json.dumps(data)) == data
        rows = [json.loads(json.dumps(flat_row(m))) for m in read_records(COMPARE).measurements]
        assert data["rows"] == rows
        assert [c["rows"] for c in data["comparisons"]] == [
            c["rows"] for c in report["comparisons"]
        ]
    assert report["expectations"] == [] and report["findings"] is None
    (judged,) = check["expectations"]
    median, n = _median(COMPARE, "throughput_mib_s")
    assert judged["median"] == pytest.approx(median) and judged["values"] == n
    assert judged["holds"] is True
    text = DOCUMENTED.read_text(encoding="utf-8")
    assert all(f'"{key}"' in text for key in KEYS)


def test_the_ci_guides_example_is_what_kit_check_prints() -> None:
    text = (DOCS / "guides" / "ci.md").read_text(encoding="utf-8")
    example = re.search(r"```text\n\$ (kit check [^\n]*)\n(.*?)```", text, re.S)
    assert example is not None
    done = kit_here(*shlex.split(example.group(1))[1:])
    assert done.returncode == 6
    assert done.stdout + done.stderr == example.group(2)


@pytest.mark.parametrize(
    "command",
    [
        ("report", str(COMPARE)),
        ("tables", "--quick", "--only", "unary"),
        ("compare", "--candidate", "h2"),
        ("knee",),
    ],
)
def test_a_page_on_stdout_is_refused_one_line_and_exit_2(command: tuple[str, ...]) -> None:
    """Before reading or measuring anything: the page goes to a file."""
    done = kit_here(*command, "--html", "-")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "kit: error: --html -: the page is written to a file; name one (--html report.html)\n"
    )


def test_benchmark_json_on_stdout_is_stdouts_one_format() -> None:
    alone = kit_here("report", str(COMPARE), "--benchmark-json", "-")
    assert alone.returncode == 0 and [e["name"] for e in json.loads(alone.stdout)] == [
        "compare/baseline",
        "compare/h2:window=1MiB",
    ]
    both = kit_here("report", str(COMPARE), "--benchmark-json", "-", "--json")
    assert both.returncode == 2 and both.stdout == "" and len(both.stderr.splitlines()) == 1
