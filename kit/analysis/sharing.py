"""Pure: how streams sharing one connection fared (slow readers, the receive pool).

Per stream: throughput over its own finish time, the peak of bytes received but not yet
read, the largest window its sender had; over the streams read at full speed, Jain's
fairness index (sum x)^2 / (n sum x^2): 1 when they got the same, 1/n when one got all.
Any download's (``kit run``, the flat rows); table 7's figures are
``kit.analysis.tables.sharing``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kit.results.client import ClientResult
from kit.results.records import StreamWindowPoint


def jain_index(values: Sequence[float]) -> float | None:
    """Jain's fairness index of ``values`` (None without any, 1.0 when all are 0)."""
    if not values:
        return None
    total = sum(values)
    squares = sum(v * v for v in values)
    return 1.0 if squares == 0 else total * total / (len(values) * squares)


@dataclass(frozen=True)
class StreamSharing:
    """The per-stream view of one download (slow streams first, as they were opened)."""

    slow_streams: int
    throughput_mib_s: tuple[float, ...]
    finish_s: tuple[float, ...]
    peak_unread_bytes: tuple[int, ...]
    window_bytes: tuple[int, ...]
    peak_unread_total_bytes: int | None

    @property
    def fast_throughput_mib_s(self) -> tuple[float, ...]:
        return self.throughput_mib_s[self.slow_streams :]

    @property
    def fast_finish_s(self) -> tuple[float, ...]:
        return self.finish_s[self.slow_streams :]

    @property
    def jain(self) -> float | None:
        """Fairness between the full-speed streams (the slow ones read at their own rate)."""
        return jain_index(self.fast_throughput_mib_s)


def stream_sharing(result: ClientResult) -> StreamSharing:
    return StreamSharing(
        slow_streams=result.slow_streams,
        throughput_mib_s=result.stream_throughput_mib_s,
        finish_s=result.stream_finish_s,
        peak_unread_bytes=result.stream_peak_unread_bytes,
        window_bytes=result.stream_window_bytes,
        peak_unread_total_bytes=result.peak_unread_bytes,
    )


@dataclass(frozen=True)
class TapWindows:
    """Each stream's window over time as the tap saw it, in two figures per stream (the
    first connection's streams, by id): its median and its largest."""

    stream_ids: tuple[int, ...]
    median_bytes: tuple[int, ...]
    max_bytes: tuple[int, ...]


def tap_windows(points: Sequence[StreamWindowPoint]) -> TapWindows | None:
    """The streams' windows at the tap, from the frame summary's samples (None: fewer than
    two samples of any stream, nothing to summarise)."""
    by_stream: dict[int, list[int]] = {}
    for point in points:
        by_stream.setdefault(point.stream_id, []).append(point.window_bytes)
    kept = {sid: sorted(w) for sid, w in sorted(by_stream.items()) if len(w) > 1}
    if not kept:
        return None
    return TapWindows(
        stream_ids=tuple(kept),
        median_bytes=tuple(w[len(w) // 2] for w in kept.values()),
        max_bytes=tuple(w[-1] for w in kept.values()),
    )
