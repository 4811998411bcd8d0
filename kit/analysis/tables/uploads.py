"""Pure: the figures and checks of table 5 (uploads), from a ``kit tables`` run's records.

The server's receive window governs an upload: per cell, the throughput against
server window / RTT, the window that throughput implies (throughput x RTT, which shows
C-core's per-message extra credit), what the server advertised on the wire, and HAProxy's
figures for the same shape. The second part's two verdicts: the client's own receive
window (64 KiB vs 16 MiB) against the server's (64 KiB vs 4 MiB), each beyond noise or not.
Checks: the server's window governs (>= 8x at 103 ms), the client's does not.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.analysis.cells import CampaignView, CellView, median_of, median_ratio, throughput
from kit.analysis.stats import Verdict, verdict
from kit.analysis.tables.checks import (
    Bar,
    by_round,
    ratio_interval_of,
    ratio_spread_pct,
    settled,
    settled_ratio,
)
from kit.plan.tables.uploads import (
    CLIENT_WINDOW_KEY,
    HAPROXY_AUTO_BYTES,
    HAPROXY_RTT_MS,
    SMALL_SERVER_KEY,
    UPLOAD_CONTROL,
    UPLOAD_PREFIX,
)
from kit.plan.units import MIB
from kit.results.records import FrameSummary

HAPROXY_SOURCE = (
    "HAProxy 3.1's HTTP/2 receive-window work (its commit messages): one upload stream at "
    "103 ms over real TCP"
)
# Server receive window (bytes; our nearest cell) -> HAProxy's Mbit/s at 103 ms.
HAPROXY_MBIT_S: dict[int, tuple[str, float]] = {
    64 * 1024: ("64 KiB window", 5.1),
    HAPROXY_AUTO_BYTES: ("automatic buffers, ~1.34 MiB", 121.0),
    4 * MIB: ("4 MiB (tune.h2.fe.rxbuf 4m)", 257.0),
}
BITS_PER_MIB = 8 * MIB / 1e6  # MiB/s -> Mbit/s (decimal megabits, as network rates are)
INITIAL_WINDOW_SIZE = "INITIAL_WINDOW_SIZE"
# Uploads at 103 ms, h2 client: server window 4 MiB vs 64 KiB. window/RTT says 64x; C-core's
# extra credit of up to one 256 KiB message lifts "64 KiB" to ~256 KiB, so ~16x is expected
# (HAProxy, real TCP: 50x). The bar asks for half of that.
UPLOAD_SERVER_BAR = 8.0


def upload_views(views: dict[str, CampaignView]) -> list[CampaignView]:
    """The uploads campaigns (one per RTT), by RTT."""
    found = [v for n, v in views.items() if n.startswith(UPLOAD_PREFIX)]
    return sorted(found, key=lambda v: v.cells[0].trial.link.rtt_ms)


def mbit_s(mib_s: float | None) -> float | None:
    return None if mib_s is None else mib_s * BITS_PER_MIB


def implied_window_bytes(cell: CellView) -> float | None:
    """Median throughput x RTT: the window the upload behaved as if it had."""
    median = median_of(cell)
    rtt_ms = cell.trial.link.rtt_ms
    return None if median is None or rtt_ms <= 0 else median * MIB * rtt_ms / 1000.0


def haproxy_reference(cell: CellView) -> tuple[str, float] | None:
    trial = cell.trial
    if trial.link.rtt_ms != HAPROXY_RTT_MS or trial.server.window_bytes is None:
        return None
    return HAPROXY_MBIT_S.get(trial.server.window_bytes)


@dataclass(frozen=True)
class Advertised:
    """The server's windows on the wire: its first INITIAL_WINDOW_SIZE and later ones, the
    credit it granted on the connection, and the largest connection WINDOW_UPDATE."""

    initial_bytes: int | None
    grown_to: int | None
    conn_credit_bytes: int
    largest_conn_update: int


def advertised(frames: FrameSummary) -> Advertised:
    growth = [s.window_bytes for s in frames.server.window_growth]
    updates = frames.server.conn_window_updates
    return Advertised(
        initial_bytes=frames.server.settings.get(INITIAL_WINDOW_SIZE),
        grown_to=growth[-1] if len(growth) > 1 else None,
        conn_credit_bytes=updates.total,
        largest_conn_update=max(updates.first, default=0),
    )


@dataclass(frozen=True)
class WindowEffect:
    """One of the second part's comparisons: ``what`` changed from ``base`` to ``cand``."""

    what: str
    base: str
    cand: str
    result: Verdict | None  # None: not measured (a cell or the noise floor is missing)


def window_effects(view: CampaignView) -> list[WindowEffect]:
    """Client window 64 KiB -> 16 MiB (server 4 MiB), and server 64 KiB -> 4 MiB (client
    64 KiB), on the h2 client, judged against this campaign's noise floor."""
    pairs = (
        (
            "client receive window 64 KiB -> 16 MiB (server 4 MiB)",
            UPLOAD_CONTROL,
            CLIENT_WINDOW_KEY,
        ),
        ("server receive window 64 KiB -> 4 MiB (client 64 KiB)", SMALL_SERVER_KEY, UPLOAD_CONTROL),
    )
    return [WindowEffect(what, b, c, _verdict(view, b, c)) for what, b, c in pairs]


def _verdict(view: CampaignView, base_key: str, cand_key: str) -> Verdict | None:
    floor = view.floor(throughput)
    base, cand = view.cell(base_key), view.cell(cand_key)
    if floor is None or base is None or cand is None:
        return None
    base_values, cand_values = by_round(base, throughput), by_round(cand, throughput)
    if not base_values or not cand_values or median_of(base) == 0:
        return None
    seed = f"uploads:{view.name}:{cand_key}"
    return verdict(base_values, cand_values, floor.floor_pct, higher_is_better=True, seed=seed)


# --- checks ------------------------------------------------------------------------------------


def upload_bars(views: dict[str, CampaignView]) -> list[Bar]:
    """The server's window governs uploads (>= 8x from 64 KiB to 4 MiB at 103 ms); the
    client's own receive window does not (64 KiB vs 16 MiB within noise)."""
    at103 = next(
        (v for v in upload_views(views) if v.cells[0].trial.link.rtt_ms == HAPROXY_RTT_MS), None
    )
    if at103 is None:
        return []
    big, small = at103.cell(UPLOAD_CONTROL), at103.cell(SMALL_SERVER_KEY)
    ratio = median_ratio(big, small)
    bar = Bar(
        f"uploads at 103 ms: server window 4 MiB >= {UPLOAD_SERVER_BAR:g}x 64 KiB (h2)",
        None if ratio is None else ratio >= UPLOAD_SERVER_BAR,
        "not measured" if ratio is None else f"{ratio:.1f}x",
    )
    floor103 = at103.floor(throughput)
    if ratio is not None and floor103 is not None:
        spread = ratio_spread_pct(floor103.floor_pct, floor103.floor_pct)
        ci = ratio_interval_of(big, small, throughput, "uploads:server-window")
        bar = settled_ratio(bar, ratio, UPLOAD_SERVER_BAR, spread, floor103.rounds, ci)
    bars = [bar]
    client, server = window_effects(at103)
    name = "uploads: the client's receive window is within noise, the server's is not"
    if client.result is None or server.result is None:
        bars.append(Bar(name, None, "not measured (a cell or the noise floor is missing)"))
    else:
        shown = not client.result.significant and server.result.significant
        # a client change whose interval still reaches beyond the floor is not decided
        holds = None if shown and not client.result.decided else shown
        detail = f"client: {client.result.describe()}; server: {server.result.describe()}"
        floor = at103.floor(throughput)
        margin = abs(client.result.change_pct) - client.result.noise_floor_pct
        bar = Bar(name, holds, detail, undecided=holds is None)
        if floor is not None and server.result.significant:
            bar = settled(bar, margin, floor.floor_pct, floor.rounds)
        bars.append(bar)
    return bars
