"""The packet link's forwarder: moves IP packets between the two namespaces' TUN devices,
each delivered when its direction's pure schedule (``kit.delayline.packets``) says.

``python -m kit.delayline.forwarder --config '<ForwarderJob as JSON>'`` is a process of
the kit's process protocol (the compiled forwarder, ``kit-linkfwd`` of ``linkd/``, takes the
same job and passes the same rules' vectors): it creates the client and the server namespace (``netns``),
prints its ready line (the kit then starts the server and the clients inside them with
``nsenter``), forwards until SIGTERM, then prints its ``PacketTotals`` as the result line.

One thread, one ``select`` over both devices: ``select`` takes its timeout in microseconds
(``epoll`` rounds up to whole milliseconds, which would add up to 1 ms to every delay).
Every wake-up reads what is waiting (bounded per device, so one direction cannot starve
the other), then writes everything due; a packet is one ``os.read`` and one ``os.write``.
"""

from __future__ import annotations

import dataclasses
import os
import select
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from kit import __version__
from kit._proto import worker_pb2 as pb
from kit.delayline.netns import (
    CLIENT_NS_FD,
    SERVER_NS_FD,
    Side,
    device_drops,
    enter_user_namespace,
    in_user_namespace,
    new_side,
)
from kit.delayline.packets import DirectionCounts, PacketDirection
from kit.delayline.packettap import PacketTap
from kit.delayline.schedule import link_bottleneck
from kit.plan.jobs import forwarder_config
from kit.plan.packet import CLIENT_ADDR, SERVER_ADDR
from kit.plan.trial import Link
from kit.protocol import child_main
from kit.quantile import percentile
from kit.results.records import PacketSide, PacketTotals

STACK = "kit.forwarder"
READS_PER_WAKE = 64
MAX_LATE_SAMPLES = 200_000
MAX_PACKET_BYTES = 65_536


@dataclass
class Lane:
    """One direction: read from ``src``, schedule, write to ``dst`` when due."""

    src: int
    dst: int
    schedule: PacketDirection
    waiting: deque[tuple[int, bytes]]
    index: int  # 0 up, 1 down
    tap: PacketTap | None = None
    late_ns: list[int] = field(default_factory=list)


def directions(link: Link, queues: tuple[int, int]) -> tuple[PacketDirection, PacketDirection]:
    """(up, down) schedules of a packet link with the job's (up, down) queues, each seeded
    apart."""
    out = []
    for index, (name, delay_ms) in enumerate(
        (("up", link.delay_up_ms), ("down", link.delay_down_ms))
    ):
        out.append(
            PacketDirection(
                round(delay_ms * 1e6),
                bottleneck=link_bottleneck(link, name),
                queue_bytes=queues[index],
                jitter_ns=round(link.jitter_ms * 1e6),
                loss=link.loss,
                burst_len=link.loss_burst_len,
                seed=link.seed * 2 + index,
            )
        )
    return out[0], out[1]


def _read_some(lane: Lane, now_ns: int) -> None:
    schedule, waiting, src = lane.schedule, lane.waiting, lane.src
    for _ in range(READS_PER_WAKE):
        try:
            packet = os.read(src, MAX_PACKET_BYTES)
        except BlockingIOError:
            return
        due = schedule.offer(len(packet), now_ns)
        if due is not None:
            waiting.append((due, packet))


def _write_due(lane: Lane, now_ns: int) -> None:
    waiting, dst, tap, late = lane.waiting, lane.dst, lane.tap, lane.late_ns
    while waiting and waiting[0][0] <= now_ns:
        due, packet = waiting.popleft()
        if len(late) < MAX_LATE_SAMPLES:
            late.append(now_ns - due)
        try:
            os.write(dst, packet)
        except OSError:
            continue  # the device is going away (teardown) or its queue is full: a drop
        if tap is not None:
            tap.packet(lane.index, packet, now_ns)


def forward(lanes: tuple[Lane, Lane], stop: Callable[[], bool]) -> tuple[int, float]:
    """Forward until ``stop()``; returns (wake-ups, seconds spent working)."""
    fds = [lane.src for lane in lanes]
    by_fd = {lane.src: lane for lane in lanes}
    wakeups, busy_ns = 0, 0
    clock = time.monotonic_ns
    while not stop():
        now = clock()
        dues = [lane.waiting[0][0] for lane in lanes if lane.waiting]
        timeout = 0.2 if not dues else max(0.0, (min(dues) - now) / 1e9)
        readable, _, _ = select.select(fds, [], [], timeout)
        start = clock()
        for fd in readable:
            _read_some(by_fd[fd], start)
        for lane in lanes:
            _write_due(lane, clock())
        wakeups += 1
        busy_ns += clock() - start
    return wakeups, busy_ns / 1e9


def serve(job: pb.ForwarderJob, ready: Callable[[int], None]) -> PacketTotals:
    config, queues = forwarder_config(job)
    link = config.link
    if in_user_namespace():
        enter_user_namespace()
    client = new_side(f"{CLIENT_ADDR}/32", SERVER_ADDR, link.mtu, CLIENT_NS_FD, link.congestion)
    server = new_side(f"{SERVER_ADDR}/32", CLIENT_ADDR, link.mtu, SERVER_NS_FD, link.congestion)
    up, down = directions(link, queues)
    tap = None if config.tap_path is None else PacketTap(config.tap_path, (up.counts, down.counts))
    lanes = (
        Lane(client.tun_fd, server.tun_fd, up, deque(), 0, tap),
        Lane(server.tun_fd, client.tun_fd, down, deque(), 1, tap),
    )
    stopping = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.append(True))
    ready(0)
    wakeups, busy_s = forward(lanes, lambda: bool(stopping))
    drops = sum(device_drops(side.ns_fd) for side in (client, server))
    _close(client, server)
    late = lanes[0].late_ns + lanes[1].late_ns or [0]
    totals = PacketTotals(
        _side(up.counts),
        _side(down.counts),
        wakeups,
        round(busy_s, 3),
        round(percentile(late, 50) / 1e3, 1),
        round(percentile(late, 99) / 1e3, 1),
        len(late),
        drops,
    )
    if tap is not None:
        problem = tap.close(totals, time.monotonic_ns())
        if problem is not None:
            print(f"{STACK}: {problem}", file=sys.stderr, flush=True)
    return totals


def _side(counts: DirectionCounts) -> PacketSide:
    fields = dataclasses.asdict(counts)
    del fields["peak_since_mark_bytes"]  # the tap's, per trial
    return PacketSide(**fields)


def _close(*sides: Side) -> None:
    for side in sides:
        for fd in (side.tun_fd, side.ns_fd):
            os.close(fd)


def main() -> int:
    return child_main(pb.ForwarderJob, serve, STACK, __version__)


if __name__ == "__main__":
    sys.exit(main())
