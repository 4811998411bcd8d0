"""Every line of every command's output fits 100 columns: stdout and stderr, over every
command (its --help, its refusals of bad input, a tiny real run of the measuring ones) and
every records file in ``tests/fixtures`` rendered by ``kit report``. Machine formats (--json,
--csv, --records -) and the markdown documents (--markdown, --out) are not laid out for a
terminal and are left out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_support import kit, kit_here

from kit.delayline.control import Control
from kit.plan.trial import Link
from kit.results.records import LinkChange

pytestmark = pytest.mark.integration

WIDTH = 100
ENV = {**os.environ, "COLUMNS": str(WIDTH)}
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDS = sorted(FIXTURES.rglob("*.jsonl"))
COMMANDS = ("run", "proxy", "serve", "tables", "report", "compare", "knee", "plot")


def _wide(*texts: str) -> list[str]:
    return [line for text in texts for line in text.splitlines() if len(line) > WIDTH]


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_kit_report_of_every_fixture_fits(path: Path) -> None:
    for extra in ((), ("--all",)):
        done = kit_here("report", *extra, str(path), env=ENV)
        assert done.returncode == 0, done.stderr
        assert not _wide(done.stdout, done.stderr), _wide(done.stdout, done.stderr)[:3]


def test_every_help_fits() -> None:
    for args in ([], *([c] for c in COMMANDS)):
        done = kit_here(*args, "--help", env=ENV)
        assert not _wide(done.stdout, done.stderr), (args, _wide(done.stdout)[:3])


REFUSALS = [
    ("run", "--conn-window", "64KiB", "--window", "1MiB"),
    ("run", "--credit", "half", "--window", "1MiB"),
    ("run", "--conn-credit", "read"),
    ("run", "--pool", "1MiB"),
    ("run", "--max-frame-size", "1MiB"),
    ("run", "--window", "4"),
    ("run", "--window", "3GiB"),
    ("run", "--interval", "1ms"),
    ("tables", "--only", "nonsense-and-then-some-more-of-it"),
    ("compare", "--candidate", "h2:window=4"),
    ("run", "--option", "grpc.http2.bdp_prob=0"),
    ("knee", "--client", "nope"),
    ("knee", "--min-window", "1MiB", "--max-window", "64KiB"),
    ("report", "/dev/null"),
    ("plot", "/dev/null"),
]


@pytest.mark.parametrize("args", REFUSALS, ids=" ".join)
def test_a_refusal_is_one_line_that_fits(args: tuple[str, ...], tmp_path: Path) -> None:
    done = kit_here(*args, "--records", "r.jsonl", cwd=tmp_path, env=ENV)
    if "--records" in done.stderr and "no such option" in done.stderr:
        done = kit_here(*args, env=ENV)  # report and plot take no --records
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not _wide(done.stdout, done.stderr), done.stderr


def test_a_compare_off_a_terminal_fits_its_progress_lines(tmp_path: Path) -> None:
    long = "h2:window=256KiB,conn-window=1MiB,credit=quarter,max-frame=1MiB,connections=1"
    done = kit(
        "compare",
        "--rtt",
        "2ms",
        "--duration",
        "0.2s",
        "--rounds",
        "1",
        "--baseline",
        "h2:window=256KiB",
        "--candidate",
        long,
        "--records",
        "c.jsonl",
        cwd=tmp_path,
        env=ENV,
    )  # fmt: skip  (the records path is echoed: a short one, as a user would type)
    assert done.returncode == 0, done.stderr
    assert "[1/3]" in done.stderr  # progress, one plain line per cell (no terminal here)
    assert not _wide(done.stdout, done.stderr), _wide(done.stdout, done.stderr)


def test_a_run_with_intervals_fits(tmp_path: Path) -> None:
    done = kit(
        "run", "--rtt", "2ms", "--client", "h2", "--window", "128KiB", "--streams", "2",
        "--slow-streams", "1", "--read-rate", "8Mbit", "--duration", "0.3s", "--interval",
        "50ms", "--records", "r.jsonl", cwd=tmp_path, env=ENV,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not _wide(done.stdout, done.stderr), _wide(done.stdout, done.stderr)


def test_the_proxys_link_changed_line_fits() -> None:
    said: list[str] = []
    link = Link(
        delay_up_ms=1000.0,
        delay_down_ms=1000.0,
        jitter_ms=1000.0,
        rate_up_bits_s=123.4e6,
        rate_down_bits_s=9.99e9,
    )
    Control(link, lambda _link: None, None, said.append)._record(
        LinkChange(1, "2026-12-03T11:45:00+0000", link)
    )
    assert said and "link changed: delay up 1000 ms, down 1000 ms" in said[0]
    assert not _wide(*said), said
