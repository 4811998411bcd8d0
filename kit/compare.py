"""Compare plans: candidate specs, the TOML file form, and the campaign they become.

A candidate is one client configuration, typed on one line:

- ``grpcio`` - grpcio with C-core's defaults (BDP probe on);
- ``grpcio:grpc.http2.bdp_probe=0,grpc.http2.lookahead_bytes=4194304`` - any channel
  argument as ``key=value`` (ints parsed); kit keys ``window``, ``mode``, ``connections``;
- ``h2`` - our h2 client, dynamic (grpc-go-style BDP estimator);
- ``h2:window=4MiB,conn-window=16MiB,credit=half,max-frame=1MiB,connections=8``.

Items are split at commas that start a new ``key=``, so a value may itself hold commas.
The baseline runs as the campaign's control: twice per round, and its copies' spread is
the noise floor (``kit.rounds``, ``kit.stats``). Nothing here does IO except reading a
plan file.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from kit.campaign import CampaignSpec, run_campaign
from kit.errors import UsageError
from kit.grpc_options import parse_option
from kit.plan import CLIENT_KINDS, ClientConfig, Link, OptionValue, Trial, Workload
from kit.report.compare import CompareMeta, CompareReport, build_report
from kit.rounds import Cell
from kit.units import parse_duration_ms, parse_size_bytes, parse_window_bytes

BASELINE_KEY = "baseline"
COMPARE_WORKLOADS = ("download", "unary")
DEFAULT_RTT = "20ms"
DEFAULT_ROUNDS = 5
H2_KEYS = ("window", "conn-window", "credit", "max-frame", "connections", "mode")
GRPCIO_KIT_KEYS = ("window", "mode", "connections")
SETTING_KEYS = (
    "rtt",
    "delay-up",
    "delay-down",
    "streams",
    "message-size",
    "workload",
    "duration",
    "calls",
    "timeout",
    "rounds",
    "seed",
)
_ITEM_SPLIT = re.compile(r",\s*(?=[A-Za-z_][\w.\-]*\s*=)")


@dataclass(frozen=True)
class Candidate:
    """A named client configuration; ``spec`` is the one-line form that reproduces it."""

    name: str
    client: ClientConfig
    spec: str

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise UsageError(f"candidate {self.spec!r}: its name is empty")


# --- candidate specs ----------------------------------------------------------------------


def parse_candidate(text: str, name: str | None = None) -> Candidate:
    """ "h2:window=4MiB,conn-window=16MiB" -> Candidate (named by its spec unless named)."""
    spec = text.strip()
    kind, sep, rest = spec.partition(":")
    kind = kind.strip()
    if kind not in CLIENT_KINDS:
        raise UsageError(
            f"candidate {spec!r}: client {kind!r} is not one of {', '.join(CLIENT_KINDS)} "
            "(e.g. 'grpcio:grpc.http2.bdp_probe=0' or 'h2:window=4MiB,conn-window=16MiB')"
        )
    items = _split_items(rest, spec) if sep else []
    return Candidate(name or spec, build_client(kind, items, spec), spec)


def _split_items(rest: str, spec: str) -> list[tuple[str, str]]:
    if not rest.strip():
        raise UsageError(f"candidate {spec!r}: nothing after ':' (drop the ':' for defaults)")
    items = []
    for raw in _ITEM_SPLIT.split(rest.strip()):
        key, sep, value = raw.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"candidate {spec!r}: {raw!r} is not key=value")
        items.append((key.strip(), value.strip()))
    return items


def build_client(kind: str, items: Sequence[tuple[str, Any]], spec: str) -> ClientConfig:
    """A ClientConfig from key/value items; any invalid value names the candidate."""
    keys = [k for k, _ in items]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise UsageError(f"candidate {spec!r}: {', '.join(repeated)} given twice")
    try:
        if kind == "h2":
            return _h2_client(dict(items), spec)
        return _grpcio_client(items)
    except UsageError as exc:
        if str(exc).startswith("candidate "):
            raise
        raise UsageError(f"candidate {spec!r}: {exc}") from None


def _h2_client(settings: Mapping[str, Any], spec: str) -> ClientConfig:
    norm = {k.replace("_", "-"): v for k, v in settings.items()}
    unknown = sorted(set(norm) - set(H2_KEYS))
    if unknown:
        raise UsageError(
            f"candidate {spec!r}: unknown h2 setting {', '.join(unknown)} "
            f"(use {', '.join(H2_KEYS)})"
        )
    window = _window(norm.get("window"), "window")
    conn = _window(norm.get("conn-window"), "conn-window")
    mode = str(norm.get("mode") or ("static" if window is not None else "dynamic"))
    if mode == "dynamic" and conn is not None:
        raise UsageError(
            "conn-window: the dynamic h2 client grows its connection window itself; set window too"
        )
    return ClientConfig(
        kind="h2",
        window_mode=mode,  # type: ignore[arg-type]
        window_bytes=window,
        conn_window_bytes=conn,
        credit_policy=str(norm.get("credit", "immediate")),  # type: ignore[arg-type]
        max_frame_bytes=parse_size_bytes(str(norm.get("max-frame", "1MiB")), option="max-frame"),
        connections=_int(norm.get("connections", 1), "connections"),
    )


def _grpcio_client(items: Sequence[tuple[str, Any]]) -> ClientConfig:
    kit = {k: v for k, v in items if k in GRPCIO_KIT_KEYS}
    options: list[tuple[str, OptionValue]] = []
    for key, value in items:
        if key not in GRPCIO_KIT_KEYS:
            options.append(_option(key, value))
    window = _window(kit.get("window"), "window")
    mode = str(kit.get("mode") or ("static" if window is not None else "dynamic"))
    return ClientConfig(
        kind="grpcio",
        window_mode=mode,  # type: ignore[arg-type]
        window_bytes=window,
        channel_options=tuple(options),
        connections=_int(kit.get("connections", 1), "connections"),
    )


def _option(key: str, value: Any) -> tuple[str, OptionValue]:
    if "." not in key:
        # grpcio ignores unknown arguments silently: catch "conn-window" and typos here.
        hint = (
            " (the grpcio client cannot set the connection window separately)"
            if key in H2_KEYS
            else ""
        )
        raise UsageError(
            f"{key!r} is not a grpcio channel argument (they look like grpc.http2.bdp_probe; "
            f"kit keys: {', '.join(GRPCIO_KIT_KEYS)}){hint}"
        )
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise UsageError(f"option {key}: {value!r} must be an integer or a string")
    if isinstance(value, int):
        return key, value
    return parse_option(f"{key}={value}")


def _window(value: Any, option: str) -> int | None:
    return None if value is None else parse_window_bytes(str(value), option=option)


def _int(value: Any, option: str) -> int:
    try:
        if isinstance(value, bool):
            raise ValueError
        return int(str(value), 10)
    except ValueError:
        raise UsageError(f"{option}: {value!r} is not a whole number") from None


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
        if self.workload.kind not in COMPARE_WORKLOADS:
            raise UsageError(
                f"--workload: {self.workload.kind!r} is not one of {', '.join(COMPARE_WORKLOADS)}"
            )
        names = [c.name for c in self.candidates]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise UsageError(
                f"candidate {repeated[0]!r} given twice; name one of them (TOML name = ...)"
            )
        if BASELINE_KEY in names:
            raise UsageError(f"candidate name {BASELINE_KEY!r} is reserved for the baseline")
        if not 1 <= self.rounds <= 1000:
            raise UsageError(f"--rounds: {self.rounds} is outside 1..1000")

    def trial(self, candidate: Candidate) -> Trial:
        return Trial(
            link=self.link, client=candidate.client, workload=self.workload, label=candidate.name
        )

    def cells(self) -> tuple[Cell[Trial], ...]:
        baseline = Cell(BASELINE_KEY, self.trial(self.baseline))
        return (baseline, *(Cell(c.name, self.trial(c)) for c in self.candidates))

    @property
    def campaign_name(self) -> str:
        """Stable for the same cells, whatever the rounds and seed: --resume may add rounds."""
        cells = [[c.key, c.payload.to_dict()] for c in self.cells()]
        digest = hashlib.sha256(json.dumps(cells, sort_keys=True).encode()).hexdigest()[:10]
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", self.title).strip("-") or "compare"
        return f"{slug}-{digest}"

    def campaign(self) -> CampaignSpec:
        return CampaignSpec(self.campaign_name, self.cells(), BASELINE_KEY, self.rounds, self.seed)

    def meta(self) -> CompareMeta:
        return CompareMeta(
            title=self.title,
            baseline_key=BASELINE_KEY,
            keys=tuple(c.key for c in self.cells()),
            specs={BASELINE_KEY: self.baseline.spec, **{c.name: c.spec for c in self.candidates}},
            metric="latency" if self.workload.kind == "unary" else "throughput",
            rounds=self.rounds,
            setup=describe_setup(self.link, self.workload),
        )


# --- running ------------------------------------------------------------------------------


def run_plan(
    plan: ComparePlan,
    records_path: Path,
    *,
    resume: bool = False,
    progress: TextIO | None = sys.stderr,
) -> CompareReport:
    """Run what is missing of the plan's campaign; report it.

    The Topology warms its server and delay line with one unrecorded run first (the first
    run through fresh ones measured 29.7 and 33.3 MiB/s against a 42-47 MiB/s median).
    """
    measurements = run_campaign(plan.campaign(), records_path, resume=resume, progress=progress)
    return build_report(plan.meta(), measurements)


def describe_setup(link: Link, workload: Workload) -> str:
    """One line: the link and the workload, for the report's heading."""
    if link.delay_up_ms == link.delay_down_ms:
        path = f"RTT {link.rtt_ms:g} ms"
    else:
        path = f"RTT {link.rtt_ms:g} ms (up {link.delay_up_ms:g} + down {link.delay_down_ms:g})"
    if workload.kind == "unary":
        return f"{path}; unary calls x{workload.calls}"
    timed = f"{workload.timed_duration_s(link.rtt_ms):g} s timed"
    size = (
        f"{workload.message_bytes // 1024} KiB"
        if workload.message_bytes % 1024 == 0
        else f"{workload.message_bytes} B"
    )
    return f"{path}; download, {workload.streams} stream(s), {size} messages, {timed}"


# --- settings: CLI flags over a plan file over defaults ----------------------------------


@dataclass(frozen=True)
class PlanFile:
    """What a TOML plan file holds: settings, an optional baseline, candidates."""

    settings: Mapping[str, Any] = field(default_factory=dict)
    baseline: Candidate | None = None
    candidates: tuple[Candidate, ...] = ()


def load_plan_file(path: Path) -> PlanFile:
    """Read a TOML plan (see examples/compare.toml); every mistake is a one-line UsageError."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the same parser, packaged for Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--file: {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--file: cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"--file: {path} is not valid TOML: {exc}") from None
    return plan_file_from_dict(data, str(path))


def plan_file_from_dict(data: Mapping[str, Any], where: str = "plan") -> PlanFile:
    data = dict(data)
    baseline_raw = data.pop("baseline", None)
    candidates_raw = data.pop("candidate", [])
    unknown = sorted(set(data) - set(SETTING_KEYS))
    if unknown:
        raise UsageError(
            f"{where}: unknown setting {', '.join(unknown)} "
            f"(use {', '.join(SETTING_KEYS)}, baseline, [[candidate]])"
        )
    if not isinstance(candidates_raw, list):
        raise UsageError(f"{where}: 'candidate' must be an array of tables ([[candidate]])")
    baseline = None if baseline_raw is None else _file_candidate(baseline_raw, f"{where}: baseline")
    candidates = tuple(
        _file_candidate(c, f"{where}: candidate {i + 1}") for i, c in enumerate(candidates_raw)
    )
    return PlanFile(settings=data, baseline=baseline, candidates=candidates)


def _file_candidate(raw: Any, where: str) -> Candidate:
    """A string spec, or a table: name + spec, or name + client + fields (+ options table)."""
    if isinstance(raw, str):
        return parse_candidate(raw)
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: must be a spec string or a table")
    table = dict(raw)
    name = table.pop("name", None)
    if name is not None and not isinstance(name, str):
        raise UsageError(f"{where}: name must be a string")
    if "spec" in table:
        if set(table) != {"spec"}:
            raise UsageError(f'{where}: give either spec = "..." or client + fields, not both')
        return parse_candidate(str(table["spec"]), name)
    kind = str(table.pop("client", ""))
    if kind not in CLIENT_KINDS:
        raise UsageError(f"{where}: client {kind!r} is not one of {', '.join(CLIENT_KINDS)}")
    options = table.pop("options", {})
    if not isinstance(options, dict):
        raise UsageError(f"{where}: options must be a table of channel arguments")
    items = [*table.items(), *options.items()]
    spec = kind + (":" + ",".join(f"{k}={v}" for k, v in items) if items else "")
    return Candidate(name or spec, build_client(kind, items, spec), spec)


def plan_from_settings(
    settings: Mapping[str, Any],
    baseline: Candidate,
    candidates: Sequence[Candidate],
    title: str = "compare",
) -> ComparePlan:
    """Settings (file values overridden by CLI flags; None = not given) -> ComparePlan."""
    s = {k: v for k, v in settings.items() if v is not None}
    return ComparePlan(
        link=link_from(str(s.get("rtt", DEFAULT_RTT)), s.get("delay-up"), s.get("delay-down")),
        workload=workload_from(s),
        baseline=baseline,
        candidates=tuple(candidates),
        rounds=_int(s.get("rounds", DEFAULT_ROUNDS), "--rounds"),
        seed=_int(s.get("seed", 1), "--seed"),
        title=title,
    )


def link_from(rtt: str, delay_up: Any = None, delay_down: Any = None) -> Link:
    """--rtt splits evenly; --delay-up / --delay-down override one direction each."""
    half = parse_duration_ms(rtt, option="--rtt") / 2
    up = half if delay_up is None else parse_duration_ms(str(delay_up), option="--delay-up")
    down = half if delay_down is None else parse_duration_ms(str(delay_down), option="--delay-down")
    return Link(delay_up_ms=up, delay_down_ms=down)


def workload_from(s: Mapping[str, Any]) -> Workload:
    duration = s.get("duration")
    return Workload(
        kind=str(s.get("workload", "download")),  # type: ignore[arg-type]
        streams=_int(s.get("streams", 1), "--streams"),
        message_bytes=parse_size_bytes(
            str(s.get("message-size", "256KiB")), option="--message-size"
        ),
        duration_s=None
        if duration is None
        else parse_duration_ms(str(duration), option="--duration") / 1000,
        calls=_int(s.get("calls", 200), "--calls"),
        timeout_s=parse_duration_ms(str(s.get("timeout", "60s")), option="--timeout") / 1000,
    )
