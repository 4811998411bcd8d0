"""Pure report helpers shared by kit run, tables and compare."""

from __future__ import annotations

from kit.measure import Measurement, ProcessCpu
from kit.plan import Trial
from kit.report.common import cpu_warning


def test_cpu_warning_names_a_bound_process_or_a_saturated_machine() -> None:
    base = {"trial": Trial().to_dict(), "status": "ok"}
    assert cpu_warning(Measurement(**base, cpu=(ProcessCpu("proxy", 0.95),))).startswith(
        "CPU-bound (proxy 95%"
    )
    saturated = {"machine": {"busy_cores": 1.9, "cpus": 2.0, "other_cores": 0.1}}
    assert "CPU-saturated machine" in cpu_warning(Measurement(**base, meta=saturated))
    calm = {"machine": {"busy_cores": 0.5, "cpus": 2.0, "other_cores": 0.1}}
    assert cpu_warning(Measurement(**base, meta=calm, cpu=(ProcessCpu("client", 0.3),))) == ""
