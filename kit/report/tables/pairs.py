"""Pure rendering: table 11, who hangs up on whom (each client stack against each server
stack, as shipped and with keepalive), then each hang-up in words and the ping policing
behind it."""

from __future__ import annotations

from collections.abc import Sequence

from kit.analysis.cells import CampaignView
from kit.analysis.tables.pairs import PairOutcome, pair_outcomes
from kit.plan.programs import CLIENT_KINDS, SERVER_KINDS
from kit.plan.tables.pairs import (
    DOWNLOAD_S,
    IDLE_S,
    KEEPALIVE,
    KEEPALIVE_MS,
    PING_POLICING,
    SETTINGS,
    SHIPPED,
    SLOW_READ_BITS_S,
)
from kit.plan.units import format_rate
from kit.report.format import markdown_table

INTRO = (
    "Each client stack against each server stack. A pair's connection is warmed (one Ping "
    "call), left open with no call on it for {idle:g} s, then carries a {download:g} s "
    "download on two streams, one read at {rate}. As shipped: every stack's defaults. "
    "Keepalive: the client sends a keepalive PING after {keepalive:g} s without reads, also "
    "without calls (each stack's own options; the kit's h2 client has none); the servers as "
    "shipped. A cell says ok, or who hung up first: GOAWAY or RST_STREAM, by the server (S) "
    "or the client (C), and when (s after the connection opened); failed: the download did "
    "not finish."
)
SETTING_TITLES = {SHIPPED: "As shipped", KEEPALIVE: "With keepalive (10 s, without calls too)"}


def cell_text(o: PairOutcome) -> str:
    """``ok``, ``GOAWAY S 31s``, ``RST C 2s failed``, ``failed``: at most 18 characters."""
    if o.hang_up is None:
        return "ok" if o.completed else "failed"
    h = o.hang_up
    at = "" if h.at_s is None else f" {h.at_s:.0f}s"
    frame = "GOAWAY" if h.frame == "GOAWAY" else "RST"
    who = "S" if h.sender == "server" else "C"
    return f"{frame} {who}{at}" + ("" if o.completed else " failed")


def _matrix(outcomes: Sequence[PairOutcome], setting: str) -> str | None:
    found = {(o.client, o.server): o for o in outcomes if o.setting == setting}
    if not found:
        return None
    clients = [c for c in CLIENT_KINDS if any(k[0] == c for k in found)]
    servers = [s for s in SERVER_KINDS if any(k[1] == s for k in found)]
    rows = [
        [client, *(cell_text(found[(client, s)]) if (client, s) in found else "-" for s in servers)]
        for client in clients
    ]
    return f"{SETTING_TITLES[setting]}:\n\n" + markdown_table(rows, ["client \\ server", *servers])


def hang_up_line(o: PairOutcome) -> str:
    """One pair that did not simply work, in words."""
    who = f"{o.client} client -> {o.server} server ({o.setting})"
    pings = f"PINGs client {o.client_pings}, server {o.server_pings}"
    if o.hang_up is None:
        return f"- {who}: the download failed: {o.error or 'no result'}. {pings}."
    h = o.hang_up
    debug = f' "{h.debug}"' if h.debug else ""
    at = "" if h.at_s is None else f" at {h.at_s:.1f} s"
    then = "the download then finished" if o.completed else f"the download failed: {o.error}"
    return f"- {who}: {h.frame} {h.code}{debug} from the {h.sender}{at}; {then}. {pings}."


def render_pairs(view: CampaignView) -> str:
    outcomes = pair_outcomes(m for cell in view.cells for m in cell.runs)
    intro = INTRO.format(
        idle=IDLE_S,
        download=DOWNLOAD_S,
        rate=format_rate(SLOW_READ_BITS_S),
        keepalive=KEEPALIVE_MS / 1000,
    )
    parts = ["## Table 11: stack pairs: who hangs up on whom", intro]
    parts += [m for m in (_matrix(outcomes, s) for s in SETTINGS) if m is not None]
    trouble = [o for o in outcomes if not o.ok]
    if trouble:
        parts.append("What went wrong, pair by pair:\n\n" + "\n".join(map(hang_up_line, trouble)))
    else:
        parts.append("Every pair finished without a GOAWAY or a reset.")
    servers = [
        s for s in SERVER_KINDS if s in PING_POLICING and any(o.server == s for o in outcomes)
    ]
    parts.append(
        "Each server's ping policing, as its source has it (why a pair hangs up, or never):\n\n"
        + "\n".join(f"- {s}: {PING_POLICING[s]}." for s in servers)
    )
    return "\n\n".join(parts)
