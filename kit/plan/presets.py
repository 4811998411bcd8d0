"""Ready-made comparisons: the window matrix and the knee sweep.

**Defaults** of the matrix are a typical HTTP/2 client's receive windows (Node's undici
client ships them; the window-tuning study this matrix reproduces started from them): a 256 KiB stream window and a 512 KiB connection window, on
our h2 client (static windows, credit returned immediately). Our h2 client has no defaults
of its own worth comparing against (its dynamic mode is a grpc-go-style estimator); these
are the small windows a real client ships with. "Raised" is the reference's fix: a 4 MiB
stream window and a 16 MiB connection window.

Per number of concurrent downloads (1, 4, 32) the matrix is one comparison whose baseline
(and duplicate control) is the defaults, with candidates: stream window raised alone,
connection window raised alone, both raised, and - for more than one download - the same
downloads spread over N connections, each with its own small connection window.

The knee sweep doubles a window from ``min`` to ``max``: for 1 stream the stream window
(connection window = stream window, so it never binds first), for N streams the
connection window (each stream window = the connection window, so only the shared one
binds). Its control is the largest window, where the knee's 90 % line is drawn.
"""

from __future__ import annotations

from dataclasses import replace

from kit.errors import UsageError, named
from kit.plan.builder import (
    Candidate,
    h2_candidate,
    link_from,
    parse_candidate,
    whole_number,
    workload_from,
)
from kit.plan.compare import ComparePlan
from kit.plan.options import LinkOptions, PlanOptions
from kit.plan.programs import CLIENT_KINDS
from kit.plan.trial import Link, Workload
from kit.plan.units import KIB, MIB, format_bytes, parse_duration_ms, size_spec

DEFAULT_STREAM_WINDOW = 256 * KIB  # undici's default stream window
DEFAULT_CONN_WINDOW = 512 * KIB  # undici's default connection window
RAISED_STREAM_WINDOW = 4 * MIB
RAISED_CONN_WINDOW = 16 * MIB
MATRIX_DOWNLOADS = (1, 4, 32)
MATRIX_RTT = "10ms"
MATRIX_ROUNDS = 5
MAX_SPREAD_CONNECTIONS = 8
KNEE_RTT = "20ms"
KNEE_STREAMS = 8
KNEE_MIN_WINDOW = 64 * KIB
KNEE_MAX_WINDOW = 32 * MIB
KNEE_ROUNDS = 3
KNEE_TITLE_PREFIX = "knee-"  # every sweep's title (and so its campaign's name) starts so
PRESETS = ("windows",)

DEFAULTS = "defaults"
STREAM_ONLY = "stream raised"
CONN_ONLY = "conn raised"
BOTH = "both raised"


def spread_connections(downloads: int) -> int:
    """How many connections the spread cell uses: one per download, at most 8 (as the study)."""
    return min(downloads, MAX_SPREAD_CONNECTIONS)


def conns_key(downloads: int) -> str:
    return f"defaults x{spread_connections(downloads)} conns"


def matrix_group(downloads: int, base: ComparePlan) -> ComparePlan:
    """One comparison of the matrix: ``downloads`` concurrent downloads."""
    candidates = [
        h2_candidate(STREAM_ONLY, RAISED_STREAM_WINDOW, DEFAULT_CONN_WINDOW),
        h2_candidate(CONN_ONLY, DEFAULT_STREAM_WINDOW, RAISED_CONN_WINDOW),
        h2_candidate(BOTH, RAISED_STREAM_WINDOW, RAISED_CONN_WINDOW),
    ]
    if downloads > 1:
        n = spread_connections(downloads)
        candidates.append(
            h2_candidate(conns_key(downloads), DEFAULT_STREAM_WINDOW, DEFAULT_CONN_WINDOW, n)
        )
    return replace(
        base,
        workload=replace(base.workload, kind="download", streams=downloads),
        baseline=h2_candidate(DEFAULTS, DEFAULT_STREAM_WINDOW, DEFAULT_CONN_WINDOW),
        candidates=tuple(candidates),
        title=f"windows-{downloads}dl",
    )


def window_matrix(
    rtt: str = MATRIX_RTT,
    rounds: int = MATRIX_ROUNDS,
    seed: int = 1,
    workload: Workload | None = None,
    downloads: tuple[int, ...] = MATRIX_DOWNLOADS,
) -> tuple[ComparePlan, ...]:
    """The window matrix as one comparison per download count."""
    placeholder = h2_candidate(DEFAULTS, DEFAULT_STREAM_WINDOW, DEFAULT_CONN_WINDOW)
    base = ComparePlan(
        link=link_from(LinkOptions(rtt=rtt)),
        workload=workload or Workload(),
        baseline=placeholder,
        candidates=(placeholder,),
        rounds=rounds,
        seed=seed,
    )
    return tuple(matrix_group(n, base) for n in downloads)


def preset_plans(
    name: str,
    rtt: str = MATRIX_RTT,
    rounds: int = MATRIX_ROUNDS,
    seed: int = 1,
    workload: Workload | None = None,
) -> tuple[ComparePlan, ...]:
    if name != "windows":
        raise UsageError(f"--preset: {name!r} is not one of {', '.join(PRESETS)}")
    return window_matrix(rtt=rtt, rounds=rounds, seed=seed, workload=workload)


def _rtt_ms(settings: PlanOptions, default: str) -> float:
    return parse_duration_ms(str(settings.rtt or default), option=settings.name("rtt"))


def presets_from(name: str, settings: PlanOptions) -> tuple[ComparePlan, ...]:
    """``kit compare --preset``: its RTT, rounds, seed and workload from the options given."""
    workload = workload_from(settings, _rtt_ms(settings, MATRIX_RTT))
    rounds = MATRIX_ROUNDS if settings.rounds is None else settings.rounds
    seed = 1 if settings.seed is None else settings.seed
    with named(settings.names()):
        return preset_plans(
            name,
            rtt=str(settings.rtt or MATRIX_RTT),
            rounds=whole_number(rounds, settings.name("rounds")),
            seed=whole_number(seed, settings.name("seed")),
            workload=workload,
        )


# --- the knee sweep -----------------------------------------------------------------------


def window_ladder(min_bytes: int, max_bytes: int) -> tuple[int, ...]:
    """min, 2 x min, ... up to max (max itself always included)."""
    if not 1 <= min_bytes <= max_bytes:
        raise UsageError(
            f"knee: --min-window {min_bytes} must be >= 1 and <= --max-window {max_bytes}"
        )
    ladder, window = [], min_bytes
    while window < max_bytes:
        ladder.append(window)
        window *= 2
    ladder.append(max_bytes)
    if len(ladder) > 16:
        raise UsageError(
            f"knee: {len(ladder)} windows from {format_bytes(min_bytes)} "
            f"to {format_bytes(max_bytes)}; at most 16"
        )
    return tuple(ladder)


def knee_key(window_bytes: int) -> str:
    return size_spec(window_bytes)


def knee_sweep(
    streams: int, ladder: tuple[int, ...], base: ComparePlan, client: str = "h2"
) -> ComparePlan:
    """One sweep: the largest window is the baseline/control, the others candidates. The h2
    client's connection window is the stream window (the sweep finds the one window both
    share); another client's is its own rule for a static window (its README)."""

    def cand(w: int) -> Candidate:
        if client == "h2":
            return h2_candidate(knee_key(w), w, w)
        return parse_candidate(f"{client}:window={size_spec(w)}", knee_key(w))

    largest, *others = sorted(ladder, reverse=True)
    return replace(
        base,
        workload=replace(base.workload, kind="download", streams=streams),
        baseline=cand(largest),
        candidates=tuple(cand(w) for w in sorted(others)),
        title=f"{KNEE_TITLE_PREFIX}{'' if client == 'h2' else client + '-'}{streams}stream"
        + ("s" if streams > 1 else ""),
    )


def knee_plans(
    rtt: str = KNEE_RTT,
    streams: int = KNEE_STREAMS,
    min_window: int = KNEE_MIN_WINDOW,
    max_window: int = KNEE_MAX_WINDOW,
    rounds: int = KNEE_ROUNDS,
    seed: int = 1,
    workload: Workload | None = None,
    client: str = "h2",
    link: Link | None = None,
) -> tuple[ComparePlan, ...]:
    """The 1-stream sweep and, when ``streams`` > 1, the N-stream sweep, of ``client``'s
    static windows."""
    ladder = window_ladder(min_window, max_window)
    if len(ladder) < 2:
        raise UsageError("knee: the sweep needs at least two windows (--max-window > --min-window)")
    if client not in CLIENT_KINDS:
        raise UsageError(f"--client: {client!r} is not one of {', '.join(CLIENT_KINDS)}")
    placeholder = h2_candidate("x", ladder[0], ladder[0])
    base = ComparePlan(
        link or link_from(LinkOptions(rtt=rtt)),
        workload or Workload(),
        placeholder,
        (placeholder,),
        rounds,
        seed,
    )
    counts = (1, streams) if streams > 1 else (1,)
    return tuple(knee_sweep(n, ladder, base, client) for n in counts)


def knee_from(
    settings: PlanOptions, streams: int, min_window: int, max_window: int, client: str = "h2"
) -> tuple[ComparePlan, ...]:
    """``kit knee``: the sweeps at the RTT, rounds, seed and workload of the options given."""
    workload = workload_from(settings, _rtt_ms(settings, KNEE_RTT))
    rounds = KNEE_ROUNDS if settings.rounds is None else settings.rounds
    seed = 1 if settings.seed is None else settings.seed
    with named(settings.names()):
        return knee_plans(
            rtt=str(settings.rtt or KNEE_RTT),
            streams=streams,
            min_window=min_window,
            max_window=max_window,
            rounds=whole_number(rounds, settings.name("rounds")),
            seed=whole_number(seed, settings.name("seed")),
            workload=workload,
            client=client,
            link=link_from(settings, KNEE_RTT),
        )
