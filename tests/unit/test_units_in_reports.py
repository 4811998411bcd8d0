"""Sizes in one unit family: every size a report prints from the fixtures' records is in
binary units with a space (64 KiB, 1.34 MiB), never "64KiB", "1.4MB" or a decimal "375 KB"
beside MiB. Cell keys and typed settings (``4MiB-loss1%``, ``h2:window=1MiB``, a command's
``--window 1MiB``) are names, not printed sizes, and are left alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kit.report.document import render_records
from kit.report.run import run_table
from kit.results.store import read_records

FIXTURES = Path(__file__).parent.parent / "fixtures"
FILES = sorted(
    p for d in ("tables-quick", "release-0.1", "runs") for p in FIXTURES.glob(f"{d}/*.jsonl")
)
# A size glued to its unit, standing alone (not inside a key or a KEY=VALUE setting).
GLUED = re.compile(r"(?<![\w=:.-])\d+(?:\.\d+)?(?:KB|MB|GB|kB|KiB|MiB|GiB)(?![\w-])")
DECIMAL = re.compile(r"\d (?:KB|MB|GB|kB)\b")
TYPED = re.compile(r"--[a-z][\w-]* \S+")  # an option and its value, as a user types them


def _strays(text: str) -> list[str]:
    return [
        line.strip()
        for line in text.splitlines()
        if GLUED.search(TYPED.sub("", line)) is not None or DECIMAL.search(line) is not None
    ]


def test_the_patterns_catch_what_they_are_for() -> None:
    assert _strays("| 64KiB | 1.4MB |") and _strays("queue 375 KB, 4 MB (rxbuf)")
    assert not _strays("64 KiB, 1.34 MiB; keys 4MiB-loss1% rtt20ms-h2-static-64KiB h2:window=1MiB")
    assert not _strays("type: kit run --client h2 --window 1MiB --conn-window 1MiB")


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_report_of_the_fixtures_prints_sizes_in_binary_units_with_a_space(
    path: Path,
) -> None:
    read = read_records(path)
    texts = [render_records(read, path.name, markdown=True, width=100) or ""]
    texts.append(render_records(read, path.name, width=100) or "")
    texts += [run_table(m, verbose=True) for m in read.measurements if not m.tags.campaign]
    strays = [line for text in texts for line in _strays(text)]
    assert not strays, "\n".join(strays[:10])
