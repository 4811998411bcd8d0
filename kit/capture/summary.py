"""Pure: the proxy's frame-tap records in, one per-trial frame summary out.

Tap file (JSON lines, written by ``kit.delayline.relay``; ``up`` = client->server):

    {"kind": "conn", "conn": int, "opened_ns": int, "closed_ns": int,
     "up": <FrameTap summary>, "down": <FrameTap summary>}
        one line per connection, when it closes (or at proxy shutdown if still open);
        the FrameTap summary shape is documented in kit.capture.frametap.
    {"kind": "proxy", "connections": int, "bytes_up": int, "bytes_down": int,
     "peak_buffered_bytes": int, "errors": [str, ...]}
        one line at proxy shutdown.

``summarize(conn_records, delay_down_ms)`` returns (all keys always present):

    {"connections": int,
     "decodable": bool,                      # every direction of every connection decoded
     "undecodable": [{"conn": int, "direction": "up"|"down", "reason": str}, ...],
     "client_settings": {name: value},       # first non-ack SETTINGS on "up" (earliest conn)
     "client_settings_changes": int,         # later non-ack SETTINGS on "up", all conns
     "conn_window_updates": {"count": int, "total": int, "first": [inc, ...]},  # "up", first 10
     "stream_window_updates": {"count": int, "total": int},                   # "up"
     "pings_sent": int,                      # non-ack PINGs on "up"
     "rtt_probe_pings": int,                 # of those, the kit's own RTT probes (seen ones)
     "ping_rtt_ms": {"proxy": {"count", "median", "p90"},    # t(ack on down) - t(ping on up)
                     "client": {"count", "median", "p90"}},  # proxy + delay_down_ms
     "data_down": {"frames": int, "bytes": int, "max_frame": int},
     "data_up": {"frames": int, "bytes": int, "max_frame": int},
     "bytes_up": int, "bytes_down": int}

Medians and p90 are None when there are no matched pings. Several connections (a client
with N channels) are summed; first-N lists are merged in time order.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kit.errors import RecordsError

FIRST_CONN_WINDOW_UPDATES = 10
# Opaque data prefix of the PINGs our h2 client sends only to measure RTT (not for BDP), so
# reports can tell them from a stack's own PINGs.
RTT_PROBE_PING_TAG = b"kr"


def conn_record(
    conn: int, opened_ns: int, closed_ns: int, up: dict[str, Any], down: dict[str, Any]
) -> dict[str, Any]:
    return {
        "kind": "conn",
        "conn": conn,
        "opened_ns": opened_ns,
        "closed_ns": closed_ns,
        "up": up,
        "down": down,
    }


def proxy_record(
    connections: int,
    bytes_up: int,
    bytes_down: int,
    peak_buffered_bytes: int,
    errors: Sequence[str],
) -> dict[str, Any]:
    return {
        "kind": "proxy",
        "connections": connections,
        "bytes_up": bytes_up,
        "bytes_down": bytes_down,
        "peak_buffered_bytes": peak_buffered_bytes,
        "errors": list(errors),
    }


def parse_tap_lines(text: str) -> list[dict[str, Any]]:
    """Records from tap-file text; a torn (unparsable) last line is dropped, as a crash leaves."""
    lines = [line for line in text.split("\n") if line.strip()]
    records: list[dict[str, Any]] = []
    for index, line in enumerate(lines):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            if index == len(lines) - 1:
                break
            raise RecordsError(f"tap file line {index + 1}: not JSON ({exc.msg})") from exc
        if isinstance(record, dict):
            records.append(record)
    return records


def read_tap(path: str | Path) -> list[dict[str, Any]]:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise RecordsError(f"tap file {path}: {exc.strerror or exc}") from exc
    return parse_tap_lines(text)


def conn_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        (r for r in records if r.get("kind") == "conn"),
        key=lambda r: (r.get("opened_ns", 0), r.get("conn", 0)),
    )


def summarize(records: Iterable[dict[str, Any]], delay_down_ms: float) -> dict[str, Any]:
    """The report's frame summary over every connection record (other kinds are ignored)."""
    conns = conn_records(records)
    ups = [c["up"] for c in conns]
    proxy_rtts = [rtt for c in conns for rtt in ping_rtts_ms(c["up"], c["down"])]
    return {
        "connections": len(conns),
        "decodable": all(c[d].get("decodable", False) for c in conns for d in ("up", "down")),
        "undecodable": _undecodable(conns),
        "client_settings": _first_client_settings(ups),
        "client_settings_changes": _settings_changes(ups),
        "conn_window_updates": _conn_window_updates(ups),
        "stream_window_updates": {
            "count": sum(u["stream_window_updates"]["count"] for u in ups),
            "total": sum(u["stream_window_updates"]["total"] for u in ups),
        },
        "pings_sent": sum(u["pings"]["count"] for u in ups),
        "rtt_probe_pings": _rtt_probe_pings(ups),
        "ping_rtt_ms": {
            "proxy": distribution(proxy_rtts),
            "client": distribution([rtt + delay_down_ms for rtt in proxy_rtts]),
        },
        "data_down": _data_totals(c["down"] for c in conns),
        "data_up": _data_totals(ups),
        "bytes_up": sum(u["bytes"] for u in ups),
        "bytes_down": sum(c["down"]["bytes"] for c in conns),
    }


def ping_rtts_ms(up: dict[str, Any], down: dict[str, Any]) -> list[float]:
    """Match each client PING (up) with the first later ACK (down) carrying the same opaque."""
    waiting: dict[str, deque[int]] = defaultdict(deque)
    for t_ns, is_ack, opaque in up["pings"]["events"]:
        if not is_ack:
            waiting[opaque].append(t_ns)
    rtts: list[float] = []
    for t_ns, is_ack, opaque in sorted(down["pings"]["events"]):
        pending = waiting.get(opaque)
        if is_ack and pending and pending[0] <= t_ns:
            rtts.append((t_ns - pending.popleft()) / 1e6)
    return rtts


def distribution(values_ms: Sequence[float]) -> dict[str, Any]:
    if not values_ms:
        return {"count": 0, "median": None, "p90": None}
    ordered = sorted(values_ms)
    return {
        "count": len(ordered),
        "median": round(percentile(ordered, 50), 3),
        "p90": round(percentile(ordered, 90), 3),
    }


def percentile(ordered: Sequence[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default) on sorted values."""
    pos = (len(ordered) - 1) * pct / 100.0
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def _rtt_probe_pings(ups: list[dict[str, Any]]) -> int:
    tag = RTT_PROBE_PING_TAG.hex()
    return sum(
        1
        for u in ups
        for _, is_ack, opaque in u["pings"]["events"]
        if not is_ack and str(opaque).startswith(tag)
    )


def _undecodable(conns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"conn": c.get("conn"), "direction": d, "reason": c[d].get("undecodable_reason", "")}
        for c in conns
        for d in ("up", "down")
        if not c[d].get("decodable", False)
    ]


def _client_settings_sent(up: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in up["settings"] if not s["ack"]]


def _first_client_settings(ups: list[dict[str, Any]]) -> dict[str, int]:
    for up in ups:
        sent = _client_settings_sent(up)
        if sent:
            return dict(sent[0]["values"])
    return {}


def _settings_changes(ups: list[dict[str, Any]]) -> int:
    return sum(max(0, len(_client_settings_sent(up)) - 1) for up in ups)


def _conn_window_updates(ups: list[dict[str, Any]]) -> dict[str, Any]:
    timed = sorted(
        (t_ns, inc)
        for up in ups
        for t_ns, inc in zip(
            up["conn_window_updates"]["first_t_ns"],
            up["conn_window_updates"]["first"],
            strict=False,
        )
    )
    return {
        "count": sum(u["conn_window_updates"]["count"] for u in ups),
        "total": sum(u["conn_window_updates"]["total"] for u in ups),
        "first": [inc for _t, inc in timed[:FIRST_CONN_WINDOW_UPDATES]],
    }


def _data_totals(sides: Iterable[dict[str, Any]]) -> dict[str, int]:
    out = {"frames": 0, "bytes": 0, "max_frame": 0}
    for side in sides:
        out["frames"] += side["data"]["frames"]
        out["bytes"] += side["data"]["bytes"]
        out["max_frame"] = max(out["max_frame"], side["data"]["max_frame"])
    return out
