"""Report helpers shared by kit run, tables and compare: CPU limits found, then worded."""

from __future__ import annotations

from kit.analysis.cells import cpu_limit
from kit.plan.trial import Trial
from kit.plan.units import format_bytes
from kit.report.format import cpu_warning, fmt_size, markdown_table
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


def test_the_reports_size_style_is_the_one_formatter_with_its_parameters() -> None:
    """Labels (``format_bytes``) and report cells (``fmt_size``) differ on purpose: each call
    site keeps its rendering through the parameters, the rules are written once."""
    for n in (512, 1000, 65536, 100_000, 1_400_000, 1.5 * 2**20, 4_000_000, 81_529_556, 2**30):
        assert fmt_size(n) == format_bytes(n, digits=None)
    assert format_bytes(1.5 * 2**20, digits=None) == "1.50 MiB"  # three figures
    # One unit family: a decimal size typed as 4MB reads back in binary units, never "4 MB"
    assert fmt_size(4_000_000) == "3.81 MiB" and fmt_size(1_400_000) == "1.34 MiB"
    assert fmt_size(250_000) == "244 KiB" and fmt_size(4 * 2**20) == "4 MiB"
    assert fmt_size(1000.5) == "1000 B"


def test_one_markdown_table_for_every_report() -> None:
    text = markdown_table([["h2 static 64 KiB", "1.0"], ["grpcio", "0.950"]], ("client", "x"))
    assert text.splitlines() == [
        "| client           | x     |",
        "|------------------|-------|",
        "| h2 static 64 KiB | 1.0   |",  # cells are text: never re-read as numbers
        "| grpcio           | 0.950 |",
    ]
