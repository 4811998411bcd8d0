"""Plans that could only fail or mislead at run time are refused when built - pure."""

from __future__ import annotations

import re

import pytest

from kit.errors import UsageError
from kit.plan.builder import parse_candidate, workload_from
from kit.plan.compare import plan_from_settings
from kit.plan.options import PlanOptions, WorkloadOptions
from kit.plan.presets import knee_from, presets_from
from kit.plan.units import KIB, MIB


def test_a_timeout_shorter_than_the_timed_phase_is_refused() -> None:
    with pytest.raises(UsageError, match="--timeout: 2 s ends the run before its 10 s"):
        workload_from(WorkloadOptions(duration="10s", timeout="2s"), 20.0)
    assert workload_from(WorkloadOptions(duration="10s", timeout="11s"), 20.0).timeout_s == 11
    # A fixed transfer has no timed phase to compare with.
    assert workload_from(WorkloadOptions(transfer="1MiB", timeout="2s"), 20.0).timeout_s == 2


def test_a_timed_phase_shorter_than_two_rtts_is_refused() -> None:
    with pytest.raises(UsageError, match=re.escape("--duration: 0.4 s is shorter than 2 RTTs")):
        workload_from(WorkloadOptions(duration="0.4s"), 500.0)
    assert workload_from(WorkloadOptions(duration="1s"), 500.0).duration_s == 1.0


def test_more_connections_than_streams_is_refused_in_a_compare() -> None:
    with pytest.raises(UsageError, match="'h2:connections=4': connections: 4 connections for 2"):
        plan_from_settings(
            PlanOptions(streams=2), parse_candidate("grpcio"), [parse_candidate("h2:connections=4")]
        )


def test_an_upload_on_several_streams_is_refused() -> None:
    with pytest.raises(UsageError, match="--streams: an upload runs one client-streaming call"):
        workload_from(WorkloadOptions(workload="upload", streams=4), 20.0)
    with pytest.raises(UsageError, match="streams: an upload runs one client-streaming call"):
        plan_from_settings(
            PlanOptions(workload="upload", streams=2),
            parse_candidate("grpcio"),
            [parse_candidate("h2")],
        )
    assert workload_from(WorkloadOptions(workload="upload"), 20.0).streams == 1


def test_knee_and_presets_check_the_timed_phase_at_their_rtt() -> None:
    settings = PlanOptions(rtt="500ms", duration="0.4s")
    with pytest.raises(UsageError, match="shorter than 2 RTTs"):
        knee_from(settings, streams=1, min_window=64 * KIB, max_window=MIB)
    with pytest.raises(UsageError, match="shorter than 2 RTTs"):
        presets_from("windows", settings)
