"""Synthetic records for the tables tests: a Measurement per (cell, round) with chosen numbers."""

from __future__ import annotations

from dataclasses import replace

from kit.plan.campaign import Cell
from kit.plan.tables import TableCampaign
from kit.plan.trial import Trial, theory_mib_s
from kit.plan.units import MIB
from kit.results.client import ClientResult
from kit.results.records import (
    FrameSummary,
    Measurement,
    ProcessCpu,
    RunMeta,
    RunTags,
    SideFrames,
    WindowStep,
    WindowUpdates,
)

META = RunMeta(cpus=2, python="3.11", grpcio="1.85", h2="4.4", path="delay line")


def synthetic(
    trial: Trial,
    tags: RunTags,
    *,
    mib_s: float | None = None,
    latencies_ms: tuple[float, ...] = (),
    cpu: tuple[tuple[str, float], ...] = (("client", 0.3), ("proxy", 0.2), ("server", 0.2)),
    frames: FrameSummary | None = None,
    finish_s: tuple[float, ...] = (),
    failed: str = "",
    meta: RunMeta = META,
) -> Measurement:
    """One record as Topology.measure would make it; ``failed`` makes a failed record."""
    base = Measurement(
        trial=trial, status="failed", theory_mib_s=theory_mib_s(trial), meta=meta, tags=tags
    )
    if failed:
        return replace(base, error=failed)
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
    return replace(
        base,
        status="ok",
        result=result,
        cpu=tuple(ProcessCpu(role, f) for role, f in cpu),
        frames=frames,
    )


def campaign_tags(campaign: TableCampaign, cell: Cell, round_index: int, copy: int = 0) -> RunTags:
    return RunTags(
        campaign=campaign.name,
        run_id=f"r{round_index}:{cell.key}:{copy}",
        round=round_index,
        key=cell.key,
        copy=copy,
        control=cell.key == campaign.spec.control_key,
    )


def frames(
    settings: dict[str, int], increments: list[int], growth: list[int], pings: int = 3
) -> FrameSummary:
    """A frame-tap summary with the fields the wire table reads."""
    return FrameSummary(
        client=SideFrames(
            settings=settings,
            conn_window_updates=WindowUpdates(
                count=len(increments), total=sum(increments), first=tuple(increments[:10])
            ),
            stream_window_updates=WindowUpdates(count=2, total=0),
            pings_sent=pings,
            window_growth=tuple(WindowStep(i * 1000, g) for i, g in enumerate(growth)),
        )
    )
