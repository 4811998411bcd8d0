"""Pure: the proxy's tap lines in, one typed per-trial ``FrameSummary`` out.

The tap file (``kit.capture.tapfile``) holds one ``TapConnection`` per relayed connection
(``up`` is client -> server). A corrupt line is skipped and counted there, never fatal; the
count travels with the summary (``FrameSummary.tap_lines_skipped``).

``summarize(conns, delay_down_ms)`` over every connection of one trial, earliest first
(sorted by ``(opened_ns, conn)``); "client" means the "up" direction, "server" "down":

- ``decodable``/``undecodable``: every direction of every connection decoded / which did not;
- ``client``, ``server``: what each endpoint sent (``SideFrames``), built alike from its
  direction: its first non-ack SETTINGS (earliest connection that sent one) and how many
  later ones, all connections; its connection-level WINDOW_UPDATEs summed, with the first
  10 increments of all connections merged in time order (and their times); its stream-level
  ones, count and total; its non-ack PINGs; the INITIAL_WINDOW_SIZE values it announced in
  successive non-ack SETTINGS of the first connection, with their times (for uploads the
  server is the receiver, and its credit paces the client);
- ``rtt_probe_pings``: of the client's recorded PINGs, the kit's own RTT probes (opaque
  data starting with ``RTT_PROBE_PING_TAG``);
- ``ping_rtt_ms.proxy``: t(ACK on "down") - t(PING on "up") at the proxy; ``.client``: that
  plus ``delay_down_ms``, what the client itself would measure (count, median, p90; the
  median and p90 are None without matched pairs);
- ``data_down``/``data_up``, ``bytes_up``/``bytes_down``: summed (max_frame: the largest);
- ``not_decoded_bytes``: bytes the proxy's decoder skipped because it fell behind (the
  summary is then incomplete: "tap incomplete");
- ``window_final_bytes``: the last INITIAL_WINDOW_SIZE the first connection's client sent
  (HTTP/2's default 65535 when it sent SETTINGS without one; None without SETTINGS);
- ``conn_window_start_bytes``: the connection window the first connection's client opened
  before any DATA reached it: 65535 + its connection WINDOW_UPDATEs seen before the tap saw
  the server's first DATA frame (None without data marks);
- ``peak_queued_bytes_down``: the largest backlog at the down bottleneck any connection saw;
  ``delivered_down``: the bytes the link delivered downstream per time bucket, summed over
  the connections (aligned on the earliest one's first release).
- ``stream_windows``: each stream of the first connection, its sender's window as each of
  the client's stream WINDOW_UPDATEs reaches the server (``delay_up_ms`` after the tap,
  default ``delay_down_ms``): INITIAL_WINDOW_SIZE then in force + the stream's increments
  - its DATA the tap saw on "down" by then (interpolated between 5 ms samples).
"""

from __future__ import annotations

import bisect
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from kit.capture.tapfile import tap_connections
from kit.quantile import percentile
from kit.results.client import RTT_PROBE_PING_TAG
from kit.results.records import (
    DataTotals,
    DeliveryTrace,
    DirectionSummary,
    FrameSummary,
    GoawaySeen,
    LinkConnection,
    PingRtt,
    PingRtts,
    ResetSeen,
    SettingsSeen,
    SideFrames,
    StreamSample,
    StreamWindowPoint,
    TapConnection,
    Undecodable,
    WindowStep,
    WindowUpdates,
)

FIRST_CONN_WINDOW_UPDATES = 10
MAX_CLOSES = 16  # GOAWAY and RST_STREAM frames kept
SENDERS = ("client", "server")  # the client sends "up", the server "down"
RTT_DIGITS = 3
INITIAL_WINDOW_SIZE = "INITIAL_WINDOW_SIZE"
DEFAULT_INITIAL_WINDOW = 65_535  # RFC 9113: the stream window until SETTINGS says otherwise
DEFAULT_WINDOW_BYTES = 65_535


# --- one trial's summary ------------------------------------------------------------------


def summarize(
    conns: Sequence[TapConnection],
    delay_down_ms: float,
    skipped_lines: int = 0,
    links: Mapping[int, LinkConnection] | None = None,
    delay_up_ms: float | None = None,
) -> FrameSummary:
    """The frame summary of one trial's connections (see the module docstring); ``links``
    are the link lines of the same proxy by connection id (missing ones count as none)."""
    ordered = tap_connections(conns)
    sides = [links[c.conn].down for c in ordered if links and c.conn in links]
    ups = [c.up for c in ordered]
    proxy_rtts = [rtt for c in ordered for rtt in ping_rtts_ms(c.up, c.down)]
    undecodable = _undecodable(ordered)
    return FrameSummary(
        connections=len(ordered),
        decodable=not undecodable,
        undecodable=undecodable,
        client=_side(ups),
        rtt_probe_pings=_rtt_probe_pings(ups),
        ping_rtt_ms=PingRtts(
            proxy=_distribution(proxy_rtts),
            client=_distribution([rtt + delay_down_ms for rtt in proxy_rtts]),
        ),
        data_down=_data_totals(c.down for c in ordered),
        data_up=_data_totals(ups),
        bytes_up=sum(u.bytes for u in ups),
        bytes_down=sum(c.down.bytes for c in ordered),
        tap_lines_skipped=skipped_lines,
        server=_side([c.down for c in ordered]),
        window_final_bytes=_window_final(ups[0]) if ups else None,
        conn_window_start_bytes=_conn_window_start(ordered[0]) if ordered else None,
        opened_ns=ordered[0].opened_ns if ordered else 0,
        goaways=_closes(ordered)[0],
        resets=_closes(ordered)[1],
        peak_queued_bytes_down=max((side.peak_queued_bytes for side in sides), default=0),
        delivered_down=merge_traces([side.delivered for side in sides]),
        not_decoded_bytes=sum(c.up.not_decoded_bytes + c.down.not_decoded_bytes for c in ordered),
        stream_windows=_stream_windows(
            ordered[0], delay_down_ms if delay_up_ms is None else delay_up_ms
        )
        if ordered
        else (),
    )


def _side(sent: Sequence[DirectionSummary]) -> SideFrames:
    """What one endpoint sent (its direction of every connection, earliest first)."""
    return SideFrames(
        settings=_first_settings(sent),
        settings_changes=sum(max(0, len(_sent_settings(d)) - 1) for d in sent),
        conn_window_updates=_conn_window_updates(sent),
        stream_window_updates=WindowUpdates(
            count=sum(d.stream_window_updates.count for d in sent),
            total=sum(d.stream_window_updates.total for d in sent),
        ),
        pings_sent=sum(d.pings for d in sent),
        window_growth=_window_growth(sent[0]) if sent else (),
    )


def _closes(
    ordered: Sequence[TapConnection],
) -> tuple[tuple[GoawaySeen, ...], tuple[ResetSeen, ...]]:
    """Every GOAWAY and RST_STREAM of both endpoints, named by sender, in time order."""
    sides = [(side, c.up if side == "client" else c.down) for c in ordered for side in SENDERS]
    goaways = [replace(g, sender=side) for side, d in sides for g in d.goaway_events]
    resets = [replace(r, sender=side) for side, d in sides for r in d.reset_events]
    return (
        tuple(sorted(goaways, key=lambda g: g.t_ns))[:MAX_CLOSES],
        tuple(sorted(resets, key=lambda r: r.t_ns))[:MAX_CLOSES],
    )


def _window_final(up: DirectionSummary) -> int | None:
    if up.initial_window_last is not None:
        return up.initial_window_last
    return DEFAULT_INITIAL_WINDOW if _sent_settings(up) else None


def _conn_window_start(conn: TapConnection) -> int | None:
    """65535 + the client's connection credit granted before the first DATA frame down."""
    if not conn.down.data_marks:
        return None
    first_data_ns = conn.down.data_marks[0][0]
    updates = conn.up.conn_window_updates
    early = [
        i for i, t in zip(updates.first, updates.first_t_ns, strict=False) if t < first_data_ns
    ]
    return DEFAULT_WINDOW_BYTES + sum(early)


def merge_traces(traces: Sequence[DeliveryTrace]) -> DeliveryTrace:
    """Delivery traces of several connections summed bucket by bucket, on one time axis."""
    used = [t for t in traces if t.bytes and t.bucket_ns > 0]
    if not used:
        return DeliveryTrace()
    bucket = used[0].bucket_ns
    origin = min(t.origin_ns for t in used)
    total: list[int] = []
    for trace in used:
        shift = (trace.origin_ns - origin) // bucket
        need = shift + len(trace.bytes)
        if need > len(total):
            total.extend([0] * (need - len(total)))
        for i, n in enumerate(trace.bytes):
            total[shift + i] += n
    return DeliveryTrace(origin, bucket, tuple(total))


def _stream_windows(conn: TapConnection, delay_up_ms: float) -> tuple[StreamWindowPoint, ...]:
    """The tap sees an update ``delay_up_ms`` before the server does; by then the server has
    sent what the tap sees on "down" up to that later time: that is the window it holds."""
    lag_ns = round(delay_up_ms * 1e6)
    initial = [(s.t_ns, s.values[INITIAL_WINDOW_SIZE]) for s in _window_growth_of(conn.up)]
    data: dict[int, list[StreamSample]] = defaultdict(list)
    for sample in sorted(conn.down.stream_samples, key=lambda d: d.t_ns):
        data[sample.stream_id].append(sample)
    times = {sid: [d.t_ns for d in samples] for sid, samples in data.items()}
    points = []
    for wu in conn.up.stream_samples:
        window = next((w for t, w in reversed(initial) if t <= wu.t_ns), DEFAULT_WINDOW_BYTES)
        at_server = wu.t_ns + lag_ns
        received = _received_at(data.get(wu.stream_id, []), times.get(wu.stream_id, []), at_server)
        points.append(StreamWindowPoint(wu.t_ns, wu.stream_id, window + wu.total - received))
    return tuple(points)


def _received_at(samples: Sequence[StreamSample], times: Sequence[int], t_ns: int) -> int:
    """DATA bytes of one stream seen by ``t_ns``: interpolated between the samples around it
    (they are taken every few ms; the last one before would under-count a busy stream)."""
    i = bisect.bisect_right(times, t_ns)
    if i == 0:
        return 0
    before = samples[i - 1]
    if i == len(samples):
        return before.total
    after = samples[i]
    span = after.t_ns - before.t_ns
    part = (t_ns - before.t_ns) / span if span > 0 else 0.0
    return before.total + round((after.total - before.total) * part)


def _window_growth_of(up: DirectionSummary) -> list[SettingsSeen]:
    return [s for s in _sent_settings(up) if INITIAL_WINDOW_SIZE in s.values]


def ping_rtts_ms(up: DirectionSummary, down: DirectionSummary) -> list[float]:
    """Match each client PING (up) with the first later ACK (down) carrying the same opaque."""
    waiting: dict[str, deque[int]] = defaultdict(deque)
    for ping in up.ping_events:
        if not ping.ack:
            waiting[ping.opaque_hex].append(ping.t_ns)
    rtts: list[float] = []
    for ack in sorted(down.ping_events, key=lambda p: p.t_ns):
        pending = waiting.get(ack.opaque_hex)
        if ack.ack and pending and pending[0] <= ack.t_ns:
            rtts.append((ack.t_ns - pending.popleft()) / 1e6)
    return rtts


def _distribution(values_ms: Sequence[float]) -> PingRtt:
    if not values_ms:
        return PingRtt()
    return PingRtt(
        count=len(values_ms),
        median_ms=round(percentile(values_ms, 50), RTT_DIGITS),
        p90_ms=round(percentile(values_ms, 90), RTT_DIGITS),
    )


def _undecodable(conns: Sequence[TapConnection]) -> tuple[Undecodable, ...]:
    found: list[Undecodable] = []
    for c in conns:
        if not c.up.decodable:
            found.append(Undecodable(c.conn, "up", c.up.undecodable_reason))
        if not c.down.decodable:
            found.append(Undecodable(c.conn, "down", c.down.undecodable_reason))
    return tuple(found)


def _sent_settings(up: DirectionSummary) -> list[SettingsSeen]:
    return [s for s in up.settings if not s.ack]


def _first_settings(ups: Sequence[DirectionSummary]) -> dict[str, int]:
    for up in ups:
        sent = _sent_settings(up)
        if sent:
            return dict(sent[0].values)
    return {}


def _window_growth(up: DirectionSummary) -> tuple[WindowStep, ...]:
    return tuple(
        WindowStep(s.t_ns, s.values[INITIAL_WINDOW_SIZE])
        for s in _sent_settings(up)
        if INITIAL_WINDOW_SIZE in s.values
    )


def _conn_window_updates(ups: Sequence[DirectionSummary]) -> WindowUpdates:
    # A stable sort on time alone: updates stamped in the same chunk keep their wire order.
    timed = sorted(
        (
            (t_ns, inc)
            for up in ups
            for t_ns, inc in zip(
                up.conn_window_updates.first_t_ns, up.conn_window_updates.first, strict=False
            )
        ),
        key=lambda pair: pair[0],
    )[:FIRST_CONN_WINDOW_UPDATES]
    return WindowUpdates(
        count=sum(u.conn_window_updates.count for u in ups),
        total=sum(u.conn_window_updates.total for u in ups),
        first=tuple(inc for _t, inc in timed),
        first_t_ns=tuple(t_ns for t_ns, _inc in timed),
    )


def _rtt_probe_pings(ups: Sequence[DirectionSummary]) -> int:
    tag = RTT_PROBE_PING_TAG.hex()
    return sum(1 for u in ups for p in u.ping_events if not p.ack and p.opaque_hex.startswith(tag))


def _data_totals(sides: Iterable[DirectionSummary]) -> DataTotals:
    frames = total = largest = 0
    for side in sides:
        frames += side.data.frames
        total += side.data.bytes
        largest = max(largest, side.data.max_frame)
    return DataTotals(frames, total, largest)
