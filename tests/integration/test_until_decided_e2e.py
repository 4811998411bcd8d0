"""Intervals and ``--until-decided`` over real loopback: server, delay line, client processes.

Tiny cells (150-200 ms timed at 2 ms RTT), 3 rounds. An A/A comparison (the baseline's own
spec as two candidates) is never called faster or slower; ``--until-decided`` adds rounds
only to what is open, within ``--max-rounds`` and ``--time-limit``, and what it says stayed
undecided is what the records say (``kit report --json`` of the same file).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from cli_support import kit

from kit.results.store import read_records

pytestmark = pytest.mark.integration

SAME = "h2:window=256KiB,conn-window=256KiB"
SAME_AGAIN = "h2:conn-window=256KiB,window=256KiB"  # the same trial, another name


def _report(records: Path) -> dict[str, object]:
    out = kit("report", str(records), "--json")
    assert out.returncode == 0, out.stderr
    (comparison,) = json.loads(out.stdout)["comparisons"]
    assert isinstance(comparison, dict)
    return comparison


def test_an_aa_compare_is_never_faster_or_slower(tmp_path: Path) -> None:
    records = tmp_path / "aa.jsonl"
    out = kit(
        "compare", "--rtt", "2ms", "--duration", "200ms", "--rounds", "3", "--seed", "3",
        "--baseline", SAME, "--candidate", SAME, "--candidate", SAME_AGAIN,
        "--records", str(records),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = _report(records)
    rows = {r["name"]: r for r in data["rows"]}  # type: ignore[attr-defined]
    for name in (SAME, SAME_AGAIN):
        row = rows[name]
        assert row["label"] in ("within noise", "not decided"), row
        assert row["ci_low"] is not None and row["ci_low"] <= row["ratio"] <= row["ci_high"]
        # the printed line carries the same ratio and interval
        line = next(x for x in out.stdout.splitlines() if x.startswith(name[:8]))
        assert f"{row['ratio']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}]" in line, line
    assert all(len(line) <= 100 for line in out.stdout.splitlines())


def test_until_decided_adds_rounds_only_where_open_and_says_what_stayed_open(
    tmp_path: Path,
) -> None:
    records = tmp_path / "until.jsonl"
    started = time.monotonic()
    out = kit(
        "compare", "--rtt", "2ms", "--duration", "150ms", "--rounds", "3", "--seed", "5",
        "--baseline", "h2:window=64KiB,conn-window=64KiB",
        "--candidate", "h2:window=80KiB,conn-window=80KiB",
        "--candidate", SAME,
        "--until-decided", "--max-rounds", "4", "--time-limit", "90s",
        "--records", str(records),
    )  # fmt: skip
    took = time.monotonic() - started
    assert out.returncode == 0, out.stderr
    assert took < 90 + 30  # the limit, plus the processes' start and the report
    summary = out.stderr[out.stderr.index("until decided:") :]
    data = _report(records)
    assert data["rounds_done"] <= 4  # --max-rounds
    open_ = {r["name"] for r in data["rows"] if r["label"] == "not decided"}  # type: ignore[attr-defined]
    if open_:  # what it says stayed open is what the records say, with the rounds it needs
        assert "still not decided:" in summary
        for row in data["rows"]:  # type: ignore[attr-defined]
            if row["name"] in open_:
                more = "+" if row["needs_rounds"] >= 50 else ""
                assert f"- {row['name']}: needs {row['needs_rounds']}{more} rounds" in summary
                assert f"not decided: {row['name'][:8]}" in out.stdout
    else:
        assert summary.startswith("until decided: every cell is decided")
    # an added round ran the control's two copies and only cells open before it
    runs = read_records(records).measurements
    added = [m for m in runs if m.tags.round >= 3]
    if added:
        assert sum(m.tags.key == "baseline" for m in added) == 2 * len(
            {m.tags.round for m in added}
        )
        assert {m.tags.key for m in added} - {"baseline"} <= {
            "h2:window=80KiB,conn-window=80KiB",
            SAME,
        }
    # resume keeps them: nothing is left to run, nothing is refused
    again = kit("compare", "--rtt", "2ms", "--duration", "150ms", "--rounds", "3", "--seed",
                "5", "--baseline", "h2:window=64KiB,conn-window=64KiB",
                "--candidate", "h2:window=80KiB,conn-window=80KiB", "--candidate", SAME,
                "--records", str(records), "--resume")  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert len(read_records(records).measurements) == len(runs)
