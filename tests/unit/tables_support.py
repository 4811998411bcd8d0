"""Synthetic records for the tables tests: a Measurement per (cell, round) with chosen numbers."""

from __future__ import annotations

from typing import Any

from kit.measure import ClientResult, Measurement, ProcessCpu
from kit.plan import Trial, theory_mib_s
from kit.rounds import Cell
from kit.tables import TableCampaign

MIB = 2**20


def synthetic(
    trial: Trial,
    tags: dict[str, Any],
    *,
    mib_s: float | None = None,
    latencies_ms: tuple[float, ...] = (),
    cpu: tuple[tuple[str, float], ...] = (("client", 0.3), ("proxy", 0.2), ("server", 0.2)),
    frames: dict[str, Any] | None = None,
    finish_s: tuple[float, ...] = (),
    failed: str = "",
) -> Measurement:
    """One record as Topology.measure would make it; ``failed`` makes a failed record."""
    base: dict[str, Any] = {
        "trial": trial.to_dict(),
        "theory_mib_s": theory_mib_s(trial),
        "meta": {"cpus": 2, "python": "3.11", "grpcio": "1.85", "h2": "4.4", "path": "delay line"},
        "tags": dict(tags),
    }
    if failed:
        return Measurement(status="failed", error=failed, **base)
    elapsed = 1.0  # timed cells; a fixed transfer takes bytes / rate
    if latencies_ms:
        result = ClientResult(
            client=trial.client.kind,
            messages=len(latencies_ms),
            elapsed_s=sum(latencies_ms) / 1000,
            latencies_ms=latencies_ms,
        )
    else:
        rate = mib_s or 1.0
        fixed = trial.workload.bytes_per_stream
        total = fixed * trial.workload.streams if fixed else int(rate * MIB * elapsed)
        result = ClientResult(
            client=trial.client.kind,
            bytes=total,
            elapsed_s=total / MIB / rate,
            stream_finish_s=finish_s,
        )
    return Measurement(
        status="ok",
        result=result.to_dict(),
        cpu=tuple(ProcessCpu(role, f) for role, f in cpu),
        frames=dict(frames or {}),
        **base,
    )


def campaign_tags(
    campaign: TableCampaign, cell: Cell[Trial], round_index: int, copy: int = 0
) -> dict[str, Any]:
    return {
        "campaign": campaign.name,
        "run_id": f"r{round_index}:{cell.key}:{copy}",
        "round": round_index,
        "key": cell.key,
        "copy": copy,
        "control": cell.key == campaign.spec.control_key,
    }


def frames(
    settings: dict[str, int], increments: list[int], growth: list[int], pings: int = 3
) -> dict[str, Any]:
    """A frame-tap summary with the keys the wire table reads."""
    return {
        "client_settings": settings,
        "conn_window_updates": {
            "count": len(increments),
            "total": sum(increments),
            "first": increments[:10],
        },
        "stream_window_updates": {"count": 2, "total": 0},
        "pings_sent": pings,
        "window_growth": growth,
    }
