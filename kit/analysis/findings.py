"""Pure: what a few lone runs (``kit run``, as ``make run`` makes them) show together.

Per run its figures as the run table shows them (throughput, its window / RTT bound and the
efficiency, the final window of a dynamic run); per client and RTT with two static windows
or more, the largest window's throughput over the smallest's beside the ratio of the windows
(window / RTT predicts them equal while the window binds) and the reference study's ratio at
that RTT (``kit.analysis.reference``: ~48x for 4 MiB / 64 KiB at 20 ms); per dynamic run the
reference's dynamic client at that RTT. ``kit.report.findings`` renders them.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from kit.analysis import reference as ref
from kit.analysis.cells import cpu_limit, efficiency
from kit.analysis.link import window_final_bytes
from kit.results.records import Measurement


@dataclass(frozen=True)
class RunFigure:
    """One ok download run: its setting and what it carried (MiB/s)."""

    client: str
    mode: str  # the client's window mode: static, dynamic, bdp-off, ...
    rtt_ms: float
    streams: int
    window_bytes: int | None  # the static stream window (None: not static)
    throughput_mib_s: float
    theory_mib_s: float | None  # its bound: min(window / RTT, rate); None when none binds
    final_window_bytes: int | None  # the largest stream window its sender had (the tap's)
    rate_limited: bool  # the link had a rate
    cpu_limited: bool  # a process near a core, or the machine saturated

    @property
    def efficiency(self) -> float | None:
        return efficiency(self.throughput_mib_s, self.theory_mib_s)

    @property
    def reference_dynamic_mib_s(self) -> float | None:
        """The reference study's dynamic (BDP) client at this RTT (None: not in its tables)."""
        if self.window_bytes is not None:
            return None
        return ref.THROUGHPUT_MIB_S.get((self.rtt_ms, None))


@dataclass(frozen=True)
class WindowRatio:
    """One client at one RTT: its largest static window's throughput over its smallest's."""

    client: str
    rtt_ms: float
    large: RunFigure
    small: RunFigure

    @property
    def ratio(self) -> float:
        return self.large.throughput_mib_s / self.small.throughput_mib_s

    @property
    def window_ratio(self) -> float:
        """What window / RTT predicts while the window binds: the windows' own ratio."""
        return (self.large.window_bytes or 0) / (self.small.window_bytes or 1)

    @property
    def reference(self) -> float | None:
        """The reference study's ratio for these windows at this RTT (None: not measured)."""
        large, small = self.large.window_bytes, self.small.window_bytes
        table = ref.THROUGHPUT_MIB_S
        if large is None or small is None:
            return None
        if (self.rtt_ms, large) not in table or (self.rtt_ms, small) not in table:
            return None
        return ref.window_ratio(self.rtt_ms, large, small)


@dataclass(frozen=True)
class Findings:
    runs: tuple[RunFigure, ...]
    ratios: tuple[WindowRatio, ...]
    not_ok: int  # runs that failed or were interrupted
    other: int  # ok runs of other kinds (uploads, unary calls): not summarised here
    campaign_runs: int = 0  # runs of campaigns (kit compare, knee, tables): their reports'
    campaigns: tuple[str, ...] = ()  # their first names, one more than CAMPAIGNS_NAMED at most

    @property
    def cpu_limited(self) -> int:
        return sum(1 for r in self.runs if r.cpu_limited)


def run_figure(m: Measurement) -> RunFigure | None:
    """An ok download run's figures (None for anything else)."""
    if not m.ok or m.trial.workload.kind != "download" or not m.throughput_mib_s:
        return None
    client, link = m.trial.client, m.trial.link
    return RunFigure(
        client=client.kind,
        mode=client.window_mode,
        rtt_ms=link.rtt_ms,
        streams=m.trial.workload.streams,
        window_bytes=client.window_bytes if client.window_mode == "static" else None,
        throughput_mib_s=m.throughput_mib_s,
        theory_mib_s=m.theory_mib_s,
        final_window_bytes=window_final_bytes(m),
        rate_limited=link.rate_down_bits_s is not None,
        cpu_limited=cpu_limit(m) is not None,
    )


CAMPAIGNS_NAMED = 3


def findings(measurements: Iterable[Measurement]) -> Findings:
    """The lone runs of ``measurements`` (campaigns' runs are their reports' business: they
    are counted, and the first few campaigns named, whatever the file holds)."""
    runs: list[RunFigure] = []
    not_ok = other = in_campaigns = 0
    named: list[str] = []
    for m in measurements:
        if m.tags.campaign:
            in_campaigns += 1
            if len(named) <= CAMPAIGNS_NAMED and m.tags.campaign not in named:
                named.append(m.tags.campaign)
            continue
        figure = run_figure(m)
        if figure is not None:
            runs.append(figure)
        elif m.ok:
            other += 1
        else:
            not_ok += 1
    ratios = tuple(window_ratios(runs))
    return Findings(tuple(runs), ratios, not_ok, other, in_campaigns, tuple(named))


def window_ratios(runs: Iterable[RunFigure]) -> list[WindowRatio]:
    """Per client, RTT and stream count with two static windows or more: the largest's
    median run against the smallest's."""
    groups: dict[tuple[str, float, int], dict[int, list[RunFigure]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in runs:
        if r.window_bytes is not None and not r.rate_limited:
            groups[(r.client, r.rtt_ms, r.streams)][r.window_bytes].append(r)
    out = []
    for (client, rtt, _streams), by_window in groups.items():
        if len(by_window) < 2:
            continue
        large, small = max(by_window), min(by_window)
        out.append(WindowRatio(client, rtt, _median(by_window[large]), _median(by_window[small])))
    return out


def _median(runs: list[RunFigure]) -> RunFigure:
    """The run whose throughput is the median (the lower of the middle two)."""
    ordered = sorted(runs, key=lambda r: r.throughput_mib_s)
    target = statistics.median_low([r.throughput_mib_s for r in ordered])
    return next(r for r in ordered if r.throughput_mib_s == target)
