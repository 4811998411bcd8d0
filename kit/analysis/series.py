"""Pure: records -> the point series ``kit plot`` draws (``kit.report.plot`` only draws them).

- ``window_points``: throughput against the static stream window, per (RTT, client);
- ``growth_series``: how a dynamic window grew, per cell: the stream window the client
  announced (SETTINGS, from the frame tap) and the connection credit it granted (stream-0
  WINDOW_UPDATEs), in ms since the client's timed phase began; records without timestamps
  (release 0.1) give the steps in order instead;
- ``finish_series``: per-stream finish times of multi-stream cells (the median round);
- ``compare_series``: each cell's sample per round and the baseline's noise band.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from kit.analysis.cells import CellView, group_campaigns, throughput
from kit.analysis.compare import CompareMeta, build_report, sample_of
from kit.plan.compare import BASELINE_KEY
from kit.results.records import Measurement


@dataclass(frozen=True)
class WindowPoint:
    rtt_ms: float
    client: str
    streams: int
    window_bytes: int
    throughput_mib_s: float
    theory_mib_s: float | None
    rate_mib_s: float | None  # the link's rate bound, when the record has one


@dataclass(frozen=True)
class Growth:
    """One dynamic cell's windows over time (``timed``) or by step (not ``timed``)."""

    label: str
    client: str
    timed: bool
    stream_window: tuple[tuple[float, int], ...]
    conn_credit: tuple[tuple[float, int], ...]


@dataclass(frozen=True)
class Finish:
    label: str
    finish_ms: tuple[float, ...]


@dataclass(frozen=True)
class CompareSeries:
    title: str
    unit: str
    keys: tuple[str, ...]
    samples: tuple[tuple[str, int, float], ...]  # (key, round, value)
    baseline_median: float | None
    floor_pct: float | None


def _ok_downloads(measurements: Sequence[Measurement]) -> list[Measurement]:
    return [m for m in measurements if m.ok and m.trial.workload.kind == "download"]


def _rate_mib_s(m: Measurement) -> float | None:
    """The link's rate bound as MiB/s, when its record has one: any field of the link named
    ``*_bits_s`` (a rate in bits per second), so a rate-limited link plots without an edit."""
    link = m.trial.link
    rates = [getattr(link, f.name) for f in dataclasses.fields(link) if f.name.endswith("bits_s")]
    found = [r for r in rates if isinstance(r, int | float) and r > 0]
    return min(found) / 8 / 2**20 if found else None


def window_points(measurements: Sequence[Measurement]) -> list[WindowPoint]:
    """One point per configuration (RTT, client, streams, window, rate): the median of its
    runs, so a file of thousands of runs draws as many points as it has configurations."""
    by_config: dict[tuple[object, ...], list[WindowPoint]] = {}
    for p in _run_points(measurements):
        key = (p.rtt_ms, p.client, p.streams, p.window_bytes, p.rate_mib_s)
        by_config.setdefault(key, []).append(p)
    return [_median_point(points) for points in by_config.values()]


def _median_point(points: list[WindowPoint]) -> WindowPoint:
    ordered = sorted(points, key=lambda p: p.throughput_mib_s)
    return ordered[(len(ordered) - 1) // 2]


def _run_points(measurements: Sequence[Measurement]) -> list[WindowPoint]:
    return [
        WindowPoint(
            rtt_ms=m.trial.link.rtt_ms,
            client=m.trial.client.kind,
            streams=m.trial.workload.streams,
            window_bytes=m.trial.client.window_bytes,
            throughput_mib_s=m.throughput_mib_s or 0.0,
            theory_mib_s=m.theory_mib_s,
            rate_mib_s=_rate_mib_s(m),
        )
        for m in _ok_downloads(measurements)
        if m.trial.client.window_bytes is not None and m.throughput_mib_s
    ]


def _growth(m: Measurement) -> Growth | None:
    frames, result = m.frames, m.result
    if frames is None or result is None or len(frames.client.window_growth) < 1:
        return None
    steps = frames.client.window_growth
    timed = all(s.t_ns is not None for s in steps)
    start = result.t_start_ns
    if timed:
        stream = tuple((((s.t_ns or 0) - start) / 1e6, s.window_bytes) for s in steps)
    else:
        stream = tuple((float(i), s.window_bytes) for i, s in enumerate(steps))
    updates = frames.client.conn_window_updates
    credit: tuple[tuple[float, int], ...] = ()
    if timed and len(updates.first_t_ns) == len(updates.first):
        sums = itertools.accumulate(updates.first, initial=65_535)
        times = [(t - start) / 1e6 for t in updates.first_t_ns]
        credit = tuple(zip(times, list(sums)[1:], strict=True))
    trial = m.trial
    label = f"{trial.client.kind} RTT {trial.link.rtt_ms:g} ms"
    if trial.workload.bytes_per_stream is not None:
        label += f", {trial.workload.bytes_per_stream / 2**20:g} MiB"
    return Growth(label, trial.client.kind, timed, stream, credit)


def growth_series(measurements: Sequence[Measurement]) -> list[Growth]:
    """One series per dynamic cell (its first ok round), in record order."""
    seen: set[tuple[str, str]] = set()
    out = []
    for m in _ok_downloads(measurements):
        cell = (m.tags.campaign, m.tags.key or m.trial.client.label + str(m.trial.link))
        if m.trial.client.window_mode == "static" or cell in seen:
            continue
        found = _growth(m)
        if found is not None:
            seen.add(cell)
            out.append(found)
    return out


def _finish_of(cell: CellView) -> Finish | None:
    run = cell.median_run(throughput)
    if run is None or run.result is None or len(run.result.stream_finish_s) < 2:
        return None
    trial = run.trial
    label = trial.label or cell.key
    return Finish(label, tuple(sorted(f * 1000.0 for f in run.result.stream_finish_s)))


def finish_series(measurements: Sequence[Measurement]) -> list[Finish]:
    out = []
    for view in group_campaigns(measurements).values():
        out += [f for f in (_finish_of(c) for c in view.cells) if f is not None]
    # Runs of no campaign (kit run): one series per configuration, its median run.
    lone: dict[str, list[Measurement]] = {}
    for m in _ok_downloads(measurements):
        if not m.tags.campaign and m.result is not None and len(m.result.stream_finish_s) > 1:
            label = f"{m.trial.client.label}, {m.trial.workload.streams} streams"
            lone.setdefault(label, []).append(m)
    for label, runs in lone.items():
        run = sorted(runs, key=lambda m: m.throughput_mib_s or 0.0)[(len(runs) - 1) // 2]
        finish = run.result.stream_finish_s if run.result is not None else ()
        out.append(Finish(label, tuple(sorted(f * 1000 for f in finish))))
    return out


def compare_series(measurements: Sequence[Measurement]) -> list[CompareSeries]:
    by_campaign: dict[str, list[Measurement]] = {}
    for m in measurements:
        if m.tags.campaign:
            by_campaign.setdefault(m.tags.campaign, []).append(m)
    out = []
    for ms in by_campaign.values():
        if not any(m.tags.key == BASELINE_KEY for m in ms):
            continue
        meta = CompareMeta.of_records(ms)
        report = build_report(meta, ms)
        samples = [
            (m.tags.key, m.tags.round, value)
            for m in ms
            if (value := sample_of(m, meta.metric)) is not None
        ]
        base = report.row(BASELINE_KEY).summary
        floor = report.floor.floor_pct if report.floor else None
        out.append(
            CompareSeries(
                title=f"{meta.title}: {meta.setup}",
                unit=meta.unit,
                keys=meta.keys,
                samples=tuple(samples),
                baseline_median=base.median if base else None,
                floor_pct=floor,
            )
        )
    return out
