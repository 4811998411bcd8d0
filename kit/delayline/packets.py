"""Pure per-packet schedule of the packet link: one ``PacketDirection`` per direction.

It never sleeps and never reads a clock: the forwarder passes each IP packet's size and
its arrival time (monotonic ns) and gets back the time to deliver it, or None (dropped).

A packet goes through three steps, as on a real path:
1. the bottleneck's drop-tail queue: with a rate, a packet that would find more than
   ``queue_bytes`` waiting ahead of it is dropped (tail drop), else it is serialised at the
   rate (``schedule.Bottleneck``: exit = max(arrival, previous exit) + size / rate);
2. the wire's loss: independent (each packet lost with probability ``loss``) or
   Gilbert-Elliott (``GilbertElliott``: bursts of mean length ``burst_len``, mean loss
   ``loss``); a lost packet still used its slot at the bottleneck, as on a wire;
3. the propagation delay, jittered by a seeded uniform draw in [-J, +J], clamped at 0 and
   forced non-decreasing, so packets are never reordered (TCP would read reordering as loss).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from kit.delayline.schedule import Bottleneck
from kit.errors import UsageError


class Bernoulli:
    """Each packet lost independently with probability ``loss``."""

    def __init__(self, loss: float, rng: random.Random) -> None:
        self.loss, self._rng = loss, rng

    def lost(self) -> bool:
        return self._rng.random() < self.loss


class GilbertElliott:
    """Two states: Good loses nothing, Bad loses every packet. Leaving Bad has probability
    1 / burst_len per packet, so bursts are geometric with mean ``burst_len``; entering it
    has probability loss / (burst_len * (1 - loss)), so the long-run loss is ``loss``."""

    def __init__(self, loss: float, burst_len: float, rng: random.Random) -> None:
        if not 0 < loss < 1:
            raise UsageError(f"loss-burst: loss {loss} must be above 0 and below 1")
        if burst_len < 1:
            raise UsageError(f"loss-burst: mean burst length {burst_len} must be at least 1")
        self.p_enter = min(1.0, loss / (burst_len * (1 - loss)))
        self.p_leave = 1 / burst_len
        self._bad = False
        self._rng = rng

    def lost(self) -> bool:
        if self._bad:
            self._bad = self._rng.random() >= self.p_leave
        else:
            self._bad = self._rng.random() < self.p_enter
        return self._bad


LossModel = Bernoulli | GilbertElliott


@dataclass
class DirectionCounts:
    """What one direction did with the packets it was offered."""

    packets: int = 0
    bytes: int = 0
    delivered_packets: int = 0
    delivered_bytes: int = 0
    lost_packets: int = 0
    queue_drops: int = 0
    peak_queued_bytes: int = 0
    # The peak since the frame tap last marked it (when a trial's first connection opened).
    peak_since_mark_bytes: int = 0


class PacketDirection:
    """Delay, rate with a drop-tail queue, jitter and loss for one direction of the link."""

    def __init__(
        self,
        delay_ns: int,
        *,
        rate_bits_s: float | None = None,
        bottleneck: Bottleneck | None = None,
        queue_bytes: int = 0,
        jitter_ns: int = 0,
        loss: float = 0.0,
        burst_len: float = 0.0,
        seed: int = 1,
    ) -> None:
        if delay_ns < 0 or jitter_ns < 0:
            raise UsageError("delay and jitter must be 0 or more")
        if not 0 <= loss < 1:
            raise UsageError(f"loss: {loss} must be at least 0 and below 1")
        self.delay_ns, self.jitter_ns = delay_ns, jitter_ns
        if bottleneck is None and rate_bits_s is not None:
            bottleneck = Bottleneck(rate_bits_s)
        self.bottleneck = bottleneck
        self.queue_bytes = queue_bytes
        self._rng = random.Random(seed)
        self.loss_model = _loss_model(loss, burst_len, random.Random(seed * 7919 + 1))
        self._last_due_ns = -(2**63)
        self.counts = DirectionCounts()

    def offer(self, size: int, arrival_ns: int) -> int | None:
        """The delivery time of a ``size``-byte packet arriving at ``arrival_ns``, or None
        when the queue or the wire drops it."""
        counts = self.counts
        counts.packets += 1
        counts.bytes += size
        exit_ns = arrival_ns
        bottleneck = self.bottleneck
        if bottleneck is not None:
            queued = bottleneck.queued_bytes(arrival_ns)
            if queued + size > self.queue_bytes:
                counts.queue_drops += 1
                return None
            counts.peak_queued_bytes = max(counts.peak_queued_bytes, queued + size)
            counts.peak_since_mark_bytes = max(counts.peak_since_mark_bytes, queued + size)
            exit_ns = bottleneck.exit_ns(size, arrival_ns)
        if self.loss_model is not None and self.loss_model.lost():
            counts.lost_packets += 1
            return None
        counts.delivered_packets += 1
        counts.delivered_bytes += size
        return self._stamp(exit_ns + self._delay_ns())

    def _delay_ns(self) -> int:
        if not self.jitter_ns:
            return self.delay_ns
        return max(0, self.delay_ns + self._rng.randint(-self.jitter_ns, self.jitter_ns))

    def _stamp(self, due_ns: int) -> int:
        due_ns = max(due_ns, self._last_due_ns)  # never reorder
        self._last_due_ns = due_ns
        return due_ns


def _loss_model(loss: float, burst_len: float, rng: random.Random) -> LossModel | None:
    if loss == 0:
        return None
    if burst_len > 0:
        return GilbertElliott(loss, burst_len, rng)
    return Bernoulli(loss, rng)
