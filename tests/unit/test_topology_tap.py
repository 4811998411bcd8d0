"""The topology reads the proxy's tap file as it grows: whole lines only, and a corrupt line
is skipped and counted - the lines around it (the same chunk included) are kept."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, cast

import pytest

from kit.capture.tapfile import encode_tap_line
from kit.plan.trial import Link
from kit.results.records import DirectionSummary, TapConnection
from kit.topology import topology
from kit.topology.processes import Child
from kit.topology.topology import _Proxy


def _line(conn: int, opened_ns: int) -> str:
    return json.dumps(
        encode_tap_line(TapConnection(conn, opened_ns, opened_ns + 5, DirectionSummary(bytes=conn)))
    )


def test_a_corrupt_line_costs_only_itself(tmp_path: Path) -> None:
    tap = tmp_path / "tap.jsonl"
    proxy = _Proxy(cast(Any, None), tap, Link())
    assert proxy.new_connections(0, expect=0, timeout_s=0) == []  # no file yet: nothing
    tap.write_text(_line(1, 10) + "\n{not json\n" + _line(2, 20) + "\n" + _line(3, 30)[:20])
    found = proxy.new_connections(0, expect=2, timeout_s=0)
    assert [c.conn for c in found] == [1, 2] and proxy.skipped_lines == 1
    with tap.open("a") as f:  # the torn tail was only half written: it completes now
        f.write(_line(3, 30)[20:] + "\n")
    assert [c.conn for c in proxy.new_connections(15, expect=2, timeout_s=0)] == [2, 3]
    assert proxy.skipped_lines == 1


def test_teardown_problems_are_reported_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_stop(self: Child, timeout_s: float = 0) -> int | None:
        raise OSError("no such process group")

    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait(10)
    told: list[str] = []
    topo = topology.Topology(warm_up=False, on_teardown_problem=told.append)
    topo._track(Child("proxy", done, tempfile.TemporaryFile(mode="w+")))  # noqa: SIM115
    monkeypatch.setattr(Child, "stop", failing_stop)
    with pytest.raises(RuntimeError), topo:  # also when the run itself ends with an error
        raise RuntimeError("the measurement failed")
    assert told == topo.teardown_problems and len(told) == 1
    assert "stopping the proxy" in topo.teardown_problems[0]
    assert "no such process group" in topo.teardown_problems[0]
