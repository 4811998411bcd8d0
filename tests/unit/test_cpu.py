from __future__ import annotations

import subprocess

import pytest

from kit.topology.cpu import CpuSampler, cpu_fraction, machine_load


def test_cpu_fraction_interpolates_between_samples() -> None:
    samples = [(0, 0.0), (1_000_000_000, 0.5), (2_000_000_000, 1.5)]
    assert cpu_fraction(samples, 0, 2_000_000_000) == pytest.approx(0.75)
    assert cpu_fraction(samples, 1_000_000_000, 2_000_000_000) == pytest.approx(1.0)
    assert cpu_fraction(samples, 500_000_000, 1_500_000_000) == pytest.approx(0.75)


def test_cpu_fraction_needs_two_samples_and_a_window() -> None:
    assert cpu_fraction([(0, 0.0)], 0, 10) is None
    assert cpu_fraction([(0, 0.0), (10, 1.0)], 5, 5) is None


def test_machine_load_is_the_whole_machine_minus_the_path() -> None:
    # 1.9 busy core-seconds over a 1 s window; the path's processes used 0.7 of them.
    samples = [(0, 10.0), (3_000_000_000, 15.7)]
    load = machine_load(samples, 1_000_000_000, 2_000_000_000, path_cores=0.7)
    assert load is not None
    assert load.busy_cores == pytest.approx(1.9)
    assert load.path_cores == pytest.approx(0.7)
    assert load.other_cores == pytest.approx(1.2)
    assert machine_load(samples[:1], 0, 1, 0.0) is None


def test_keep_awake_loops_are_not_the_machines_load() -> None:
    """The loops fill idle CPUs: a machine kept 1.9 cores busy of which 1.2 were the loops
    reads 0.7 busy, none of it outside the path."""
    samples = [(0, 0.0), (1_000_000_000, 1.9)]
    load = machine_load(samples, 0, 1_000_000_000, path_cores=0.7, filler_cores=1.2)
    assert load is not None
    assert load.busy_cores == pytest.approx(0.7) and load.other_cores == pytest.approx(0.0)


def test_a_process_gone_before_sampling_is_left_out() -> None:
    """A server that died in the warm-up: the sampler starts anyway (the client's run then
    fails and says why) instead of raising psutil's NoSuchProcess."""
    pid = _exited_pid()
    with CpuSampler({"server": pid}) as sampler:
        pass
    assert "server" not in sampler.fractions(0, 10**18)


def _exited_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid
