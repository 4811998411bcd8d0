"""Client workers: one client process for successive trials (``<program> --worker``).

A client process costs its start-up on every cell (a Python client ~0.45 s, a JVM 0.5-0.8 s,
Node ~0.5 s, for cells of 0.3-2 s). A worker is started once and handed one trial per line
of stdin; each trial still opens connections of its own, and the measurement still runs in
its own process, apart from the server and the delay line. A worker that fails a trial (an
error line, a timeout, a kill) is stopped and forgotten: the next trial starts a fresh one.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from kit.errors import MeasurementError, TopologyError
from kit.plan.processes import ClientProcess
from kit.plan.programs import Program
from kit.protocol import Ready, Result
from kit.results.client import ClientResult
from kit.topology.processes import READY_TIMEOUT_S, Child

END_S = 1.0  # how long an idle worker may take to exit once its stdin is closed


@dataclass(frozen=True)
class Answer:
    """A client's result and which trial of its process it was (1 = the first)."""

    result: ClientResult
    client_trial: int
    worker: bool
    ready: Ready | None


class Worker:
    """One client worker, started (and its ready line read) by ``start``."""

    def __init__(self, child: Child) -> None:
        self.child = child
        self.trials = 0  # answered so far

    @classmethod
    def start(cls, program: Program, timeout_s: float = READY_TIMEOUT_S) -> Worker:
        """A worker of ``program``, once its ready line is read. Started for a trial, within
        that trial's time: one still silent then is a trial that timed out, as a process of
        its own would be (``MeasurementError``)."""
        child = Child.start_worker("client", program)
        try:
            try:
                ready = child.wait_ready(timeout_s)
            except TopologyError:
                if child.popen.poll() is None and not child.lines and not child.unexpected:
                    raise MeasurementError(
                        f"client timed out after {timeout_s:g} s and was stopped"
                    ) from None
                raise
            if not ready.worker:
                raise TopologyError(
                    f"the client {ready.label or program.argv[0]} did not start as a worker "
                    '(its ready line has no "worker": true)'
                )
        except BaseException:
            child.close()
            raise
        return cls(child)

    @property
    def pid(self) -> int:
        return self.child.pid

    def run(
        self, process: ClientProcess, timeout_s: float, abandon: Callable[[], str] | None
    ) -> Answer:
        """One trial: its config out, its one line back. Any failure raises; the caller then
        closes this worker (it exits after an error line, by the protocol)."""
        seen = len(self.child.lines)
        self.child.send(process)
        final = self.child.next_final(seen, timeout_s, abandon)
        result = self.child.decoded(final, ClientResult)
        self.trials += 1
        numbered = final.client_trial if isinstance(final, Result) else None
        if numbered != self.trials:
            raise MeasurementError(
                f"the client worker numbered its trial {numbered}, "
                f"not {self.trials} (a protocol violation)"
            )
        return Answer(result, self.trials, True, self.child.ready)

    def close(self) -> None:
        """Its normal end: stdin closed, a moment to exit by itself, then stopped if not."""
        self.child.end_input()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.child.popen.wait(timeout=END_S)
        self.child.close()
