"""Immutable measurement records: what a client measured, and the whole record of a trial.

One clock: ``time.monotonic_ns()`` (CLOCK_MONOTONIC is shared by every process on the
machine, so a client's timed window can be matched with the proxy's frame timestamps).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

MIB = 2**20
CPU_BOUND_FRACTION = 0.90


def now_ns() -> int:
    return time.monotonic_ns()


@dataclass(frozen=True)
class ClientResult:
    """What one client process measured during its timed phase (after warm-up)."""

    client: str
    bytes: int = 0
    messages: int = 0
    elapsed_s: float = 0.0
    t_start_ns: int = 0
    t_end_ns: int = 0
    stream_bytes: tuple[int, ...] = ()
    stream_finish_s: tuple[float, ...] = ()
    cpu_s: float = 0.0
    ping_rtt_ms: tuple[float, ...] = ()
    latencies_ms: tuple[float, ...] = ()
    window_trace: tuple[tuple[float, int], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def throughput_mib_s(self) -> float:
        return self.bytes / self.elapsed_s / MIB if self.elapsed_s > 0 else 0.0

    @property
    def cpu_fraction(self) -> float:
        return self.cpu_s / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["throughput_mib_s"] = self.throughput_mib_s
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClientResult:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        for key in ("stream_bytes", "stream_finish_s", "ping_rtt_ms", "latencies_ms", "notes"):
            if key in known:
                known[key] = tuple(known[key])
        if "window_trace" in known:
            known["window_trace"] = tuple((float(t), int(w)) for t, w in known["window_trace"])
        return cls(**known)


@dataclass(frozen=True)
class ProcessCpu:
    """CPU use of one process over the client's timed window, as a fraction of one core."""

    role: str
    cpu_fraction: float

    @property
    def bound(self) -> bool:
        return self.cpu_fraction >= CPU_BOUND_FRACTION


@dataclass(frozen=True)
class Measurement:
    """The record of one trial: config, result or failure, frame-tap summary, CPU, metadata.

    Appended to a JSON-lines file as soon as it exists (``kit.records``).
    """

    trial: dict[str, Any]
    status: str  # "ok" | "failed"
    result: dict[str, Any] | None = None
    error: str = ""
    theory_mib_s: float | None = None
    cpu: tuple[ProcessCpu, ...] = ()
    frames: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    tags: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.result is not None

    @property
    def client_result(self) -> ClientResult | None:
        return ClientResult.from_dict(self.result) if self.result is not None else None

    @property
    def throughput_mib_s(self) -> float | None:
        result = self.client_result
        return result.throughput_mib_s if result is not None else None

    @property
    def cpu_bound_roles(self) -> tuple[str, ...]:
        return tuple(c.role for c in self.cpu if c.bound)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["cpu"] = [asdict(c) for c in self.cpu]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Measurement:
        return cls(
            trial=dict(data["trial"]),
            status=str(data["status"]),
            result=data.get("result"),
            error=str(data.get("error", "")),
            theory_mib_s=data.get("theory_mib_s"),
            cpu=tuple(
                ProcessCpu(str(c["role"]), float(c["cpu_fraction"])) for c in data.get("cpu", ())
            ),
            frames=dict(data.get("frames") or {}),
            meta=dict(data.get("meta") or {}),
            tags=dict(data.get("tags") or {}),
        )
