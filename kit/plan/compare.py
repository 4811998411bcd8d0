"""Compare plans: a link, a workload, a baseline and candidates, from flags or a TOML file.

The baseline runs as the campaign's control: twice per round, and its copies' spread is
the noise floor (``kit.plan.schedule``, ``kit.analysis.stats``). Nothing here does IO except
reading a plan file.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the same parser, packaged for Python 3.10
    import tomli as tomllib

from kit.errors import UsageError, named, prefixed
from kit.plan.builder import (
    Candidate,
    candidate_from_items,
    link_from,
    link_names,
    parse_candidate,
    whole_number,
    workload_from,
)
from kit.plan.campaign import CampaignSpec, Cell
from kit.plan.options import PlanOptions, options_from_items
from kit.plan.programs import CLIENT_KINDS
from kit.plan.trial import (
    Link,
    Trial,
    Workload,
    check,
    check_connections,
    check_frame_time,
    check_server_memory,
    fingerprint,
    link_text,
)
from kit.plan.units import format_bytes

CompareMetric = Literal["throughput", "latency"]
BASELINE_KEY = "baseline"
COMPARE_WORKLOADS = ("download", "unary", "upload")
DEFAULT_ROUNDS = 5
MAX_ROUNDS = 1000
PLAN_UNKNOWN = "unknown setting {keys} (use {known}, baseline, [[candidate]])"


# --- the plan -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ComparePlan:
    """One comparison: a link, a workload, a baseline (the control) and candidates."""

    link: Link
    workload: Workload
    baseline: Candidate
    candidates: tuple[Candidate, ...]
    rounds: int = DEFAULT_ROUNDS
    seed: int = 1
    title: str = "compare"

    def __post_init__(self) -> None:
        if not self.candidates:
            raise UsageError(
                "compare: give at least one --candidate (or a plan file with [[candidate]])"
            )
        check(
            self.workload.kind in COMPARE_WORKLOADS,
            "{workload}: {0!r} is not one of {1}",
            self.workload.kind,
            ", ".join(COMPARE_WORKLOADS),
        )
        names = [c.name for c in self.candidates]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise UsageError(
                f"candidate {repeated[0]!r} given twice; name one of them (TOML name = ...)"
            )
        if BASELINE_KEY in names:
            raise UsageError(f"candidate name {BASELINE_KEY!r} is reserved for the baseline")
        check(
            1 <= self.rounds <= MAX_ROUNDS,
            "{rounds}: {0} is outside 1..{1}",
            self.rounds,
            MAX_ROUNDS,
        )

    def trial(self, candidate: Candidate) -> Trial:
        return Trial(
            link=self.link,
            client=candidate.client,
            server=candidate.server,
            workload=self.workload,
            label=candidate.name,
        )

    def cells(self) -> tuple[Cell, ...]:
        baseline = Cell(BASELINE_KEY, self.trial(self.baseline))
        return (baseline, *(Cell(c.name, self.trial(c)) for c in self.candidates))

    @property
    def campaign_name(self) -> str:
        """Stable for the same cells, whatever the rounds and seed: --resume may add rounds."""
        cells = [[c.key, fingerprint(c.trial)] for c in self.cells()]
        digest = hashlib.sha256(json.dumps(cells, sort_keys=True).encode()).hexdigest()[:10]
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", self.title).strip("-") or "compare"
        return f"{slug}-{digest}"

    def campaign(self) -> CampaignSpec:
        return CampaignSpec(self.campaign_name, self.cells(), BASELINE_KEY, self.rounds, self.seed)

    @property
    def specs(self) -> dict[str, str]:
        """Cell key -> the spec that reproduces it."""
        return {BASELINE_KEY: self.baseline.spec, **{c.name: c.spec for c in self.candidates}}

    @property
    def metric(self) -> CompareMetric:
        return "latency" if self.workload.kind == "unary" else "throughput"

    @property
    def setup(self) -> str:
        return describe_setup(self.link, self.workload)


def describe_setup(link: Link, workload: Workload) -> str:
    """One line: the link and the workload, for the report's heading."""
    if link.delay_up_ms == link.delay_down_ms:
        path = f"RTT {link.rtt_ms:g} ms"
    else:
        path = f"RTT {link.rtt_ms:g} ms (up {link.delay_up_ms:g} + down {link.delay_down_ms:g})"
    path += link_text(link)
    if workload.kind == "unary":
        return f"{path}; unary calls x{workload.calls}"
    if workload.bytes_per_stream is not None:
        extent = f"{format_bytes(workload.bytes_per_stream, digits=3)} per stream"
    else:
        extent = f"{workload.timed_duration_s(link.rtt_ms):g} s timed"
    size = format_bytes(workload.message_bytes, digits=3)
    return f"{path}; {workload.kind}, {workload.streams} stream(s), {size} messages, {extent}"


# --- settings: CLI flags over a plan file over defaults ----------------------------------


@dataclass(frozen=True)
class PlanFile:
    """What a TOML plan file holds: settings, an optional baseline, candidates."""

    settings: PlanOptions = field(default_factory=PlanOptions)
    baseline: Candidate | None = None
    candidates: tuple[Candidate, ...] = ()


def load_plan_file(path: Path) -> PlanFile:
    """Read a TOML plan (see examples/compare.toml); every mistake is a one-line UsageError."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--file: {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--file: cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"--file: {path} is not valid TOML: {exc}") from None
    return plan_file_from_dict(data, str(path))


def plan_file_from_dict(data: Mapping[str, object], where: str = "plan") -> PlanFile:
    data = dict(data)
    baseline_raw = data.pop("baseline", None)
    candidates_raw = data.pop("candidate", [])
    with prefixed(where):
        settings = options_from_items(PlanOptions, data.items(), PLAN_UNKNOWN)
    if not isinstance(candidates_raw, list):
        raise UsageError(f"{where}: 'candidate' must be an array of tables ([[candidate]])")
    baseline = None if baseline_raw is None else _file_candidate(baseline_raw, f"{where}: baseline")
    candidates = tuple(
        _file_candidate(c, f"{where}: candidate {i + 1}") for i, c in enumerate(candidates_raw)
    )
    return PlanFile(settings=settings, baseline=baseline, candidates=candidates)


def _file_candidate(raw: object, where: str) -> Candidate:
    """A string spec, or a table: name + spec, or name + client + fields (+ options table)."""
    if isinstance(raw, str):
        return parse_candidate(raw)
    with prefixed(where):
        if not isinstance(raw, dict):
            raise UsageError("must be a spec string or a table")
        table = dict(raw)
        name = table.pop("name", None)
        if name is not None and not isinstance(name, str):
            raise UsageError("name must be a string")
        if "spec" in table:
            if set(table) != {"spec"}:
                raise UsageError('give either spec = "..." or client + fields, not both')
            return parse_candidate(str(table["spec"]), name)
        kind = str(table.pop("client", ""))
        if kind not in CLIENT_KINDS:
            raise UsageError(f"client {kind!r} is not one of {', '.join(CLIENT_KINDS)}")
        options = table.pop("options", {})
        if not isinstance(options, dict):
            raise UsageError("options must be a table of channel arguments")
    return candidate_from_items(kind, [*table.items(), *options.items()], name)


def plan_from_settings(
    settings: PlanOptions,
    baseline: Candidate,
    candidates: Sequence[Candidate],
    title: str = "compare",
) -> ComparePlan:
    """Settings (a plan file's under CLI flags: ``kit.plan.options.overlay``) -> ComparePlan."""
    link = link_from(settings)
    workload = workload_from(settings, link.rtt_ms)
    rounds = settings.rounds if settings.rounds is not None else DEFAULT_ROUNDS
    seed = settings.seed if settings.seed is not None else 1
    for candidate in (baseline, *candidates):
        with prefixed(f"candidate {candidate.spec!r}"), named(settings.names()):
            check_connections(candidate.client, workload)
            check_server_memory(candidate.server, workload)
    with named(link_names(settings)):
        check_frame_time(link, workload)  # every cell's trial would refuse it, but later
        return ComparePlan(
            link=link,
            workload=workload,
            baseline=baseline,
            candidates=tuple(candidates),
            rounds=whole_number(rounds, settings.name("rounds")),
            seed=whole_number(seed, settings.name("seed")),
            title=title,
        )
