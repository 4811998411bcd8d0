"""Report helpers shared by kit run, tables and compare: CPU limits found, then worded."""

from __future__ import annotations

from kit.analysis.cells import cpu_limit
from kit.plan.trial import Trial
from kit.plan.units import format_bytes
from kit.report.format import cpu_warning
from kit.results.records import MachineLoad, Measurement, ProcessCpu, RunMeta


def _warning(m: Measurement) -> str:
    return cpu_warning(cpu_limit(m))


def test_cpu_warning_names_a_bound_process_or_a_saturated_machine() -> None:
    base = Measurement(trial=Trial(), status="ok")
    bound = Measurement(trial=Trial(), status="ok", cpu=(ProcessCpu("proxy", 0.95),))
    assert _warning(bound).startswith("CPU-bound (proxy 95%")
    saturated = RunMeta(
        machine=MachineLoad(busy_cores=1.9, path_cores=1.8, other_cores=0.1, cpus=2.0)
    )
    assert "CPU-saturated machine" in _warning(
        Measurement(trial=Trial(), status="ok", meta=saturated)
    )
    calm = RunMeta(machine=MachineLoad(busy_cores=0.5, path_cores=0.4, other_cores=0.1, cpus=2.0))
    quiet = Measurement(trial=Trial(), status="ok", meta=calm, cpu=(ProcessCpu("client", 0.3),))
    assert _warning(quiet) == "" and _warning(base) == ""


def test_one_byte_formatter_for_every_report() -> None:
    assert format_bytes(65536) == "64 KiB" and format_bytes(1536 * 1024) == "1.5 MiB"
    assert format_bytes(100_000) == "97.66 KiB" and format_bytes(100_000, digits=0) == "98 KiB"
    assert format_bytes(131070, digits=0) == "128 KiB"
    assert format_bytes(1000) == "1000 B"
