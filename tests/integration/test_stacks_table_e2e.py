"""The stacks table (table 8) from a stored quick run, three cells measured again.

One cell per part and per foreign runtime: grpc-go's static 64 KiB download (its quarter-window
credit check), grpc-js's dynamic window on the 100 Mbit/s link (cold) and an upload into the
grpc-java server (see tables_resume). Every cell ran, the three parts and their checks are
there; the checks' physics is asserted on the fixture by the unit tests, not here (one round
on a loaded machine).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tables_resume import resume_quick_table

from kit.plan.programs import CLIENT_PROGRAMS, SERVER_PROGRAMS

pytestmark = pytest.mark.integration

TAKE_OUT = {
    "table8-windows/rtt20ms-grpc-go-static-64KiB",
    "table8-links/100Mbit-20ms-grpc-js-dynamic",
    "table8-uploads/server-grpc-java-64KiB",
}


def test_quick_stacks_table(tmp_path: Path) -> None:
    unbuilt = [
        why
        for program in (
            CLIENT_PROGRAMS["grpc-go"],
            CLIENT_PROGRAMS["grpc-js"],
            SERVER_PROGRAMS["grpc-java"],
        )
        if (why := program.missing()) is not None
    ]
    if unbuilt:
        pytest.skip(f"a stack is not built: {unbuilt[0]}")
    resumed = resume_quick_table("stacks", TAKE_OUT, tmp_path)
    cells = resumed.cells
    assert len(cells) == (13 + 1) + (7 + 1) + (5 + 1)  # three campaigns, each control twice
    assert all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    by_name = {f"{c['tags']['campaign']}/{c['tags']['key']}": c["meta"] for c in cells}
    # the ready lines name each stack and its version in the records' meta
    assert by_name["table8-windows/rtt20ms-grpc-go-static-64KiB"]["client_stack"].startswith(
        "grpc-go "
    )
    assert by_name["table8-links/100Mbit-20ms-grpc-js-dynamic"]["client_stack"].startswith(
        "grpc-js "
    )
    assert by_name["table8-uploads/server-grpc-java-64KiB"]["server_stack"].startswith("grpc-java ")
    text = resumed.text
    assert "## Table 8: the stacks side by side" in text
    for part in ("### A. ", "### B. ", "### C. ", "The kit's model of grpc-go beside grpc-go"):
        assert part in text
    assert (
        text.count("- holds: stacks: ")
        + text.count("- FAILS: stacks: ")
        + text.count("- not decided: stacks: ")
        + text.count("- not measured: stacks: ")
        == 7
    )
