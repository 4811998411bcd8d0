"""Keep every vCPU awake while measuring: one busy loop per CPU at nice 19 (``--keep-awake``).

On a VM an idle vCPU halts, and waking it for a socket event costs far more than the delay
line's own timer error. Measured on the 2-vCPU VM this kit is developed on, at 5 ms RTT: unary
calls p50 11.8-15.7 ms with idle vCPUs against 7.0-9.0 ms with these loops, PING RTT during a
run 7.3-9.1 against 5.3-6.3 ms; the delay line's timer woke 5 us late either way. At nice 19
each loop gets ~1.5% of a core against any normal process that wants it, so the server, delay
line and client keep the cores; the loops only fill what would be idle.

Each loop checks every few milliseconds that the kit that started it is still its parent and
ends when it is not, so a kit killed with SIGKILL does not leave CPUs spinning.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

STOP_TIMEOUT_S = 5.0
# Spin in short bursts; between them, check the parent is still the kit that started us.
_LOOP = """\
import os, sys
os.nice(19)
parent = int(sys.argv[1])
while os.getppid() == parent:
    for _ in range(50_000):
        pass
"""


class KeepAwake:
    """The busy loops: started on demand, stopped (killed and reaped) by ``stop``."""

    def __init__(self) -> None:
        self._procs: list[subprocess.Popen[bytes]] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs]

    def start(self) -> None:
        """One loop per CPU (once; later calls keep the running ones)."""
        if self._procs:
            return
        for _ in range(os.cpu_count() or 1):
            self._procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", _LOOP, str(os.getpid())],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )

    def stop(self) -> None:
        for proc in self._procs:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=STOP_TIMEOUT_S)
        self._procs.clear()
