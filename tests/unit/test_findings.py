"""``make run`` reads like a result: each table under the command that made it, and a closing
summary of what the four runs show (``kit report FILE --summary``), checked against the
records it came from (``tests/fixtures/runs/make-run.jsonl``: the four runs of a ``make run``
on a loaded 2-core machine)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kit.analysis import reference as ref
from kit.analysis.cells import cpu_limit
from kit.analysis.findings import findings
from kit.cli import main
from kit.plan.units import KIB, MIB
from kit.report.format import sig3
from kit.results.store import read_records

ROOT = Path(__file__).resolve().parents[2]
MAKE_RUN = ROOT / "tests" / "fixtures" / "runs" / "make-run.jsonl"


def _summary(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as done:
        main(["report", str(path), "--summary"])
    assert done.value.code == 0
    return capsys.readouterr().out


def _items(text: str) -> list[str]:
    """The summary's "- " items, each with its wrapped lines joined."""
    joined = re.sub(r"\n  ", " ", text)
    return [line[2:] for line in joined.splitlines() if line.startswith("- ")]


def test_the_summary_says_what_the_four_runs_show(capsys: pytest.CaptureFixture[str]) -> None:
    text = _summary(MAKE_RUN, capsys)
    assert all(len(line) <= 100 for line in text.splitlines())
    assert "efficiency = throughput / (window / RTT)" in text.splitlines()[0]  # defined first
    runs = {
        (m.trial.client.kind, m.trial.client.window_bytes): m
        for m in read_records(MAKE_RUN).measurements
    }
    items = _items(text)
    big, small = runs[("h2", 4 * MIB)], runs[("h2", 64 * KIB)]
    assert big.throughput_mib_s is not None and small.throughput_mib_s is not None
    assert big.theory_mib_s is not None
    assert items[0].startswith(
        f"h2, static 4 MiB at 20 ms: {sig3(big.throughput_mib_s)} MiB/s, efficiency "
        f"{big.throughput_mib_s / big.theory_mib_s:.2f} of {sig3(big.theory_mib_s)} MiB/s"
    )
    # the answer: the 4 MiB / 64 KiB ratio beside window / RTT's and the reference study's
    ratio = big.throughput_mib_s / small.throughput_mib_s
    (line,) = [i for i in items if "carries" in i]
    assert line == (
        f"h2 at 20 ms: 4 MiB carries {ratio:.1f}x what 64 KiB carries "
        f"({sig3(big.throughput_mib_s)} / {sig3(small.throughput_mib_s)} MiB/s); "
        f"window / RTT predicts 64x; the reference study measured "
        f"{ref.window_ratio(20.0):.0f}x"
    )
    assert f"{ref.window_ratio(20.0):.0f}x" == "48x"
    # grpcio's dynamic window: how far it grew, why nothing held it, the reference beside it
    dynamic = runs[("grpcio", None)]
    assert dynamic.frames is not None and dynamic.frames.window_final_bytes == 128 * MIB
    (grpcio,) = [i for i in items if i.startswith("grpcio, dynamic window")]
    assert "its window grew to 128 MiB (no rate on this link to hold it" in grpcio
    assert (
        f"the reference study's dynamic (grpc-go) client: {ref.THROUGHPUT_MIB_S[(20.0, None)]:g}"
        in grpcio
    )
    # the machine was saturated in every run: the summary says so, not a verdict on windows
    limited = sum(1 for m in runs.values() if cpu_limit(m) is not None)
    assert f"{limited} of 4 runs had no core to spare" in text


def test_the_summary_leaves_out_what_it_cannot_summarise(tmp_path: Path) -> None:
    found = findings(read_records(ROOT / "tests/fixtures/release-0.1/compare.jsonl").measurements)
    assert found.runs == () and found.ratios == ()  # a comparison's runs are its report's
    one = findings(read_records(MAKE_RUN).measurements[:1])
    assert len(one.runs) == 1 and one.ratios == ()  # one window: no ratio


def test_a_file_of_campaign_runs_says_where_they_are_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tables or compare file holds no lone run: the summary counts the campaigns' runs and
    names the first campaigns, never "no download run finished"; beside lone runs, a note."""
    tables = ROOT / "tests/fixtures/release-0.1/tables.jsonl"
    runs = read_records(tables).measurements
    names = list(dict.fromkeys(m.tags.campaign for m in runs))
    text = " ".join(_summary(tables, capsys).split())
    assert text.startswith(f"No lone run (kit run) in these records: their {len(runs)} run(s)")
    assert f"of campaigns ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})" in text
    assert text.endswith("are shown by kit report without --summary")
    assert "nothing to summarise" not in text and "What the 0 runs show" not in text
    both = tmp_path / "both.jsonl"
    compare = ROOT / "tests/fixtures/release-0.1/compare.jsonl"
    both.write_bytes(MAKE_RUN.read_bytes() + compare.read_bytes())
    mixed = " ".join(_summary(both, capsys).split())
    assert mixed.startswith("What the 4 runs show")
    n = len(read_records(compare).measurements)
    assert f"{n} run(s) of campaigns (compare-" in mixed


def test_summary_refuses_other_outputs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["report", str(MAKE_RUN), "--summary", "--json"])
    assert done.value.code == 2
    assert "--summary prints the summary alone; drop --json" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_echoes_each_command_above_its_table_and_ends_with_the_summary() -> None:
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "-o", "install", "run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    script = done.stdout
    shown = re.findall(r'echo "\$ (\.venv/bin/kit run [^"]*)"', script)
    ran = [c.strip() for c in re.findall(r'"; (\.venv/bin/kit run [^;\n\\]*)', script)]
    assert len(shown) == 4 and ran == shown  # each command shown above what it prints
    assert all(c.endswith("--records results/make-run.jsonl") for c in ran)
    assert script.index("rm -f results/make-run.jsonl") < script.index("kit run")
    last = script.strip().splitlines()[-1]
    assert last == ".venv/bin/kit report results/make-run.jsonl --summary"
