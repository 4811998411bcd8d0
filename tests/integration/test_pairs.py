"""Table 11's machinery on a few pairs, quick: trials measured together (each through a
delay line of its own), every GOAWAY read off the taps, and the text a user reads.

A grpcio client told to send keepalive PINGs every second, also without calls, meets two
servers that police PINGs (C-core's and grpc-go's: more than two strikes is GOAWAY
ENHANCE_YOUR_CALM "too_many_pings"), so each hangs up within seconds; a pair without
keepalive finishes cleanly. The whole matrix (10 s keepalive, 45 s idle) runs in
``kit tables --only pairs``."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest
from cli_support import kit_here
from stacks_support import need_built

from kit.analysis.cells import group_campaigns
from kit.analysis.tables.pairs import outcome, pair_outcomes
from kit.plan.tables.pairs import PING_POLICING, pair_trial
from kit.plan.trial import ClientConfig, Trial
from kit.report.tables.pairs import cell_text, render_pairs
from kit.results.records import RunTags
from kit.results.store import read_records
from kit.topology.topology import Topology

pytestmark = pytest.mark.integration

SERVERS = ["grpcio", "grpc-go", "grpc-java", "grpc-js", "tonic"]
EVERY_SECOND = (
    ("grpc.keepalive_time_ms", 1000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
)


def _trial(client: str, server: str, options: tuple[tuple[str, int], ...] = ()) -> Trial:
    trial = pair_trial("shipped", client, server, idle_s=6.0)
    workload = dataclasses.replace(trial.workload, duration_s=1.0, timeout_s=30.0)
    config = ClientConfig(kind=client, channel_options=options)  # type: ignore[arg-type]
    return dataclasses.replace(trial, client=config, workload=workload)


def test_servers_that_police_pings_hang_up_on_a_client_that_pings_too_often() -> None:
    need_built("grpc-go")
    trials = [
        _trial("grpcio", "grpcio", EVERY_SECOND),
        _trial("grpcio", "grpc-go", EVERY_SECOND),
        _trial("h2", "grpcio"),
    ]
    tags = [RunTags(campaign="table11-pairs", run_id=f"r{i}", key=f"k{i}") for i in range(3)]
    with Topology() as topo:
        records = topo.measure_together(list(zip(trials, tags, strict=True)))
    cc, go, plain = (outcome(r) for r in records)
    for hung in (cc, go):
        assert hung.hang_up is not None, hung
        assert (hung.hang_up.sender, hung.hang_up.frame) == ("server", "GOAWAY")
        assert (hung.hang_up.code, hung.hang_up.debug) == ("ENHANCE_YOUR_CALM", "too_many_pings")
        # Two strikes are tolerated, the third PING is the GOAWAY: about 3 s of 1 s PINGs,
        # counted from the connection's open (the warm-up and the idle gap included).
        assert hung.hang_up.at_s is not None and 2.0 <= hung.hang_up.at_s <= 6.0, hung
        assert hung.client_pings >= 3
    assert plain.ok and plain.hang_up is None and plain.completed, plain
    # What a user reads: the matrix cells, each hang-up in words, the rule behind it.
    assert cell_text(go).startswith("GOAWAY S ")
    assert cell_text(plain) == "ok"
    text = render_pairs(group_campaigns(records)["table11-pairs"])
    assert 'GOAWAY ENHANCE_YOUR_CALM "too_many_pings" from the server at' in text
    assert "grpcio client -> grpc-go server" in text
    assert PING_POLICING["grpc-go"] in text and PING_POLICING["grpcio"] in text
    assert all(len(line) <= 100 for line in text.splitlines() if line.startswith("|"))
    assert len(pair_outcomes(records)) == 3


STORED = Path(__file__).resolve().parents[1] / "fixtures" / "tables-quick" / "pairs.jsonl"


def test_kit_report_prints_the_stored_matrix_as_its_records_say() -> None:
    """A real run of the whole table (55 pairs at once), read back as a user reads it: each
    matrix cell is what the records say of that pair, every hang-up is listed in words."""
    # At 100 columns (a narrower terminal wraps a cell onto a second line).
    out = kit_here("report", str(STORED), env={**os.environ, "COLUMNS": "100"})
    assert out.returncode == 0, out.stderr
    text = out.stdout
    outcomes = pair_outcomes(read_records(STORED).measurements)
    assert len(outcomes) == 55
    keepalive = text.split("With keepalive", 1)[1].split("What went wrong", 1)[0]
    shipped = text.split("As shipped:", 1)[1].split("With keepalive", 1)[0]
    for o in outcomes:
        block = keepalive if o.setting == "keepalive" else shipped
        row = next(line for line in block.splitlines() if line.startswith(f"{o.client} "))
        column = SERVERS.index(o.server)
        cells = re.split(r"\s{2,}", row.strip())[1:]
        assert cells[column] == cell_text(o), (o, row)
        if not o.ok:
            assert f"{o.client} client -> {o.server} server ({o.setting})" in text
    assert all(len(line) <= 100 for line in text.splitlines())
