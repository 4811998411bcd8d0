"""CPU accounting of the processes on the measurement path, over a client's timed window.

A background thread samples (monotonic ns, cpu seconds) of each watched process; the
fraction over [t_start_ns, t_end_ns] is interpolated from the samples (pure function).
"""

from __future__ import annotations

import bisect
import contextlib
import threading
import time
from collections.abc import Sequence

import psutil

from kit.results.records import MachineLoad

SAMPLE_INTERVAL_S = 0.05
Sample = tuple[int, float]


def cpu_fraction(samples: Sequence[Sample], t_start_ns: int, t_end_ns: int) -> float | None:
    """CPU seconds used between two instants / wall seconds, by linear interpolation."""
    if len(samples) < 2 or t_end_ns <= t_start_ns:
        return None
    return (_cpu_at(samples, t_end_ns) - _cpu_at(samples, t_start_ns)) / (
        (t_end_ns - t_start_ns) / 1e9
    )


def _cpu_at(samples: Sequence[Sample], t_ns: int) -> float:
    times = [t for t, _ in samples]
    i = bisect.bisect_left(times, t_ns)
    if i <= 0:
        return samples[0][1]
    if i >= len(samples):
        return samples[-1][1]
    (t0, c0), (t1, c1) = samples[i - 1], samples[i]
    return c0 + (c1 - c0) * (t_ns - t0) / (t1 - t0) if t1 > t0 else c1


def machine_load(
    machine: Sequence[Sample],
    t_start_ns: int,
    t_end_ns: int,
    path_cores: float,
    filler_cores: float = 0.0,
) -> MachineLoad | None:
    """How many cores the whole machine kept busy in a timed window, and how many of them
    the measurement path (client, proxy, server) does not account for: on 2 cores, other
    work skews every cell even when no process of ours is CPU-bound. ``filler_cores``: what
    the kit's own keep-awake loops used (they only fill idle time), left out of both."""
    busy = cpu_fraction(machine, t_start_ns, t_end_ns)
    if busy is None:
        return None
    busy = max(0.0, busy - filler_cores)
    return MachineLoad(
        busy_cores=round(busy, 3),
        path_cores=round(path_cores, 3),
        other_cores=round(max(0.0, busy - path_cores), 3),
        cpus=float(psutil.cpu_count() or 0),
    )


def _machine_busy_s() -> float:
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


class CpuSampler:
    """Samples the CPU time of some PIDs, and of the whole machine, until stopped."""

    def __init__(self, pids: dict[str, int], filler: Sequence[int] = ()) -> None:
        # A process already gone (a server that died in the warm-up) is not sampled: the
        # client's run then fails and says why.
        self._procs = {r: p for r, p in ((r, _process(pid)) for r, pid in pids.items()) if p}
        self.samples: dict[str, list[Sample]] = {role: [] for role in pids}
        # The keep-awake loops: sampled apart, so their CPU can be left out of the machine's.
        self._filler = [p for p in (_process(pid) for pid in filler) if p]
        self.filler: list[Sample] = []
        self.machine: list[Sample] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CpuSampler:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_INTERVAL_S):
            self._sample()

    def _sample(self) -> None:
        now = time.monotonic_ns()
        with contextlib.suppress(psutil.Error, OSError):
            self.machine.append((now, _machine_busy_s()))
        for role, proc in self._procs.items():
            with contextlib.suppress(psutil.Error):
                times = proc.cpu_times()
                self.samples[role].append((now, times.user + times.system))
        if self._filler:
            with contextlib.suppress(psutil.Error):
                used = sum(sum(p.cpu_times()[:2]) for p in self._filler)
                self.filler.append((now, used))

    def filler_cores(self, t_start_ns: int, t_end_ns: int) -> float:
        """Cores the keep-awake loops used over the window (0 without them)."""
        return cpu_fraction(self.filler, t_start_ns, t_end_ns) or 0.0

    def fractions(self, t_start_ns: int, t_end_ns: int) -> dict[str, float]:
        out: dict[str, float] = {}
        for role, samples in self.samples.items():
            fraction = cpu_fraction(samples, t_start_ns, t_end_ns)
            if fraction is not None:
                out[role] = fraction
        return out
