"""Pure: table 11, who hangs up on whom, from each pair's records.

A pair hung up when either side sent a GOAWAY with an error code (a server's
``ENHANCE_YOUR_CALM "too_many_pings"`` is the usual one) or reset a stream with an error
before the download's end. What follows the end is the end: a client cancels its streams
when the timed phase is over (CANCEL), and a peer still sending on them then hears
STREAM_CLOSED; neither is a hang-up. It failed when the client could not finish its
download. The first failing second is counted
from the first connection's open (the delay line's tap saw both).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kit.analysis.cells import CampaignView
from kit.plan.tables.pairs import PAIRS_CAMPAIGN, pair_of
from kit.results.records import GoawaySeen, Measurement, ResetSeen

# RFC 9113, section 7.
ERROR_CODES: dict[int, str] = {
    0x0: "NO_ERROR",
    0x1: "PROTOCOL_ERROR",
    0x2: "INTERNAL_ERROR",
    0x3: "FLOW_CONTROL_ERROR",
    0x4: "SETTINGS_TIMEOUT",
    0x5: "STREAM_CLOSED",
    0x6: "FRAME_SIZE_ERROR",
    0x7: "REFUSED_STREAM",
    0x8: "CANCEL",
    0x9: "COMPRESSION_ERROR",
    0xA: "CONNECT_ERROR",
    0xB: "ENHANCE_YOUR_CALM",
    0xC: "INADEQUATE_SECURITY",
    0xD: "HTTP_1_1_REQUIRED",
}
CANCEL = 0x8
NO_ERROR = 0x0


def code_name(code: int) -> str:
    return ERROR_CODES.get(code, f"0x{code:x}")


@dataclass(frozen=True)
class HangUp:
    """The first failing frame of a pair: who sent it, what, its code, when (s after open)."""

    sender: str  # "client" | "server"
    frame: str  # "GOAWAY" | "RST_STREAM"
    code: str
    debug: str
    at_s: float | None


@dataclass(frozen=True)
class PairOutcome:
    """One pair's run: did the download finish, who hung up first and how, the PINGs each
    way (the client's and the server's, acks not counted), and what ran."""

    setting: str
    client: str
    server: str
    completed: bool
    error: str
    hang_up: HangUp | None
    resets: int
    client_pings: int
    server_pings: int
    runs: int = 1
    client_stack: str = ""
    server_stack: str = ""

    @property
    def ok(self) -> bool:
        return self.completed and self.hang_up is None


def outcome(m: Measurement) -> PairOutcome:
    setting, client, server = pair_of(m.trial)
    frames = m.frames
    hang_up = None
    resets = client_pings = server_pings = 0
    if frames is not None:
        opened = frames.opened_ns
        end = m.result.t_end_ns if m.result is not None else None
        found = [
            *(_goaway(g, opened) for g in frames.goaways if g.error_code != NO_ERROR),
            *(_reset(r, opened) for r in frames.resets if _failing_reset(r, end)),
        ]
        if found:
            hang_up = min(found, key=lambda pair: pair[0])[1]
        resets = sum(1 for _, h in found if h.frame == "RST_STREAM")
        client_pings, server_pings = frames.client.pings_sent, frames.server.pings_sent
    return PairOutcome(
        setting=setting,
        client=client,
        server=server,
        completed=m.status == "ok",
        error=m.error,
        hang_up=hang_up,
        resets=resets,
        client_pings=client_pings,
        server_pings=server_pings,
        client_stack=m.meta.client_stack,
        server_stack=m.meta.server_stack,
    )


def _failing_reset(r: ResetSeen, end_ns: int | None) -> bool:
    """A reset with an error code before the download's end (``end_ns``; None: it never
    ended, so every one counts)."""
    return r.error_code not in (NO_ERROR, CANCEL) and (end_ns is None or r.t_ns < end_ns)


def _seconds(t_ns: int, opened_ns: int) -> float | None:
    return (t_ns - opened_ns) / 1e9 if opened_ns else None


def _goaway(g: GoawaySeen, opened_ns: int) -> tuple[int, HangUp]:
    at = _seconds(g.t_ns, opened_ns)
    return g.t_ns, HangUp(g.sender, "GOAWAY", code_name(g.error_code), g.debug, at)


def _reset(r: ResetSeen, opened_ns: int) -> tuple[int, HangUp]:
    at = _seconds(r.t_ns, opened_ns)
    return r.t_ns, HangUp(r.sender, "RST_STREAM", code_name(r.error_code), "", at)


def pair_outcomes(measurements: Iterable[Measurement]) -> list[PairOutcome]:
    """One outcome per pair (setting, client, server), in the order first seen: the worst of
    its runs (a hang-up or failure in any run is the pair's), with how many runs there were."""
    by_pair: dict[tuple[str, str, str], list[PairOutcome]] = {}
    for m in measurements:
        o = outcome(m)
        by_pair.setdefault((o.setting, o.client, o.server), []).append(o)
    return [_worst(runs) for runs in by_pair.values()]


def _worst(runs: Sequence[PairOutcome]) -> PairOutcome:
    failed = [r for r in runs if not r.completed]
    hung = [r for r in runs if r.hang_up is not None]
    worst = (failed or hung or list(runs))[0]
    return dataclasses.replace(worst, runs=len(runs))


def pairs_view(views: dict[str, CampaignView]) -> CampaignView | None:
    return views.get(PAIRS_CAMPAIGN)
