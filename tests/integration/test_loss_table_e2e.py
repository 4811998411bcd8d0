"""The loss table from a stored quick run, one lossy cell measured again on the packet link
(see tables_resume): its bounds, what limits it, and TCP's retransmits.

Needs root and /dev/net/tun (CI has both); skipped with the reason elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from tables_resume import resume_quick_table

from kit.delayline.netns import missing

REASON = missing()
pytestmark = [pytest.mark.integration, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

CELL = "table10-loss/4MiB-loss1%"


def test_the_loss_table_measures_a_lossy_cell_and_renders_its_bounds(tmp_path: Path) -> None:
    resumed = resume_quick_table("loss", {CELL}, tmp_path)
    (new,) = [c for c in resumed.cells if f"{c['tags']['campaign']}/{c['tags']['key']}" == CELL]
    assert new["status"] == "ok", new["error"]
    link = new["trial"]["link"]
    assert link["kind"] == "packet" and link["congestion"] == "reno" and link["loss"] == 0.01
    goodput_bits_s = new["result"]["bytes"] * 8 / new["result"]["elapsed_s"]
    # Never above the rate (+2%; the 4 MiB window's bound is 671 Mbit/s).
    assert 0 < goodput_bits_s <= link["rate_down_bits_s"] * 1.02
    # 1% of some 500 data segments each way (the fixture's run: 7 resent): none at all is
    # p ~ 1e-3, or the loss was not applied.
    sent = [t for t in new["tcp"] if t["side"] == "server"]
    assert sent and sum(t["retransmits"] for t in sent) >= 1
    table = resumed.text.split("## Table 10")[1].split("## Checks")[0]
    cells = {
        line.split("|")[1].strip() + "," + line.split("|")[2].strip(): line
        for line in table.splitlines()
        if line.startswith("| ")
    }
    row = cells["h2 static 4 MiB,1%"]
    assert "| 2.83 " in row and "loss (TCP)" in row  # the Mathis bound binds
    assert "loss: at 1% loss Reno carries 0.5-2x the Mathis bound" in resumed.text
