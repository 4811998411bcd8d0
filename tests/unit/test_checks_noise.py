"""A model check decides FAIL only beyond its noise (``kit.analysis.tables.checks.decide``).

A quick ``kit tables`` run has one round: the grpc-go model's final window / BDP at 0.57 and
0.63 of real grpc-go's (against 0.7-1.3) lies inside that round's noise (a final window
grows in doublings: the control's two copies differ by 41%), so the check is "not decided
(needs N rounds)" and the run exits 0; a model carrying half of the real stack's throughput
(the control's copies within 4%) FAILS in the same one round. The records are the stored
quick run of the policies table with those figures edited in, read by ``kit report`` as a
user types it.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from pathlib import Path

import pytest

from kit.analysis.tables.checks import (
    Bar,
    Figure,
    decide,
    half_width_pct,
    judged_bar,
    rounds_needed,
    spread_of,
)
from kit.cli import main
from kit.report.tables import failed_checks_line
from kit.report.tables.checks import failed_line
from kit.results.records import Measurement
from kit.results.store import append_record, read_records

STORED = Path(__file__).resolve().parents[1] / "fixtures" / "tables-quick" / "policies.jsonl"
GO_1X, GO_4X = "100Mbit-20ms-1x-grpc-go", "100Mbit-20ms-4x-grpc-go"
REAL_1X, REAL_4X = "100Mbit-20ms-1x-real-grpc-go", "100Mbit-20ms-4x-real-grpc-go"


def test_the_rule_fails_a_figure_only_when_its_interval_clears_the_range() -> None:
    target = (0.7, 1.3)
    assert decide(Figure(1.0, 60.0, 1), target).verdict == "inside"
    near = decide(Figure(0.6, 58.0, 1), target)  # ±102%: the interval reaches 0.7
    assert near.verdict == "not decided" and near.needs is not None and near.needs > 1
    assert near.rounds_text == f"needs {near.needs} rounds"
    # the rounds it names are the rounds whose interval clears the range
    assert half_width_pct(58.0, near.needs) <= (0.7 - 0.6) / 0.6 * 100
    assert half_width_pct(58.0, near.needs - 1) > (0.7 - 0.6) / 0.6 * 100
    assert decide(Figure(0.6, 58.0, near.needs), target).verdict == "outside"
    assert decide(Figure(0.3, 6.0, 1), target).verdict == "outside"  # far beyond the noise
    unknown = decide(Figure(0.6, None, 1), target)  # no rounds' spread, no control floor
    assert unknown.verdict == "not decided" and unknown.rounds_text.startswith("no noise floor")
    assert rounds_needed(0.01, 58.0) == 50
    assert decide(Figure(0.6999, 58.0, 1), target).rounds_text == "needs 50+ rounds"


def _quiet(m: Measurement) -> Measurement:
    """``m`` as if measured on a quiet machine: the stored run was recorded on a busy one
    (most of its runs had no core to spare), which no check takes for a verdict."""
    machine = m.meta.machine
    if machine is None:
        return m
    busy = machine.path_cores + 0.1
    meta = dataclasses.replace(
        m.meta, machine=dataclasses.replace(machine, busy_cores=busy, other_cores=0.1)
    )
    cpu = tuple(dataclasses.replace(c, cpu_fraction=min(c.cpu_fraction, 0.5)) for c in m.cpu)
    return dataclasses.replace(m, meta=meta, cpu=cpu)


def _edited(
    tmp_path: Path, name: str, edit: dict[str, float], throughput: float = 1.0, quiet: bool = True
) -> Path:
    """The stored quick run with model cells' final windows set to ``edit[key]`` x their real
    stack's (every copy scaled alike, so the control keeps its spread), the 4-stream grpc-go
    model's delivery scaled by ``throughput``, on a ``quiet`` machine (else as recorded)."""
    ms = [_quiet(m) if quiet else m for m in read_records(STORED).measurements]

    def window(key: str) -> float:
        return statistics.median(
            m.frames.window_final_bytes or 0 for m in ms if m.tags.key == key and m.frames
        )

    out = tmp_path / name
    for m in ms:
        frames = m.frames
        key = m.tags.key
        if frames is not None and key in edit:
            real = key.replace("-grpc-go", "-real-grpc-go")
            scale = edit[key] / (window(key) / window(real))
            frames = dataclasses.replace(
                frames, window_final_bytes=round((frames.window_final_bytes or 0) * scale)
            )
        if frames is not None and key == GO_4X and throughput != 1.0:
            trace = frames.delivered_down
            slower = tuple(round(b * throughput) for b in trace.bytes)
            frames = dataclasses.replace(
                frames, delivered_down=dataclasses.replace(trace, bytes=slower)
            )
        append_record(out, dataclasses.replace(m, frames=frames))
    return out


def _report(path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as done:
        main(["report", str(path)])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert all(len(line) <= 100 for line in text.splitlines())
    return text


def _go_check(text: str) -> str:
    """The grpc-go model's check, its wrapped lines joined."""
    found = re.search(r"^- (\w[^:]*): policies: the grpc-go model.*?(?=^- |\Z)", text, re.M | re.S)
    assert found is not None, text
    return " ".join(found.group(0).split())


def test_a_quick_round_inside_the_noise_is_not_decided_and_fails_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _edited(tmp_path, "near.jsonl", {GO_1X: 0.57, GO_4X: 0.63})
    check = _go_check(_report(path, capsys, monkeypatch))
    assert check.startswith("- not decided: policies: the grpc-go model"), check
    assert "x1 1.07/0.57" in check and "x4 0.91/0.63" in check  # the figures it judged
    found = re.search(r"final window / BDP 0\.57 ±(\d+)%: 1 round, needs (\d+) rounds\)$", check)
    assert found is not None, check
    half, needs = int(found.group(1)), int(found.group(2))
    assert 0.57 * (1 + half / 100) > 0.7  # the interval printed reaches the range
    assert needs > 1
    assert failed_checks_line(read_records(path).measurements) is None  # kit tables exits 0


def test_a_model_far_outside_the_noise_still_fails_in_one_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _edited(tmp_path, "far.jsonl", {}, throughput=0.5)
    check = _go_check(_report(path, capsys, monkeypatch))
    assert check.startswith("- FAILS: policies: the grpc-go model"), check
    found = re.search(r"x4 throughput (0\.\d\d) ±(\d+)% lies outside 0\.9-1\.1\)$", check)
    assert found is not None, check
    ratio, half = float(found.group(1)), int(found.group(2))
    assert ratio * (1 + half / 100) < 0.9  # the whole interval below the range
    line = failed_checks_line(read_records(path).measurements)
    assert line is not None and len(f"kit: error: {line}") <= 100
    assert line.startswith("1 check(s) against the reference FAIL: policies: the grpc-go")


def test_the_failing_line_fits_100_columns_after_kit_error() -> None:
    long = Bar("policies: " + "a long check name " * 12, False, "x")
    line = failed_line([long, long])
    assert line is not None and len(f"kit: error: {line}") <= 100
    assert line.endswith("... and 1 more (see the checks above)")


def test_a_failure_on_a_saturated_machine_is_not_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same model at half the real stack's throughput, as recorded: on a machine with no
    core to spare (a client near a full core, or 2 of 2 cores busy) the figure measures the
    machine, not the model: "not decided", as the model checks' "CPU-limited" verdict."""
    path = _edited(tmp_path, "busy.jsonl", {}, throughput=0.5, quiet=False)
    check = _go_check(_report(path, capsys, monkeypatch))
    assert check.startswith("- not decided: policies: the grpc-go model"), check
    assert re.search(r"CPU-limited: \d+ of \d+ runs had no core to spare\)$", check), check


def test_identical_samples_of_a_stepped_figure_decide_nothing_in_one_round() -> None:
    """A final window grows in doublings: one round whose control copies ended at the same
    window gives a 0% spread, which is no noise estimate. Seen in a quick tables run: the
    grpc-go model's final window / BDP 0.58 "±0%" FAILED from one round; it is not decided."""
    assert spread_of(None, 0.0) is None and spread_of(0.0, 0.0) is None
    assert spread_of(0.0, 3.0) == 3.0
    one_round = Figure(0.58, spread_of(None, 0.0), 1)
    bar = judged_bar("final window", "x1 0.58", [("final window / BDP", one_round, (0.7, 1.3))])
    assert bar.holds is None and bar.undecided
    assert bar.detail.endswith("1 round, no noise floor to judge it by"), bar.detail
    noisy = Figure(0.58, spread_of(None, 2.0), 1)  # a real floor still decides a far figure
    assert judged_bar("w", "d", [("w", noisy, (0.7, 1.3))]).holds is False
