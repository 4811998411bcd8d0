"""`kit compare` and `kit knee` over real loopback: server, delay line, client processes.

Assertions are on verdicts and physics with wide margins (a 16x window difference at
10 ms), never on absolute speeds. Runs are short (0.2-0.3 s timed) to keep the file fast.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_support import kit, kit_here

from kit.analysis.compare import CompareMeta, build_report
from kit.campaign.runner import run_campaigns
from kit.plan.builder import parse_candidate
from kit.plan.compare import plan_from_settings
from kit.plan.options import PlanOptions
from kit.plan.units import format_bytes

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def test_identical_candidate_is_within_noise_in_5_of_6_comparisons(tmp_path: Path) -> None:
    """Six identical candidates against the baseline, interleaved in one campaign.

    Each candidate is a separate cell with its own runs, so each verdict is a separate
    comparison; they share the baseline's samples and floor (which makes them correlated:
    a bad baseline would fail many at once, so the 5-of-6 bar is not weakened by it).

    Five rounds, the command's default. With three, a candidate identical to the baseline
    is called faster by the overlap rule alone whenever its 3 samples hold the top 2 of the
    9 (3/9 x 2/8 = 8% each; a CI run saw 3 of 10); with five, the top 3 of 15 (2%), so a
    false verdict in two of six (faster or slower, ~4% each) is ~2% a run.
    """
    spec = "h2:window=256KiB,conn-window=256KiB"
    same = [parse_candidate(spec, f"same-{i}") for i in range(6)]
    settings = PlanOptions(rtt="4ms", duration="250ms", rounds=5, seed=7)
    plan = plan_from_settings(settings, parse_candidate(spec), same, title="identical")
    records = tmp_path / "identical.jsonl"
    outcome = run_campaigns([plan.campaign()], records, progress=None)
    report = build_report(CompareMeta.of(plan), outcome.measurements)
    assert report.floor is not None
    labels = {row.key: row.label for row in report.rows if row.key != "baseline"}
    assert all(row.runs_ok == 5 for row in report.rows if row.key != "baseline"), report.rows
    within = sum(label == "within noise" for label in labels.values())
    assert within >= 5, f"identical candidates: {labels}; {report.floor.describe()}"


def test_compare_end_to_end_finds_the_larger_window_faster(tmp_path: Path) -> None:
    records, markdown = tmp_path / "cmp.jsonl", tmp_path / "cmp.md"
    out = kit(
        "compare", "--rtt", "10ms", "--duration", "300ms", "--rounds", "3",
        "--baseline", "h2:window=64KiB,conn-window=64KiB",
        "--candidate", "h2:window=1MiB,conn-window=1MiB",
        "--candidate", "grpcio:grpc.http2.bdp_probe=0,grpc.http2.lookahead_bytes=65536",
        "--records", str(records), "--markdown", str(markdown), "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (data,) = json.loads(out.stdout)["comparisons"]
    rows = {r["name"]: r for r in data["rows"]}
    big = rows["h2:window=1MiB,conn-window=1MiB"]
    assert big["label"] == "faster" and big["change_pct"] > 100  # 16x the window
    base = rows["baseline"]
    # Physics: a 64 KiB window at 10 ms cannot beat 6.25 MiB/s (+10% for timer slop).
    assert base["median"] <= base["theory_mib_s"] * 1.10
    assert base["runs_ok"] == 6 and data["noise_floor"]["copies"] == 2
    assert data["rounds_done"] == 3
    assert "| baseline" in markdown.read_text(encoding="utf-8")
    lines = records.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 * 4  # 3 rounds x (2 candidates + 2 control copies)


def test_unary_compare_resumes_with_more_rounds(tmp_path: Path) -> None:
    records = tmp_path / "unary.jsonl"
    args = ["compare", "--rtt", "2ms", "--workload", "unary", "--calls", "20",
            "--candidate", "grpcio:grpc.http2.bdp_probe=0", "--records", str(records)]  # fmt: skip
    first = kit_here(*args, "--rounds", "2")
    assert first.returncode == 0, first.stderr
    again = kit_here(*args, "--rounds", "2")
    assert again.returncode == 2 and "--resume" in again.stderr
    more = kit_here(*args, "--rounds", "3", "--resume", "--json")
    assert more.returncode == 0, more.stderr
    (data,) = json.loads(more.stdout)["comparisons"]
    assert data["metric"] == "latency" and data["rounds_done"] == 3
    base = data["rows"][0]
    assert base["runs_ok"] == 6
    assert base["median"] >= 2.0  # a unary call waits at least one 2 ms round trip


def test_compare_a_fixed_transfer(tmp_path: Path) -> None:
    """--bytes: every run moves exactly that much per stream, and the setup says so."""
    records = tmp_path / "fixed.jsonl"
    out = kit_here(
        "compare", "--rtt", "2ms", "--bytes", "2MiB", "--rounds", "1",
        "--candidate", "h2:window=1MiB,conn-window=1MiB", "--records", str(records), "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (data,) = json.loads(out.stdout)["comparisons"]
    assert data["setup"].endswith("2 MiB per stream") and data["rounds_done"] == 1
    cells = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
    assert len(cells) == 3  # the candidate and the control's two copies
    for cell in cells:
        assert cell["status"] == "ok", cell["error"]
        assert cell["trial"]["workload"]["bytes_per_stream"] == 2 << 20
        assert cell["result"]["bytes"] == 2 << 20


def test_knee_end_to_end(tmp_path: Path) -> None:
    out = kit(
        "knee", "--rtt", "4ms", "--streams", "2", "--min-window", "64KiB", "--max-window", "256KiB",
        "--rounds", "1", "--duration", "200ms", "--records", str(tmp_path / "knee.jsonl"), "--json",
        "--rate", "100Mbit",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert re.search(r"^expected: about \d+ s \(6 windows, 1 round\(s\)", out.stderr, re.M)
    sweeps = json.loads(out.stdout)["knees"]
    assert [s["swept"] for s in sweeps] == ["stream window", "connection window"]
    rate_mib_s = 100e6 / 8 / (1 << 20)
    for sweep in sweeps:
        windows = [p["window_bytes"] for p in sweep["points"]]
        assert windows == [64 << 10, 128 << 10, 256 << 10]
        assert sweep["knee_window_bytes"] in windows
        # the bottleneck caps every window (10 % for the timer's and the ramp's slack)
        assert all(p["median_mib_s"] <= 1.1 * rate_mib_s for p in sweep["points"]), sweep
        knee = format_bytes(sweep["knee_window_bytes"])
        assert sweep["answer"].startswith(f"answer: at 4 ms on 100 Mbit/s: a {knee} window"), sweep
        typed = f"--window {knee.replace(' ', '')} --conn-window {knee.replace(' ', '')}"
        assert f"type: {typed} (the kit's h2 client)" in sweep["answer"]
        assert (
            f"measure it again: kit run --client h2 --rtt 4ms --rate 100Mbit {typed}"
            in (sweep["answer"])
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["compare", "--candidate", "curl"], "client 'curl' is not one of"),
        (["compare", "--preset", "windows", "--streams", "4"], "cannot be combined"),
        (["compare", "--preset", "speed"], "not one of windows"),
        (["compare", "--candidate", "h2", "--rtt", "fast"], "--rtt"),
        (["compare", "--candidate", "h2", "--resume"], "--resume"),
        (["compare", "--file", "missing.toml"], "does not exist"),
        (["knee", "--min-window", "1MiB", "--max-window", "1MiB"], "at least two windows"),
        (["compare", "--candidate", "h2", "--bytes", "8MiB", "--duration", "1s"], "not both"),
        (["compare", "--preset", "windows", "--bytes", "8MiB"], "cannot be combined"),
        (["compare", "--candidate", "h2", "--bytes", "lots"], "--bytes"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    out = kit_here(*args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kit: error:") and message in lines[0]


def test_a_compare_whose_every_run_failed_exits_4_after_its_report(tmp_path: Path) -> None:
    records = tmp_path / "failed.jsonl"
    out = kit(
        "compare", "--rtt", "0", "--duration", "200ms", "--rounds", "1",
        "--baseline", "grpcio:grpc.max_receive_message_length=10",
        "--candidate", "grpcio:grpc.max_receive_message_length=11",
        "--records", str(records),
    )  # fmt: skip
    assert out.returncode == 4, out.stderr
    assert "no result (every run failed)" in out.stdout
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("kit: error: every run of 'baseline', 'grpcio:"), out.stderr
    assert str(records) in last and "Traceback" not in out.stderr


def test_resume_refuses_a_changed_plan_and_a_missing_file(tmp_path: Path) -> None:
    held = tmp_path / "held.jsonl"
    held.write_bytes((REPO / "tests/fixtures/release-0.1/compare.jsonl").read_bytes())
    before = held.read_bytes()
    changed = kit_here(
        "compare", "--resume", "--records", str(held), "--candidate", "h2:window=3MiB"
    )
    assert changed.returncode == 2, changed.stderr
    assert "has no run of this plan (it holds 'compare-" in changed.stderr
    assert held.read_bytes() == before
    missing = kit_here(
        "compare", "--resume", "--records", str(tmp_path / "no.jsonl"), "--candidate", "h2"
    )
    assert (
        missing.returncode == 2 and "does not exist; there is nothing to resume" in missing.stderr
    )
    assert not (tmp_path / "no.jsonl").exists()
