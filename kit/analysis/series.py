"""Pure: records -> the point series ``kit plot`` draws (``kit.report.plot`` only draws them).

- ``window_points``: throughput against the static stream window, per (RTT, client);
- ``growth_series``: how a dynamic window grew, per cell: the stream window the client
  announced (SETTINGS, from the frame tap) and the connection credit it granted (stream-0
  WINDOW_UPDATEs), in ms since the client's timed phase began; records without timestamps
  (release 0.1) give the steps in order instead;
- ``finish_series``: per-stream finish times of multi-stream fixed-size cells (the median
  round; a timed cell's streams all stop at its end);
- ``compare_series``: each cell's sample per round and the baseline's noise band.
"""

from __future__ import annotations

import dataclasses
import itertools
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kit.analysis.compare import CompareMeta, build_report, sample_of
from kit.analysis.intervals import MIN_INTERVAL_MS, rebin
from kit.analysis.link import ramp_of, window_over_bdp
from kit.plan.compare import BASELINE_KEY
from kit.plan.trial import window_in_flight_bytes
from kit.plan.units import MIB
from kit.results.records import Measurement


@dataclass(frozen=True)
class WindowPoint:
    """One configuration's median run. ``window_bytes`` is the window that bounds it: the
    bytes its windows let in flight per RTT (``kit.plan.trial.window_in_flight_bytes``:
    streams x stream window, or the connection window when smaller), so the run sits on
    the window / RTT line it ran against; ``conn_bound`` when the connection window is the
    smaller."""

    rtt_ms: float
    client: str
    streams: int
    window_bytes: int
    throughput_mib_s: float
    theory_mib_s: float | None
    rate_mib_s: float | None  # the link's rate bound, when the record has one
    study: str = "kit run"  # the panel group: "windows table", "stacks table", "kit run"
    stream_window_bytes: int | None = None
    conn_bound: bool = False


@dataclass(frozen=True)
class Growth:
    """One dynamic cell's windows over time (``timed``) or by step (not ``timed``)."""

    label: str
    client: str
    timed: bool
    stream_window: tuple[tuple[float, int], ...]
    conn_credit: tuple[tuple[float, int], ...]
    mode: str = "dynamic"  # the client's window mode: "dynamic", "bdp-off", "pool"


@dataclass(frozen=True)
class Finish:
    """One cell's streams' finish times, in stream order; the first ``slow`` streams were
    read by a paced (slow) reader."""

    label: str
    finish_ms: tuple[float, ...]
    slow: int = 0


@dataclass(frozen=True)
class CompareSeries:
    title: str
    unit: str
    keys: tuple[str, ...]
    samples: tuple[tuple[str, int, float], ...]  # (key, round, value)
    baseline_median: float | None
    floor_pct: float | None


def _rate_mib_s(m: Measurement) -> float | None:
    """The link's rate bound as MiB/s, when its record has one: any field of the link named
    ``*_bits_s`` (a rate in bits per second), so a rate-limited link plots without an edit."""
    link = m.trial.link
    rates = [getattr(link, f.name) for f in dataclasses.fields(link) if f.name.endswith("bits_s")]
    found = [r for r in rates if isinstance(r, int | float) and r > 0]
    return min(found) / 8 / 2**20 if found else None


# Campaigns whose cells are a static-window study (throughput against the window); cells
# of other tables (starvation, sharing, links, uploads) answer other questions and would
# sit far below the window / RTT line unexplained.
WINDOW_STUDIES = ("table1-", "table8-windows")


def window_study(m: Measurement) -> str | None:
    """The panel group a record's point belongs to, or None when it is no window-study point:
    a static window, whole-speed readers, from a window table or a plain ``kit run``."""
    client, workload, campaign = m.trial.client, m.trial.workload, m.tags.campaign
    if client.window_mode != "static" or client.window_bytes is None:
        return None
    if workload.slow_streams or workload.read_rate_bits_s is not None:
        return None
    if not campaign:
        return "kit run"
    if campaign.startswith("table8-windows"):
        return "stacks table"
    return "windows table" if campaign.startswith(WINDOW_STUDIES) else None


def window_points(measurements: Sequence[Measurement]) -> list[WindowPoint]:
    """One point per configuration (RTT, client, streams, window, rate): the median of its
    runs, so a file of thousands of runs draws as many points as it has configurations."""
    acc = PlotData()
    acc.add_all(measurements)
    return acc.window_points()


def _run_point(m: Measurement) -> WindowPoint | None:
    if not (m.ok and m.trial.workload.kind == "download" and m.throughput_mib_s):
        return None
    study, trial = window_study(m), m.trial
    in_flight = window_in_flight_bytes(trial)
    if study is None or trial.client.window_bytes is None or in_flight is None:
        return None
    streams = trial.client.window_bytes * trial.streams_per_connection
    conn = trial.conn_window_bytes
    return WindowPoint(
        rtt_ms=trial.link.rtt_ms,
        client=trial.client.kind,
        streams=trial.workload.streams,
        window_bytes=in_flight,
        throughput_mib_s=m.throughput_mib_s,
        theory_mib_s=m.theory_mib_s,
        rate_mib_s=_rate_mib_s(m),
        study=study,
        stream_window_bytes=trial.client.window_bytes,
        conn_bound=conn is not None and conn < streams,
    )


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
    client = m.trial.client
    return Growth(_growth_label(m), client.kind, timed, stream, credit, client.window_mode)


def _growth_label(m: Measurement) -> str:
    """A cell's key names it in a campaign; a lone run by its link and size."""
    if m.tags.key:
        return m.tags.key
    trial = m.trial
    label = f"RTT {trial.link.rtt_ms:g} ms"
    if trial.link.rate_down_bits_s:
        label += f", {trial.link.rate_down_bits_s / 1e6:g} Mbit/s"
    if trial.workload.bytes_per_stream is not None:
        label += f", {trial.workload.bytes_per_stream / 2**20:g} MiB"
    if trial.client.pool_bytes:
        label += f", pool {trial.client.pool_bytes // 1024} KiB"
    return label


def growth_series(measurements: Sequence[Measurement]) -> list[Growth]:
    """One series per dynamic cell (its first ok round), in record order."""
    acc = PlotData()
    acc.add_all(measurements)
    return acc.growth_series()


def finish_series(measurements: Sequence[Measurement]) -> list[Finish]:
    acc = PlotData()
    acc.add_all(measurements)
    return acc.finish_series()


def _median_index(values: Sequence[float]) -> int:
    """The index of the value closest to the median (the first of ties), as
    ``CellView.median_run`` picks."""
    median = statistics.median(values)
    return min(range(len(values)), key=lambda i: (abs(values[i] - median), i))


def _slim(m: Measurement) -> Measurement:
    """What a comparison's figure needs of a record: the frame summary (the bulk) dropped."""
    return dataclasses.replace(m, frames=None)


@dataclass
class _Config:
    """One configuration's window point and its runs' throughputs."""

    point: WindowPoint
    throughputs: list[float] = field(default_factory=list)


@dataclass
class _FinishCell:
    label: str
    slow: int
    runs: list[tuple[float, tuple[float, ...]]] = field(default_factory=list)


@dataclass
class PlotData:
    """What the figures need, aggregated one record at a time (``add``), so a records file
    of any length is plotted in memory bounded by its configurations, not its records: per
    configuration one point and a float per run; per dynamic cell its first window growth;
    per multi-stream cell a float and its streams' finish times per run; the records of
    comparison campaigns (bounded by their plan) without their frame summaries."""

    configs: dict[tuple[object, ...], _Config] = field(default_factory=dict)
    growth: dict[tuple[str, str], Growth] = field(default_factory=dict)
    finish: dict[tuple[str, str], _FinishCell] = field(default_factory=dict)
    compares: dict[str, list[Measurement]] = field(default_factory=dict)
    throughput: list[Throughput] = field(default_factory=list)
    throughput_runs: int = 0  # every run with a delivery trace (the first few are kept)
    estimators: dict[tuple[str, str, str], _EstimatorRuns] = field(default_factory=dict)

    def add_all(self, measurements: Iterable[Measurement]) -> None:
        for m in measurements:
            self.add(m)

    def add(self, m: Measurement) -> None:
        # A comparison's or knee's campaign is named by its title; the tables' by "table".
        if m.tags.campaign and not m.tags.campaign.startswith("table"):
            self.compares.setdefault(m.tags.campaign, []).append(_slim(m))
        if not (m.ok and m.trial.workload.kind == "download"):
            return
        self._add_point(m)
        self._add_growth(m)
        self._add_finish(m)
        self._add_throughput(m)
        self._add_estimator(m)

    def _add_throughput(self, m: Measurement) -> None:
        if m.frames is None or not m.frames.delivered_down.bytes:
            return
        self.throughput_runs += 1
        if len(self.throughput) < MAX_THROUGHPUT_RUNS:
            found = _throughput(m)
            if found is not None:
                self.throughput.append(found)

    def _add_estimator(self, m: Measurement) -> None:
        cell = _estimator_cell(m)
        if cell is None:
            return
        runs = self.estimators.setdefault(cell, _EstimatorRuns())
        ratio, ramp = window_over_bdp(m), ramp_of(m)
        if ratio is not None:
            runs.windows.append(ratio)
        if ramp is not None and ramp.to_fraction_ms is not None:
            runs.ramps.append(ramp.to_fraction_ms)

    def throughput_series(self) -> list[Throughput]:
        return list(self.throughput)

    def estimator_bars(self) -> list[EstimatorBar]:
        return [
            EstimatorBar(study, est, link, _median(r.windows), _median(r.ramps))
            for (study, est, link), r in self.estimators.items()
        ]

    def _add_point(self, m: Measurement) -> None:
        p = _run_point(m)
        if p is None:
            return
        key = (p.study, p.rtt_ms, p.client, p.streams, p.window_bytes, p.stream_window_bytes,
               p.rate_mib_s)  # fmt: skip
        self.configs.setdefault(key, _Config(p)).throughputs.append(p.throughput_mib_s)

    def _add_growth(self, m: Measurement) -> None:
        cell = (m.tags.campaign, m.tags.key or m.trial.client.label + str(m.trial.link))
        if m.trial.client.window_mode == "static" or cell in self.growth:
            return
        found = _growth(m)
        if found is not None:
            self.growth[cell] = found

    def _add_finish(self, m: Measurement) -> None:
        # A timed run's streams all stop when its time is up: their finish says nothing.
        result = m.result
        if result is None or len(result.stream_finish_s) < 2:
            return
        if m.trial.workload.bytes_per_stream is None:
            return
        if m.tags.campaign:
            cell = (m.tags.campaign, m.tags.key)
            label = m.trial.label or m.tags.key
        else:
            label = f"{m.trial.client.label}, {m.trial.workload.streams} streams"
            cell = ("", label)
        found = self.finish.setdefault(cell, _FinishCell(label, m.trial.workload.slow_streams))
        times = tuple(f * 1000 for f in result.stream_finish_s)
        found.runs.append((m.throughput_mib_s or 0.0, times))

    def window_points(self) -> list[WindowPoint]:
        out = []
        for c in self.configs.values():
            median = c.throughputs[_median_index(c.throughputs)]
            out.append(dataclasses.replace(c.point, throughput_mib_s=median))
        return out

    def growth_series(self) -> list[Growth]:
        return list(self.growth.values())

    def finish_series(self) -> list[Finish]:
        out = []
        for cell in self.finish.values():
            _, times = cell.runs[_median_index([t for t, _ in cell.runs])]
            out.append(Finish(cell.label, times, cell.slow))
        return out

    def compare_series(self) -> list[CompareSeries]:
        return _compare_series(self.compares.values())


def compare_series(measurements: Sequence[Measurement]) -> list[CompareSeries]:
    acc = PlotData()
    acc.add_all(measurements)
    return acc.compare_series()


def _compare_series(campaigns: Iterable[list[Measurement]]) -> list[CompareSeries]:
    out = []
    for ms in campaigns:
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


# --- throughput over time, and the estimator table ------------------------------------------

MAX_THROUGHPUT_RUNS = 6  # panels of one figure; the rest are counted ("first N of M")
ESTIMATOR_STUDIES = {"table6-links": "estimator table", "table9-links": "policies table"}


@dataclass(frozen=True)
class Throughput:
    """One run's delivered MiB/s per interval (from the delay line's delivery trace), in ms
    since the timed phase began, with the bounds it ran against."""

    label: str
    interval_ms: float
    points: tuple[tuple[float, float], ...]  # (interval start ms, MiB/s)
    rate_mib_s: float | None
    window_rtt_mib_s: float | None  # the (final) stream window / RTT
    window_static: bool
    end_ms: float | None = None  # where the last interval ends (it may be shorter)


@dataclass(frozen=True)
class EstimatorBar:
    """One estimator/policy on one link of the estimator or policies table (medians)."""

    study: str
    estimator: str
    link: str
    window_over_bdp: float | None
    ramp_90_ms: float | None


def _interval_ms(m: Measurement) -> float:
    """The run's own ``--interval``, else one RTT (at least 10 ms): fine enough to show the
    ramp round trip by round trip, coarse enough not to show the trace's buckets."""
    return m.meta.interval_ms or max(MIN_INTERVAL_MS, m.trial.link.rtt_ms)


def _throughput(m: Measurement) -> Throughput | None:
    result, frames = m.result, m.frames
    if result is None or frames is None or not frames.delivered_down.bytes:
        return None
    every = _interval_ms(m)
    bins = rebin(frames.delivered_down, result.t_start_ns, result.t_end_ns, every)
    if (
        len(bins) > 1
        and (bins[-1].end_s - bins[-1].start_s) * 1e9 < frames.delivered_down.bucket_ns
    ):
        bins = bins[:-1]  # shorter than a trace bucket, it holds none: no stall to draw
    if not bins:
        return None
    client, rtt = m.trial.client, m.trial.link.rtt_ms
    static = client.window_mode == "static" and client.window_bytes is not None
    window = client.window_bytes if static else frames.window_final_bytes
    bound = window / MIB / (rtt / 1000) if window and rtt > 0 else None
    points = tuple((b.start_s * 1000, b.mib_s) for b in bins)
    end = bins[-1].end_s * 1000
    return Throughput(_growth_label(m), every, points, _rate_mib_s(m), bound, static, end)


def _estimator_cell(m: Measurement) -> tuple[str, str, str] | None:
    """(study, estimator, link) of an estimator/policies table record: its label reads
    "<estimator> on <link>[, N stream(s)]"."""
    study = ESTIMATOR_STUDIES.get(m.tags.campaign)
    if study is None:
        return None
    estimator, _, link = (m.trial.label or m.tags.key).partition(" on ")
    return study, estimator, link.replace("stream(s)", "streams").replace(" 1 streams", " 1 stream")


@dataclass
class _EstimatorRuns:
    windows: list[float] = field(default_factory=list)
    ramps: list[float] = field(default_factory=list)


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None
