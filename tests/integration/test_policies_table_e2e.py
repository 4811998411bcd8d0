"""The policies table (table 9) from a stored quick run, three cells measured again.

grpc-go's model and real grpc-go on the 100 Mbit/s x 20 ms link with four streams (the
model-beside-real ratio is rebuilt from fresh cells), and the pool beside a fast stream
(see tables_resume). The checks' physics is asserted on the fixture by the unit tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tables_resume import resume_quick_table

from kit.plan.programs import CLIENT_PROGRAMS

pytestmark = pytest.mark.integration

TAKE_OUT = {
    "table9-links/100Mbit-20ms-4x-grpc-go",
    "table9-links/100Mbit-20ms-4x-real-grpc-go",
    "table9-sharing/pool-beside-fast",
}


def test_quick_policies_table(tmp_path: Path) -> None:
    if (why := CLIENT_PROGRAMS["grpc-go"].missing()) is not None:
        pytest.skip(f"grpc-go is not built: {why}")
    resumed = resume_quick_table("policies", TAKE_OUT, tmp_path)
    fresh = [c for c in resumed.cells[-len(resumed.measured_now) :]]
    assert all(c["status"] == "ok" for c in fresh), [c["error"] for c in fresh]
    text = resumed.text
    assert "## Table 9: receive-window policies side by side" in text
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in text.splitlines()]
    ratio = next(r for r in rows if r[:3] == ["grpc-go model / real grpc-go", "100Mbit-20ms", "4"])
    assert 0.5 < float(ratio[3]) < 2.0  # the fresh pair gives a throughput ratio
    assert "### B. " in text and "pool (the kit's)" in text
    assert (
        text.count("- holds: policies: ")
        + text.count("- FAILS: policies: ")
        + text.count("- not decided: policies: ")
        + text.count("- not measured: policies: ")
        == 4
    )
