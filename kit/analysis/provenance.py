"""Pure: where and with what a records file was measured, gathered from its records' meta
one record at a time: hosts, cores, the machine's load, the path, and the version of every
stack that ran (each program's ready line: ``grpc-go 1.85.0``; the Python side's grpcio and
h2 versions), for a report's "method and machine" part."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kit.results.records import Measurement, SessionRecord


@dataclass(frozen=True)
class Span:
    """The smallest and largest of some values."""

    low: float
    high: float


@dataclass(frozen=True)
class Provenance:
    records: int  # measurements
    failed: int  # of them, failed or interrupted
    first_started: str
    last_started: str
    hosts: tuple[str, ...]
    cpus: tuple[int, ...]
    kit: tuple[str, ...]
    python: tuple[str, ...]
    paths: tuple[str, ...]
    stacks: tuple[str, ...]  # "grpc-go 1.85.0", "grpcio 1.85.3", "h2 4.4.1", in first-seen order
    busy_cores: Span | None  # the whole machine, in the timed windows
    other_cores: Span | None  # processes outside the measurement path
    load_1min: Span | None  # kit tables' sessions: the 1-min load average
    keep_awake: int  # records taken with --keep-awake


def _span(values: list[float]) -> Span | None:
    return Span(min(values), max(values)) if values else None


@dataclass
class ProvenanceScan:
    """The facts, gathered while records are read (``add``); ``facts`` freezes them."""

    records: int = 0
    failed: int = 0
    started: list[str] = field(default_factory=list)  # first and last, kept sorted
    hosts: dict[str, None] = field(default_factory=dict)
    cpus: dict[int, None] = field(default_factory=dict)
    kit: dict[str, None] = field(default_factory=dict)
    python: dict[str, None] = field(default_factory=dict)
    paths: dict[str, None] = field(default_factory=dict)
    stacks: dict[str, None] = field(default_factory=dict)
    busy: list[float] = field(default_factory=list)
    other: list[float] = field(default_factory=list)
    load: list[float] = field(default_factory=list)
    keep_awake: int = 0

    def add_all(self, records: Iterable[object]) -> None:
        for record in records:
            if isinstance(record, Measurement):
                self.add(record)
            elif isinstance(record, SessionRecord):
                self.add_session(record)

    def add(self, m: Measurement) -> None:
        meta = m.meta
        self.records += 1
        self.failed += not m.ok
        if meta.started_at:
            self.started = sorted({*self.started, meta.started_at})
            self.started = [self.started[0], self.started[-1]]
        for seen, value in (
            (self.hosts, meta.host),
            (self.kit, meta.kit),
            (self.python, meta.python),
            (self.paths, meta.path),
        ):
            if value:
                seen[value] = None
        if meta.cpus:
            self.cpus[meta.cpus] = None
        for stack in self._stacks(m):
            self.stacks[stack] = None
        if meta.machine is not None:
            self._keep_span(self.busy, meta.machine.busy_cores)
            self._keep_span(self.other, meta.machine.other_cores)
        self.keep_awake += meta.keep_awake

    @staticmethod
    def _stacks(m: Measurement) -> list[str]:
        meta = m.meta
        found = [s for s in (meta.client_stack, meta.server_stack) if s]
        if meta.grpcio:
            found.append(f"grpcio {meta.grpcio}")
        if meta.h2:
            found.append(f"h2 {meta.h2}")
        return found

    @staticmethod
    def _keep_span(values: list[float], value: float) -> None:
        """Only the extremes are kept: memory does not grow with the records."""
        values[:] = [min([*values, value]), max([*values, value])]

    def add_session(self, session: SessionRecord) -> None:
        for value in session.load_1min:
            if value is not None:
                self._keep_span(self.load, value)

    def facts(self) -> Provenance:
        return Provenance(
            records=self.records,
            failed=self.failed,
            first_started=self.started[0] if self.started else "",
            last_started=self.started[-1] if self.started else "",
            hosts=tuple(self.hosts),
            cpus=tuple(self.cpus),
            kit=tuple(self.kit),
            python=tuple(self.python),
            paths=tuple(self.paths),
            stacks=tuple(self.stacks),
            busy_cores=_span(self.busy),
            other_cores=_span(self.other),
            load_1min=_span(self.load),
            keep_awake=self.keep_awake,
        )


def provenance(records: Iterable[object]) -> Provenance:
    scan = ProvenanceScan()
    scan.add_all(records)
    return scan.facts()
