"""The receive pool's theory is what it really grants: its shares, never under a 16 KiB buffer
per stream, however small the pool - pure."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kit.plan.builder import parse_candidate
from kit.plan.trial import Link, Trial, Workload, pool_granted_bytes, theory_mib_s
from kit.plan.units import KIB, MIB
from kit.report.run import run_table
from kit.results.store import read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _trial(spec: str, streams: int) -> Trial:
    client = parse_candidate(spec).client
    workload = Workload(streams=streams, bytes_per_stream=MIB)
    return Trial(link=Link.from_rtt(20.0), client=client, workload=workload)


@pytest.mark.parametrize(
    ("spec", "streams", "granted"),
    [
        ("h2:window-policy=pool,pool=16KiB", 8, 8 * 16 * KIB),  # a buffer per stream
        ("h2:window-policy=pool,pool=32KiB", 100, 100 * 16 * KIB),
        ("h2:window-policy=pool,pool=256KiB", 4, 256 * KIB),  # 4 shares of 64 KiB
        ("h2:window-policy=pool,pool=1.6MB", 1, 97 * 16 * KIB),  # whole buffers only
        ("h2:window-policy=pool,pool=64KiB,connections=2", 5, 3 * 16 * KIB + 2 * 32 * KIB),
    ],
)
def test_the_theory_is_the_granted_shares_over_the_rtt(
    spec: str, streams: int, granted: int
) -> None:
    trial = _trial(spec, streams)
    assert pool_granted_bytes(trial) == granted
    assert theory_mib_s(trial) == pytest.approx(granted / 0.020 / MIB)


def test_the_theory_row_says_a_small_pool_granted_more_than_its_size() -> None:
    record = read_records(FIXTURES / "release-0.1" / "runs.jsonl").measurements[0]
    trial = _trial("h2:window-policy=pool,pool=16KiB", 8)
    lines = run_table(replace(record, trial=trial, theory_mib_s=theory_mib_s(trial))).splitlines()
    theory = " ".join(next(line for line in lines if line.startswith("theory")).split())
    assert theory == "theory 6.25 MiB/s = granted / RTT (8 streams x 16 KiB, above the 16 KiB pool)"
