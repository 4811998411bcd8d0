"""Pure delay scheduling: a bottleneck queue, then a propagation delay, with seeded jitter.

One ``DelayQueue`` per direction of a relayed connection. It never sleeps and never reads a
clock: callers pass monotonic nanoseconds in. Like toxiproxy's latency toxic, every chunk is
stamped when it arrives and released ``delay_ns`` later, so delays never accumulate: a writer
that falls behind releases everything already due at once instead of adding its own lag.

With a rate, the direction is a link with a bottleneck (``Bottleneck``, shared by every
connection of one direction of one proxy, as one physical link is): a chunk of n bytes is
serialised there, exit = max(arrival, previous exit) + n / rate, then propagates,
release = exit + delay. A large read is split into chunks of ``chunk_bytes(rate)`` first,
so a 1 MiB read leaves as a stream of small bursts instead of one (see ``CHUNK_TIME_NS``).

With jitter J, each chunk's delay gets a uniform offset in [-J, +J] from a seeded generator,
clamped so the delay never goes below 0. The queue is a FIFO: due times are forced to be
non-decreasing, so chunks are never reordered (a chunk whose draw would overtake the one
before it leaves right behind it, as in toxiproxy, where chunks wait in line). This also
holds if a caller passes a slightly older arrival time. End-of-stream is a marker queued
like data, delivered in order after every chunk before it.

Backpressure uses hysteresis: ``should_pause_reading`` turns on when ``buffered_bytes``
reaches ``cap_bytes`` and off again only below ``cap_bytes // 2``, so a reader does not
flap between pausing and resuming on every chunk. With a rate, ``buffered_bytes`` counts
what waits at the bottleneck plus what propagates; the peak backlog at the bottleneck alone
is ``peak_queued_bytes``. ``delivered`` is a bounded trace of the bytes released per
``TRACE_BUCKET_NS``, by the release time the caller reports (what really left).
"""

from __future__ import annotations

import random
import weakref
from collections import deque
from collections.abc import Sequence

from kit.errors import UsageError
from kit.plan.processes import DEFAULT_BUFFER_CAP_BYTES, ProxyConfig
from kit.plan.trial import Link

# An entry is (due_ns, chunk); chunk None is the end-of-stream marker.
_Entry = tuple[int, bytes | memoryview | None]
Chunk = bytes | memoryview

# Chunk size = what the bottleneck serialises in 1 ms. Why 1 ms: it bounds the work to
# ~1000 chunks per second per direction whatever the rate (the writer's wake-ups cost
# ~0.1-0.2 ms each on a VM, so finer chunks would only add CPU), and a 1 ms burst is far
# below the RTTs the link is for (>= 5 ms), so on the scale of a window turn the flow is
# smooth. Floor 1 KiB (a low rate's chunks stay whole packets' worth), cap 1 MiB.
CHUNK_TIME_NS = 1_000_000
MIN_CHUNK_BYTES = 1024
MAX_CHUNK_BYTES = 1024 * 1024
TRACE_BUCKET_NS = 2_000_000
MAX_TRACE_BUCKETS = 30_000  # 60 s at 2 ms; later releases are not traced (counters stay exact)


def chunk_bytes(rate_bits_s: float) -> int:
    """The size a read is split into at ``rate_bits_s`` (1 ms of the link, 1 KiB..1 MiB)."""
    per_ms = int(rate_bits_s / 8 * CHUNK_TIME_NS / 1e9)
    return max(MIN_CHUNK_BYTES, min(MAX_CHUNK_BYTES, per_ms))


class RateSteps:
    """A rate that changes over time: ``(rate_bits_s, duration_ns)`` steps, looped, from the
    first byte that reaches the bottleneck on (``--rate-steps``, ``--trace``). A step may
    have rate 0 (an outage): bytes wait for the next step with capacity."""

    def __init__(self, steps: Sequence[tuple[float, int]]) -> None:
        if not steps or any(r < 0 or d <= 0 for r, d in steps) or not any(r > 0 for r, _ in steps):
            raise UsageError("rate steps: each needs a rate >= 0 and a duration > 0, one rate > 0")
        self.steps = [(r / 8e9, d) for r, d in steps]  # bytes per ns
        self.period_ns = sum(d for _, d in steps)
        self.period_bytes = sum(b * d for b, d in self.steps)
        self.mean_rate_bits_s = self.period_bytes * 8e9 / self.period_ns
        self.max_rate_bits_s = max(r for r, _ in steps)
        self.origin_ns: float | None = None

    def _locate(self, t_ns: float) -> tuple[int, float]:
        """(step index, ns left in it) at ``t_ns``."""
        assert self.origin_ns is not None
        into = (t_ns - self.origin_ns) % self.period_ns
        for index, (_, duration) in enumerate(self.steps):
            if into < duration:
                return index, duration - into
            into -= duration
        return 0, self.steps[0][1]

    def finish_ns(self, start_ns: float, n_bytes: float) -> float:
        """When ``n_bytes`` starting to serialise at ``start_ns`` have all left."""
        if self.origin_ns is None:
            self.origin_ns = start_ns
        periods = int(n_bytes // self.period_bytes)  # whole loops first: bounded walking
        t, left = start_ns + periods * self.period_ns, n_bytes - periods * self.period_bytes
        index, room_ns = self._locate(t)
        while True:
            per_ns = self.steps[index][0]
            if per_ns * room_ns >= left:
                return t + (left / per_ns if per_ns else 0.0)
            left -= per_ns * room_ns
            t += room_ns
            index = (index + 1) % len(self.steps)
            room_ns = self.steps[index][1]

    def capacity_bytes(self, t0_ns: float, t1_ns: float) -> float:
        """Bytes the link can serialise between ``t0_ns`` and ``t1_ns`` (a backlog's size)."""
        if self.origin_ns is None or t1_ns <= t0_ns:
            return 0.0
        periods = int((t1_ns - t0_ns) // self.period_ns)
        total, t = periods * self.period_bytes, t0_ns + periods * self.period_ns
        index, room_ns = self._locate(t)
        while t < t1_ns:
            span = min(room_ns, t1_ns - t)
            total += self.steps[index][0] * span
            t += span
            index = (index + 1) % len(self.steps)
            room_ns = self.steps[index][1]
        return total


class Bottleneck:
    """The serialisation point of one direction of a link: a FIFO drained at ``rate_bits_s``,
    or at a rate that changes over time (``steps``; ``rate_bits_s`` is then their mean)."""

    def __init__(self, rate_bits_s: float, steps: RateSteps | None = None) -> None:
        if steps is not None:
            rate_bits_s = steps.mean_rate_bits_s
        if not rate_bits_s > 0:
            raise UsageError(f"rate: {rate_bits_s} bit/s must be above 0")
        self.rate_bits_s = rate_bits_s
        self.ns_per_byte = 8e9 / rate_bits_s
        self.steps = steps
        self.chunk_bytes = chunk_bytes(rate_bits_s if steps is None else steps.max_rate_bits_s)
        self._last_exit_ns = float("-inf")
        self.peak_queued_bytes = 0

    def exit_ns(self, n_bytes: int, arrival_ns: int) -> int:
        """When the last byte of an ``n_bytes`` chunk arriving at ``arrival_ns`` has left."""
        start = max(float(arrival_ns), self._last_exit_ns)
        if self.steps is None:
            self._last_exit_ns = start + n_bytes * self.ns_per_byte
        else:
            self._last_exit_ns = self.steps.finish_ns(start, n_bytes)
        return round(self._last_exit_ns)

    def queued_bytes(self, now_ns: int) -> int:
        """Bytes still waiting to be serialised at ``now_ns`` (the backlog)."""
        backlog_ns = self._last_exit_ns - now_ns
        if backlog_ns <= 0:
            return 0
        if self.steps is not None:
            return round(self.steps.capacity_bytes(now_ns, self._last_exit_ns))
        return round(backlog_ns / self.ns_per_byte)

    def note_backlog(self, now_ns: int) -> int:
        """The backlog at ``now_ns`` (right after an arrival: its peak), kept in the peak."""
        queued = self.queued_bytes(now_ns)
        if queued > self.peak_queued_bytes:
            self.peak_queued_bytes = queued
        return queued

    def set_rate(self, rate_bits_s: float) -> None:
        """A new rate for what arrives from now on (``kit proxy --control``); what is queued
        keeps its exit times. Not for a link with rate steps."""
        if not rate_bits_s > 0 or self.steps is not None:
            raise UsageError(f"rate: {rate_bits_s} bit/s must be above 0 (and no rate steps)")
        self.rate_bits_s = rate_bits_s
        self.ns_per_byte = 8e9 / rate_bits_s

    def forget(self, n_bytes: int, now_ns: int) -> None:
        """``n_bytes`` still waiting here were dropped (their connection closed): the link
        no longer spends time on them. Chunks stamped earlier keep their times."""
        if n_bytes > 0 and self._last_exit_ns > now_ns:
            self._last_exit_ns = max(float(now_ns), self._last_exit_ns - n_bytes * self.ns_per_byte)


class DeliveryTrace:
    """Bytes released per ``TRACE_BUCKET_NS``, from the first release on (bounded)."""

    def __init__(self, bucket_ns: int = TRACE_BUCKET_NS, max_buckets: int = MAX_TRACE_BUCKETS):
        self.bucket_ns, self.max_buckets = bucket_ns, max_buckets
        self.origin_ns: int | None = None
        self.buckets: list[int] = []

    def add(self, n_bytes: int, now_ns: int) -> None:
        if self.origin_ns is None:
            self.origin_ns = now_ns
        index = (now_ns - self.origin_ns) // self.bucket_ns
        if index < 0 or index >= self.max_buckets:
            return
        buckets = self.buckets
        if index >= len(buckets):
            buckets.extend([0] * (index + 1 - len(buckets)))
        buckets[index] += n_bytes


class DelayQueue:
    """FIFO of (due time, chunk) for one direction of one connection."""

    def __init__(
        self,
        delay_ns: int,
        cap_bytes: int = DEFAULT_BUFFER_CAP_BYTES,
        *,
        bottleneck: Bottleneck | None = None,
        jitter_ns: int = 0,
        seed: int = 1,
    ) -> None:
        if delay_ns < 0:
            raise UsageError(f"delay_ns: {delay_ns} is negative; delays are 0 or more")
        if cap_bytes < 1:
            raise UsageError(f"cap_bytes: {cap_bytes} must be at least 1")
        if jitter_ns < 0:
            raise UsageError(f"jitter_ns: {jitter_ns} is negative; jitter is 0 or more")
        self.delay_ns = delay_ns
        self.cap_bytes = cap_bytes
        self.bottleneck = bottleneck
        self.jitter_ns = jitter_ns
        self._rng = random.Random(seed)
        self._entries: deque[_Entry] = deque()
        self._last_due_ns = -(2**63)
        self._eof_queued = False
        self.eof_released = False
        self.buffered_bytes = 0
        self.peak_buffered_bytes = 0
        self.peak_queued_bytes = 0  # at the bottleneck, seen when this queue's chunks arrived
        self.released_bytes = 0
        self.delivered = DeliveryTrace()
        self._paused = False
        self._exits: deque[tuple[int, int]] = deque()  # (exit at the bottleneck, bytes)

    def push(self, chunk: Chunk, arrival_ns: int) -> None:
        """Queue ``chunk`` (arrived at ``arrival_ns``): through the bottleneck, then delayed."""
        if self._eof_queued:
            raise ValueError("push after end-of-stream")
        if not chunk:
            return
        bottleneck = self.bottleneck
        if bottleneck is None:
            self._entries.append((self._stamp(arrival_ns + self._delay_ns()), chunk))
        else:
            self._push_limited(chunk, arrival_ns, bottleneck)
        self.buffered_bytes += len(chunk)
        if self.buffered_bytes > self.peak_buffered_bytes:
            self.peak_buffered_bytes = self.buffered_bytes
        if self.buffered_bytes >= self.cap_bytes:
            self._paused = True

    def _push_limited(self, chunk: Chunk, arrival_ns: int, bottleneck: Bottleneck) -> None:
        size, step = len(chunk), bottleneck.chunk_bytes
        entries, exits = self._entries, self._exits
        while exits and exits[0][0] <= arrival_ns:
            exits.popleft()  # serialised already
        if size <= step:
            exit_ns = bottleneck.exit_ns(size, arrival_ns)
            entries.append((self._stamp(exit_ns + self._delay_ns()), chunk))
            exits.append((exit_ns, size))
        else:
            view = memoryview(chunk)  # pieces share the read's buffer: no copies
            for start in range(0, size, step):
                piece = view[start : start + step]
                exit_ns = bottleneck.exit_ns(len(piece), arrival_ns)
                entries.append((self._stamp(exit_ns + self._delay_ns()), piece))
                exits.append((exit_ns, len(piece)))
        queued = bottleneck.note_backlog(arrival_ns)
        if queued > self.peak_queued_bytes:
            self.peak_queued_bytes = queued

    def discard(self, now_ns: int) -> int:
        """The connection is gone: drop what is queued and give the bottleneck back the time
        its unserialised bytes would have taken (else the next connection would wait behind
        a dead one's backlog). Returns the bytes dropped."""
        dropped = self.buffered_bytes
        unsent = sum(n for exit_ns, n in self._exits if exit_ns > now_ns)
        if self.bottleneck is not None:
            self.bottleneck.forget(unsent, now_ns)
        self._entries.clear()
        self._exits.clear()
        self.buffered_bytes = 0
        return dropped

    def push_eof(self, arrival_ns: int) -> None:
        """Queue end-of-stream; released after all data, ``delay_ns`` after it arrived."""
        if self._eof_queued:
            return
        self._eof_queued = True
        self._entries.append((self._stamp(arrival_ns + self.delay_ns), None))

    def pop_due(self, now_ns: int) -> list[Chunk]:
        """Every chunk due at ``now_ns``, oldest first; sets ``eof_released`` on the marker."""
        out: list[Chunk] = []
        entries = self._entries
        released = 0
        while entries and entries[0][0] <= now_ns:
            chunk = entries.popleft()[1]
            if chunk is None:
                self.eof_released = True
                break
            out.append(chunk)
            released += len(chunk)
        if released:
            self.buffered_bytes -= released
            self.released_bytes += released
            self.delivered.add(released, now_ns)
        if self._paused and self.buffered_bytes < self.cap_bytes // 2:
            self._paused = False
        return out

    def next_due_ns(self) -> int | None:
        """Due time of the oldest entry (data or end-of-stream), or None when empty."""
        return self._entries[0][0] if self._entries else None

    @property
    def should_pause_reading(self) -> bool:
        return self._paused

    @property
    def eof_queued(self) -> bool:
        return self._eof_queued

    def __len__(self) -> int:
        return len(self._entries)

    def _delay_ns(self) -> int:
        """This chunk's propagation delay: the fixed delay, jittered, never below 0."""
        if not self.jitter_ns:
            return self.delay_ns
        offset = self._rng.randint(-self.jitter_ns, self.jitter_ns)
        return max(0, self.delay_ns + offset)

    def _stamp(self, due: int) -> int:
        if due < self._last_due_ns:
            due = self._last_due_ns  # never reorder: FIFO order wins over a draw or stale clock
        self._last_due_ns = due
        return due


class LiveLink:
    """Every queue and bottleneck of this process's delay line, by direction, so a control
    (``kit proxy --control``) can change delay, jitter and rate while traffic flows: a
    changed delay applies to chunks arriving from then on (those queued keep their times,
    and FIFO order holds), as does a changed rate."""

    def __init__(self) -> None:
        self.queues: dict[str, weakref.WeakSet[DelayQueue]] = {
            "up": weakref.WeakSet(),
            "down": weakref.WeakSet(),
        }
        self.bottlenecks: dict[str, Bottleneck | None] = {"up": None, "down": None}
        self.started: Link | None = None  # the link the delay line started with
        self.changed: Link | None = None  # set only by a control: new queues follow it

    def change(self, link: Link) -> None:
        """Apply ``link``'s delays, jitter and rates (a rate only where there is a bottleneck)."""
        for direction in ("up", "down"):
            delay_ms = link.delay_up_ms if direction == "up" else link.delay_down_ms
            for queue in list(self.queues[direction]):
                queue.delay_ns = round(delay_ms * 1e6)
                queue.jitter_ns = round(link.jitter_ms * 1e6)
            rate = link.rate_up_bits_s if direction == "up" else link.rate_down_bits_s
            bottleneck = self.bottlenecks[direction]
            if bottleneck is not None and rate is not None:
                bottleneck.set_rate(rate)
        self.changed = link

    @property
    def link(self) -> Link | None:
        return self.changed or self.started


LIVE = LiveLink()


def bottleneck_for(config: ProxyConfig, direction: str) -> Bottleneck | None:
    """The proxy-wide bottleneck of one direction ("up" or "down"), None when unlimited."""
    bottleneck = link_bottleneck(config.link, direction)
    LIVE.bottlenecks[direction] = bottleneck
    LIVE.started = config.link
    return bottleneck


def link_bottleneck(link: Link, direction: str) -> Bottleneck | None:
    """One direction's bottleneck; the down direction follows the link's rate steps."""
    if direction == "down" and link.rate_steps:
        steps = [(s.rate_bits_s, round(s.duration_ms * 1e6)) for s in link.rate_steps]
        return Bottleneck(0.0, RateSteps(steps))
    rate = link.rate_up_bits_s if direction == "up" else link.rate_down_bits_s
    return None if rate is None else Bottleneck(rate)


def queue_for(
    config: ProxyConfig, direction: str, bottleneck: Bottleneck | None, conn_id: int
) -> DelayQueue:
    """The queue of one direction of connection ``conn_id``; its jitter is seeded from the
    config's seed, the connection and the direction, so a run with the same seed and the
    same connection order draws the same delays."""
    link = LIVE.changed or config.link  # changed by a control since the start, or as started
    delay_ms = link.delay_up_ms if direction == "up" else link.delay_down_ms
    queue = DelayQueue(
        round(delay_ms * 1e6),
        config.buffer_cap_bytes,
        bottleneck=bottleneck,
        jitter_ns=round(link.jitter_ms * 1e6),
        seed=hash_seed(link.seed, conn_id, direction),
    )
    LIVE.queues[direction].add(queue)
    return queue


def hash_seed(seed: int, conn_id: int, direction: str) -> int:
    """A stable per-(connection, direction) seed (Python's str hash is salted per process)."""
    return (seed * 1_000_003 + conn_id) * 2 + (0 if direction == "up" else 1)
