"""What a command cut short prints, as pure text: ``kit run``'s figures so far and the exact
``--resume`` command of a campaign (the real SIGINT is tests/integration/
test_interrupted_output.py)."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

from kit.cli.interrupted import partial_header, resume_command, run_lines, shell_lines
from kit.plan.trial import Trial
from kit.plan.units import MIB
from kit.results.records import Measurement


def _record(error: str) -> Measurement:
    return replace(Measurement(trial=Trial(), status="interrupted"), error=error)


def test_a_run_cut_short_says_what_the_delay_line_delivered() -> None:
    record = _record("interrupted by SIGINT during the timed phase, 3.0 s into it")
    lines = run_lines(record, (36 * MIB, 3.0), kept=True, unit="MiB/s")
    assert lines == [
        "kit run: interrupted 3.00 s into the timed phase; so far the delay line delivered "
        "36.00 MiB:",
        "  12.0 MiB/s (not a result: a run is timed to its end)",
    ]
    assert all(len(line) <= 100 for line in lines)
    in_mbit = run_lines(record, (36 * MIB, 3.0), kept=True, unit="Mbit/s")
    assert in_mbit[1].startswith("  101 Mbit/s")


def test_a_run_cut_short_before_its_timed_phase_measured_nothing() -> None:
    record = _record("interrupted by SIGTERM during warm-up, 0.4 s into it")
    assert run_lines(record, None, kept=False, unit="MiB/s") == [
        "kit run: interrupted during warm-up, 0.4 s into it: nothing measured yet",
        "kit run: no record kept (--no-records)",
    ]


def test_the_resume_command_is_the_one_typed_with_resume_and_its_records() -> None:
    typed = ["--rtt", "20ms", "-c", "h2:window=1MiB", "--records", "old.jsonl", "--resume"]
    command = resume_command("kit compare", typed, Path("results/my runs.jsonl"))
    assert shlex.split(command) == [
        *("kit", "compare", "--rtt", "20ms", "-c", "h2:window=1MiB"),
        *("--resume", "--records", "results/my runs.jsonl"),
    ]
    assert "x.jsonl" not in resume_command("kit knee", ["--records=x.jsonl"], Path("y"))


def test_a_long_command_wraps_within_100_columns_and_pastes_as_one() -> None:
    command = resume_command("kit compare", ["-c", "h2:window=1MiB"] * 12, Path("r.jsonl"))
    text = shell_lines(command)
    assert len(text.splitlines()) > 1 and all(len(line) <= 100 for line in text.splitlines())
    assert shlex.split(text.replace("\\\n", " ")) == shlex.split(command)


def test_the_partial_header_counts_the_runs() -> None:
    assert partial_header(5, 12, "SIGINT").startswith(
        "PARTIAL: interrupted by SIGINT after 5 of 12 runs"
    )
