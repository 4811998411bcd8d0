"""Pure: records -> one benchmark entry per cell, the series a CI dashboard tracks
(``kit report --benchmark-json``: github-action-benchmark's ``customBiggerIsBetter``).

A cell is a campaign's configuration (``kit compare``, ``knee``, ``tables``: its campaign
and key) or, for lone ``kit run`` records, every run of one configuration (the same trial).
Its entry is the median throughput of its ok runs (``kit.analysis.stats.summarize``, as the
tables' cells) with their min and max. A name must stay the same from one CI run to the
next, so it is the campaign's name without the digest that makes it unique to its cells
(``compare-27695f61f9`` -> ``compare``) and the cell's key: ``compare/h2:window=1MiB``,
``table8-windows/rtt20ms-h2-static-64KiB``, ``knee-1stream/64KiB``; a lone run's is
``run/`` and its configuration (``run/h2 static 4 MiB, download x1, RTT 20 ms``).

Unary cells measure latency (smaller is better: a file of their own in such a dashboard)
and cells without an ok run have no median: both are left out.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from kit.analysis.stats import Summary, summarize
from kit.plan.trial import Trial, fingerprint
from kit.plan.units import format_bytes, format_rate
from kit.results.records import Measurement

UNIT = "MiB/s"
_DIGEST = re.compile(r"-[0-9a-f]{10}$")


@dataclass(frozen=True)
class BenchmarkEntry:
    name: str
    unit: str
    summary: Summary


def campaign_stem(campaign: str) -> str:
    """A campaign's name without its cells' digest: the same from one run to the next."""
    return _DIGEST.sub("", campaign)


def run_label(trial: Trial) -> str:
    """A lone run's configuration: ``h2 static 4 MiB, download x1, RTT 20 ms[, 100 Mbit/s]``."""
    client, workload, link = trial.client, trial.workload, trial.link
    text = f"{client.label}, {workload.kind} x{workload.streams}, RTT {link.rtt_ms:g} ms"
    if link.rate_down_bits_s is not None:
        text += f", {format_rate(link.rate_down_bits_s)}"
    if trial.server.kind != "grpcio" or trial.server.window_bytes is not None:
        text += f", {trial.server.kind} {trial.server.label}"
    if workload.bytes_per_stream:
        text += f", {format_bytes(workload.bytes_per_stream)} per stream"
    return text


def _config_key(trial: Trial) -> str:
    return hashlib.sha256(json.dumps(fingerprint(trial), sort_keys=True).encode()).hexdigest()


@dataclass
class BenchmarkCells:
    """The cells' throughputs, gathered one record at a time (only floats are held)."""

    cells: dict[str, list[float]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # cell -> name

    def add(self, m: Measurement) -> None:
        if m.trial.workload.kind == "unary":
            return
        if m.tags.campaign:
            cell = f"{m.tags.campaign}\0{m.tags.key}"
            name = f"{campaign_stem(m.tags.campaign)}/{m.tags.key}"
        else:
            cell = _config_key(m.trial)
            name = f"run/{run_label(m.trial)}"
        values = self.cells.setdefault(cell, [])
        self.labels.setdefault(cell, name)
        if m.ok and m.throughput_mib_s is not None:
            values.append(m.throughput_mib_s)

    def entries(self) -> list[BenchmarkEntry]:
        """One entry per cell with an ok run, in first-seen order; a name two cells share
        (two configurations one label cannot tell apart) is made unique with a number."""
        out: list[BenchmarkEntry] = []
        used: dict[str, int] = {}
        for cell, values in self.cells.items():
            if not values:
                continue
            name = self.labels[cell]
            used[name] = used.get(name, 0) + 1
            if used[name] > 1:
                name = f"{name} ({used[name]})"
            out.append(BenchmarkEntry(name, UNIT, summarize(values)))
        return out


def benchmark_entries(measurements: Iterable[Measurement]) -> list[BenchmarkEntry]:
    cells = BenchmarkCells()
    for m in measurements:
        cells.add(m)
    return cells.entries()
