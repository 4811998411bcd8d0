"""The workload's later fields reach a program only when set: every stack's program reads a
default trial exactly as it always has (their decoders refuse unknown fields)."""

from __future__ import annotations

import json

from kit.plan.processes import ClientProcess
from kit.plan.trial import ClientConfig, Trial, Workload
from kit.plan.units import MIB
from kit.topology.protocol import config_argv


def _workload_sent(trial: Trial) -> dict[str, object]:
    argv = config_argv(ClientProcess(target_host="127.0.0.1", target_port=1, trial=trial))
    sent: dict[str, object] = json.loads(argv[1])["trial"]["workload"]
    return sent


def test_default_priming_fields_are_left_out() -> None:
    sent = _workload_sent(Trial())
    assert "prime_bytes" not in sent and "idle_s" not in sent
    assert sent["kind"] == "download"


def test_set_priming_fields_are_sent() -> None:
    trial = Trial(
        client=ClientConfig(kind="h2"), workload=Workload(prime_bytes=4 * MIB, idle_s=1.0)
    )
    sent = _workload_sent(trial)
    assert sent["prime_bytes"] == 4 * MIB and sent["idle_s"] == 1.0
