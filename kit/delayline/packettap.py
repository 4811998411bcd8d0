"""The packet link's frame tap: the forwarder's delivered packets, reassembled into each
connection's byte streams (``kit.capture.tcpstream``), fed to the same decoder process as
the stream delay line's (``kit.capture.channel``), so the tap file has the same
``TapConnection`` lines. Only delivered packets are fed: the tap sees what the receiver's
kernel got, in the order its TCP hands the bytes to the application.

Each connection also gets the stream delay line's ``LinkConnection`` line: the payload bytes
its TCP delivered in order per 2 ms (``schedule.DeliveryTrace``, by the time the packet that
completed them left the link) and the bottleneck's peak backlog while the trial ran. So the
delivery trace, the ramp ("time to 90% of the rate"), the steady rate and the intervals of
``kit run --interval`` read the same on both links."""

from __future__ import annotations

import asyncio
import json

from kit.capture.channel import TapChannel, TapFeed
from kit.capture.tapfile import encode_tap_line
from kit.capture.tcpstream import StreamEvent, TcpStreams
from kit.delayline.packets import DirectionCounts
from kit.delayline.schedule import DeliveryTrace
from kit.errors import TopologyError
from kit.plan.units import MIB
from kit.results.records import DeliveryTrace as TraceRecord
from kit.results.records import LinkConnection, LinkSide, PacketTotals

DIRECTION_NAMES = ("up", "down")


class PacketTap:
    """Delivered packets in; the decoder process appends the tap file. ``counts`` are the
    two directions' (up, down) counters, whose queue peak the tap reads per trial."""

    def __init__(
        self, tap_path: str, counts: tuple[DirectionCounts, DirectionCounts] | None = None
    ) -> None:
        try:
            with open(tap_path, "a", encoding="utf-8") as tap_file:
                self.channel = TapChannel.open(tap_file.fileno(), MIB)
        except OSError as exc:
            raise TopologyError(f"cannot open tap file {tap_path}: {exc.strerror or exc}") from None
        self.streams = TcpStreams()
        self.counts = counts or (DirectionCounts(), DirectionCounts())
        self._feeds: dict[int, tuple[TapFeed, TapFeed]] = {}
        self._traces: dict[int, tuple[DeliveryTrace, DeliveryTrace]] = {}
        self._opened_ns: dict[int, int] = {}

    def packet(self, direction: int, packet: bytes, now_ns: int) -> None:
        for event in self.streams.packet(direction, packet):
            self._handle(event, now_ns)

    def _handle(self, event: StreamEvent, now_ns: int) -> None:
        conn = event.conn
        if event.kind == "open":
            self._open(conn, now_ns)
            return
        feeds = self._feeds.get(conn)
        if feeds is None:
            return
        if event.kind == "bytes":
            feeds[event.direction].feed(event.data, now_ns)
            self._traces[conn][event.direction].add(len(event.data), now_ns)
        elif event.kind == "end":
            feeds[event.direction].end(now_ns)
        else:
            self._done(conn, now_ns)

    def _open(self, conn: int, now_ns: int) -> None:
        if not self._feeds:  # a trial's first connection: its queue peak starts here
            for counts in self.counts:
                counts.peak_since_mark_bytes = 0
        channel = self.channel
        self._feeds[conn] = (channel.feed(conn, "up"), channel.feed(conn, "down"))
        self._traces[conn] = (DeliveryTrace(), DeliveryTrace())
        self._opened_ns[conn] = now_ns

    def _done(self, conn: int, now_ns: int) -> None:
        feeds = self._feeds.pop(conn)
        for feed in feeds:
            feed.close(now_ns)
        opened_ns = self._opened_ns.pop(conn)
        sides = [
            LinkSide(counts.peak_since_mark_bytes, _record(trace))
            for counts, trace in zip(self.counts, self._traces.pop(conn), strict=True)
        ]
        link = LinkConnection(conn, opened_ns, sides[0], sides[1])
        self.channel.line(json.dumps(encode_tap_line(link), separators=(",", ":")))
        self.channel.conn_done(conn, opened_ns, now_ns)

    def close(self, totals: PacketTotals, now_ns: int) -> str | None:
        """Close what is still open, write the totals line, let the decoder finish."""
        for conn in list(self._feeds):
            self._done(conn, now_ns)
        line = json.dumps(encode_tap_line(totals), separators=(",", ":"))
        return asyncio.run(self.channel.aclose(line))


def _record(trace: DeliveryTrace) -> TraceRecord:
    return TraceRecord(trace.origin_ns or 0, trace.bucket_ns, tuple(trace.buckets))
