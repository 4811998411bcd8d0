"""The delay line's asyncio shell: accept, dial upstream, one reader and one writer per direction.

Scheduling lives in ``kit.delayline.schedule`` (pure); frame decoding in ``kit.capture``;
the frozen ``ProxyConfig`` in ``kit.plan.processes``. This module only moves bytes and keeps
counters. With a tap file, every chunk is handed (one copy, never a wait) to a decoder
process (``kit.capture.channel``), which appends one ``TapConnection`` line per closed
connection; the proxy's ``ProxyTotals`` line goes last, at shutdown. A decoder that falls
behind skips bytes and says how many ("tap incomplete"); it never slows the link.

Why it looks the way it does (measured on this kind of machine, see the timer and tests):

- asyncio's selector rounds timeouts up to whole milliseconds, so the writer waits for a
  chunk's due time on ``kit.delayline.timer``: one Linux timerfd per proxy with absolute
  CLOCK_MONOTONIC deadlines (precise, no CPU while waiting); elsewhere it sleeps whole ms
  and spins the last ~1.5 ms. Everything due when it wakes is written in one ``write``.
- The client's bytes are read (and stamped) from the moment the connection is accepted,
  even before the upstream connection exists; they wait in the up queue. Each pump has a
  fixed source and destination, so a direction's bytes can never go back to their sender.
- End-of-stream is forwarded as a half-close (``write_eof``) after the same delay as data;
  a reset or write error on either side closes both sides.
- The proxy splits the TCP connection: kernel TCP on each hop never sees the added delay;
  only HTTP/2's own feedback (WINDOW_UPDATE, PING acks) is delayed. Right for flow-control
  studies, not a network emulator.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import IO

from kit.capture.channel import TapChannel, TapFeed
from kit.capture.tapfile import encode_tap_line
from kit.delayline.accept import Acceptor, listen_socket
from kit.delayline.counter import ByteCounter
from kit.delayline.limits import Budget, QuietLog, ensure_fd_room, is_out_of_resources
from kit.delayline.schedule import Bottleneck, Chunk, DelayQueue, bottleneck_for, queue_for
from kit.delayline.streams import StampedReader, Streams, open_stamped
from kit.delayline.timer import Sleeper, SpinSleeper, make_sleeper
from kit.errors import TopologyError
from kit.plan.processes import ProxyConfig
from kit.plan.trial import link_text
from kit.plan.units import MIB
from kit.results.records import DeliveryTrace, LinkConnection, LinkSide, ProxyTotals

WRITE_HIGH_WATER_BYTES = 16 * MIB
# One event loop serves every connection, one read per ready socket per loop turn, and a
# neighbour's byte needs ~10 turns to cross (read, wake the writer, timer, write; both ways).
# A flood's 1 MiB read made each turn ~1 ms: a 10 ms ping-pong beside a max-rate PING flood
# took +5 ms at p50 (64 KiB reads: +1.7 ms, the floor +0.4). So while connections share the
# proxy, each read is at most this; a lone connection keeps ``read_bytes`` (faster in bulk).
# Measured side by side on a quiet machine, a 5 ms ping-pong beside a bulk connection, p50
# over the floor: 64 KiB +0.45-0.48 ms (p99 +5.7), 32 KiB +0.24-0.26 (p99 within +0.3), 16 KiB
# +0.13; four bulk connections together at RTT 1 ms: 488-614, 431-460, 200-258 MiB/s.
SHARED_READ_BYTES = 32 * 1024
SHUTDOWN_GRACE_S = 2.0
REFUSED_LINGER_S = 2.0
DIAL_TIMEOUT_S = 10.0
MAX_ERRORS_KEPT = 100


def startup_warnings(config: ProxyConfig) -> list[str]:
    if config.is_loopback:
        return []
    return [
        f"WARNING: the delay line listens on {config.listen_host}, which is NOT a loopback "
        "address: anyone who can reach this host can connect through it to "
        f"{config.upstream_host}:{config.upstream_port}."
    ]


@dataclass
class ProxyStats:
    """Counters for the whole proxy (mutable; read them, don't write them)."""

    accepted: int = 0
    active: int = 0
    bytes_up: int = 0
    bytes_down: int = 0
    peak_buffered_bytes: int = 0  # largest backlog one direction of one connection held
    tap_not_decoded_bytes: int = 0  # the tap decoder fell behind: bytes forwarded undecoded
    refused_connections: int = 0  # over max_connections: accepted and closed at once
    accept_errors: int = 0  # accept() out of file descriptors (retried after 0.5 s)
    dial_errors: int = 0  # upstream connect() out of file descriptors
    buffer_full_pauses: int = 0  # times max_buffered_bytes (all queues) paused every reader
    errors: list[str] = field(default_factory=list)
    bottlenecks: tuple[Bottleneck | None, ...] = ()  # the link's, up and down

    def add_error(self, message: str) -> None:
        if len(self.errors) < MAX_ERRORS_KEPT:
            self.errors.append(message)

    def totals(self) -> ProxyTotals:
        """The frozen record written as the tap file's last line."""
        return ProxyTotals(
            connections=self.accepted,
            bytes_up=self.bytes_up,
            bytes_down=self.bytes_down,
            peak_buffered_bytes=self.peak_buffered_bytes,
            errors=tuple(self.errors),
            peak_queued_bytes=max(
                (b.peak_queued_bytes for b in self.bottlenecks if b is not None), default=0
            ),
            tap_not_decoded_bytes=self.tap_not_decoded_bytes,
            refused_connections=self.refused_connections,
            accept_errors=self.accept_errors,
            buffer_full_pauses=self.buffer_full_pauses,
        )


def _log(message: str) -> None:
    print(f"kit.delayline: {message}", file=sys.stderr, flush=True)


class _Pump:
    """One direction: a reader task fills the delay queue, a writer task empties it."""

    def __init__(
        self, name: str, queue: DelayQueue, config: ProxyConfig, stats: ProxyStats, sleeper: Sleeper
    ) -> None:
        self.name = name
        self.sleeper = sleeper
        self.queue = queue
        self.tap: TapFeed | None = None  # set by the connection when the proxy taps
        self.budget: Budget | None = None  # the proxy's total, set by the connection
        self.counter: ByteCounter | None = None  # the live count (down only, --interval)
        self.read_bytes = config.read_bytes
        self.stats = stats
        self.dst: asyncio.StreamWriter | None = None
        self._wake = asyncio.Event()
        self._resume = asyncio.Event()

    async def read_loop(self, src: StampedReader) -> None:
        queue, tap = self.queue, self.tap
        while True:
            if queue.should_pause_reading:  # backpressure: leave bytes in the kernel
                self._resume.clear()
                await self._resume.wait()
                continue
            budget = self.budget
            if budget is not None and budget.full and queue.buffered_bytes:
                # The proxy's total is reached: a direction holding bytes waits (for its own
                # writer, or for room); an empty one may read, so a ping-pong never stalls
                # behind peers that stopped reading.
                self._resume.clear()
                budget.waiting.add(self._resume)
                try:
                    await self._resume.wait()
                finally:
                    budget.waiting.discard(self._resume)
                continue
            data = await src.read(self.read_bytes)
            now_ns = src.fed_ns  # when the bytes reached the process, not when this task ran
            if not data:
                if tap is not None:
                    tap.end(now_ns)
                queue.push_eof(now_ns)
                self._wake.set()
                return
            if tap is not None:
                tap.feed(data, now_ns)
            queue.push(data, now_ns)
            if self.budget is not None:
                self.budget.add(len(data))
            self._count(len(data))
            self._wake.set()

    def _count(self, n_bytes: int) -> None:
        if self.name == "up":
            self.stats.bytes_up += n_bytes
        else:
            self.stats.bytes_down += n_bytes
        if self.queue.peak_buffered_bytes > self.stats.peak_buffered_bytes:
            self.stats.peak_buffered_bytes = self.queue.peak_buffered_bytes

    async def write_loop(self, dst: asyncio.StreamWriter) -> None:
        self.dst = dst
        queue, clock = self.queue, time.monotonic_ns
        while True:
            due_ns = queue.next_due_ns()
            if due_ns is None:
                self._wake.clear()
                await self._wake.wait()
                continue
            if due_ns > clock():
                await self.sleeper.sleep_until(due_ns)
            elif await self._release(dst, clock()):
                return

    async def _release(self, dst: asyncio.StreamWriter, now_ns: int) -> bool:
        """Write everything due; True once end-of-stream went out as a half-close."""
        chunks = self.queue.pop_due(now_ns)
        self._uncharge(chunks)
        if not self.queue.should_pause_reading:
            self._resume.set()
        if chunks:
            await self._write(dst, chunks)
            if self.counter is not None:
                self.counter.add(sum(len(c) for c in chunks))
        if self.queue.eof_released:
            if dst.can_write_eof() and not dst.transport.is_closing():
                # drain() only waits down to the low-water mark; once this task returns the
                # connection may be closed (with a bounded grace), so wait until the buffer is
                # empty: a slow reader would otherwise lose the tail, silently, after a FIN.
                dst.transport.set_write_buffer_limits(high=0)
                await dst.drain()
                dst.write_eof()
            return True
        return False

    async def _write(self, dst: asyncio.StreamWriter, chunks: list[Chunk]) -> None:
        """Hand ``chunks`` to the transport, at most ``turn_bytes`` per loop turn when the
        loop is shared: a flood's backlog must not hold a neighbour's due bytes back."""
        if len(chunks) == 1:
            dst.write(chunks[0])
        else:
            group: list[Chunk] = []
            size = 0
            for chunk in chunks:
                group.append(chunk)
                size += len(chunk)
                if size >= self.read_bytes:
                    dst.write(b"".join(group))
                    group, size = [], 0
                    await asyncio.sleep(0)  # one loop turn: the others' reads and writes
            if group:
                dst.write(b"".join(group))
        await dst.drain()

    def flush_due(self) -> None:
        """At shutdown: hand what is already due to the transport (it flushes on close)."""
        dst = self.dst
        chunks = self.queue.pop_due(time.monotonic_ns())
        self._uncharge(chunks)
        if dst is not None and chunks and not dst.transport.is_closing():
            dst.write(b"".join(chunks))

    def _uncharge(self, chunks: Sequence[bytes | memoryview]) -> None:
        if self.budget is not None and chunks:
            self.budget.release(sum(len(c) for c in chunks))

    def release_budget(self) -> None:
        """The connection is done: what is still queued no longer counts."""
        if self.budget is not None:
            self.budget.release(self.queue.buffered_bytes)
            self.budget = None


async def _quietly(awaitable: Awaitable[None]) -> None:
    with contextlib.suppress(Exception):
        await awaitable


def _tune(writer: asyncio.StreamWriter, read_bytes: int) -> None:
    # Large buffers so latency, not the transport, bounds throughput (toxiproxy's rule).
    writer.transport.set_write_buffer_limits(high=max(WRITE_HIGH_WATER_BYTES, 4 * read_bytes))
    _set_read_size(writer, read_bytes)


def _set_read_size(writer: asyncio.StreamWriter | None, read_bytes: int) -> None:
    # The selector transport recv()s 256 KiB at a time (class attribute max_size); reading
    # read_bytes per syscall measured ~8% faster at 1 MiB. Harmless where it doesn't exist.
    if writer is not None and hasattr(writer.transport, "max_size"):
        setattr(writer.transport, "max_size", read_bytes)  # noqa: B010


class _Connection:
    """One accepted client connection and its upstream twin."""

    def __init__(
        self,
        proxy: DelayLine,
        conn_id: int,
        reader: StampedReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.proxy, self.conn_id = proxy, conn_id
        self.client_reader, self.client_writer = reader, writer
        self.upstream_writer: asyncio.StreamWriter | None = None
        self.opened_ns = time.monotonic_ns()
        config, stats = proxy.config, proxy.stats
        up_q = queue_for(config, "up", proxy.bottlenecks[0], conn_id)
        down_q = queue_for(config, "down", proxy.bottlenecks[1], conn_id)
        self.up = _Pump("up", up_q, config, stats, proxy.sleeper)
        self.down = _Pump("down", down_q, config, stats, proxy.sleeper)
        self.up.budget = self.down.budget = proxy.budget
        self.down.counter = proxy.counter
        if proxy.tap is not None:
            self.up.tap, self.down.tap = (
                proxy.tap.feed(conn_id, "up"),
                proxy.tap.feed(conn_id, "down"),
            )
        self.tasks: list[asyncio.Task[None]] = []
        self.closing = False

    async def run(self) -> None:
        try:
            # Read the client at once: its bytes are stamped on arrival and wait in the queue.
            self.tasks.append(asyncio.create_task(self.up.read_loop(self.client_reader)))
            upstream = await self._dial()
            if upstream is None:
                await self._refuse()
            elif self.closing:  # the proxy shut down while we were dialling
                upstream[1].close()
            else:
                await self._relay(*upstream)
        finally:
            self._cancel_tasks()
            try:
                await self._close_and_flush()
            finally:
                self.up.queue.discard(time.monotonic_ns())  # frees the shared bottleneck
                self.down.queue.discard(time.monotonic_ns())
                self.proxy.connection_done(self)  # counted and recorded whatever happened

    async def _dial(self) -> Streams | None:
        config = self.proxy.config
        try:
            return await asyncio.wait_for(
                open_stamped(config.upstream_host, config.upstream_port, limit=config.read_bytes),
                DIAL_TIMEOUT_S,
            )
        except OSError as exc:  # refused, unreachable, or TimeoutError (an OSError)
            if is_out_of_resources(exc):  # counted and told once a second, not per connection
                self.proxy.dial_failed(exc)
                return None
            message = (
                f"conn {self.conn_id}: upstream {config.upstream_host}:"
                f"{config.upstream_port} unreachable ({exc.strerror or exc}); "
                "closed the client connection"
            )
            _log(message)
            self.proxy.stats.add_error(message)
            return None

    async def _refuse(self) -> None:
        """Upstream unreachable: half-close towards the client and let it finish first.

        Closing a socket that still has unread input sends a reset; sending FIN and reading
        the client until its own FIN (bounded) makes the close clean on the client side.
        """
        if self.closing or self.client_writer.transport.is_closing():
            return
        self.client_writer.write_eof()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(self.tasks[0]), REFUSED_LINGER_S)

    async def _relay(self, up_reader: StampedReader, up_writer: asyncio.StreamWriter) -> None:
        self.upstream_writer = up_writer
        _tune(self.client_writer, self.proxy.config.read_bytes)
        _tune(up_writer, self.proxy.config.read_bytes)
        self.set_read_size(self.proxy.fit_read_sizes())
        self.tasks += [
            asyncio.create_task(self.up.write_loop(up_writer)),
            asyncio.create_task(self.down.read_loop(up_reader)),
            asyncio.create_task(self.down.write_loop(self.client_writer)),
        ]
        pending: set[asyncio.Task[None]] = set(self.tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
            failed = [t for t in done if not t.cancelled() and t.exception() is not None]
            if failed:
                self._record_failure(failed[0].exception())
                return  # the finally in run() closes both sides

    def _record_failure(self, exc: BaseException | None) -> None:
        if isinstance(exc, ConnectionError | OSError):
            kind = type(exc).__name__  # a peer reset: ordinary, count but don't shout
        else:
            kind = f"{type(exc).__name__}: {exc}"
            _log(f"conn {self.conn_id}: relay failed: {kind}")
        self.proxy.stats.add_error(f"conn {self.conn_id}: {kind}")

    def shutdown(self) -> None:
        """Stop reading, hand over what is already due, close both sides."""
        self.closing = True
        self._cancel_tasks()
        self.up.flush_due()
        self.down.flush_due()
        self._close_all()

    def _cancel_tasks(self) -> None:
        for task in self.tasks:
            task.cancel()

    def _close_all(self) -> None:
        for writer in (self.client_writer, self.upstream_writer):
            if writer is not None and not writer.transport.is_closing():
                writer.close()

    async def _close_and_flush(self) -> None:
        # close() keeps flushing the transport's buffer; waiting for that (bounded) keeps the
        # connection "active" until its bytes reach the kernel, and shutdown from dropping them.
        self._close_all()
        writers = [w for w in (self.client_writer, self.upstream_writer) if w is not None]
        waits = [asyncio.create_task(_quietly(w.wait_closed())) for w in writers]
        await asyncio.wait(waits, timeout=SHUTDOWN_GRACE_S)
        for writer, wait in zip(writers, waits, strict=True):
            if not wait.done():  # the peer stopped reading: give up on the rest
                wait.cancel()
                writer.transport.abort()

    def set_read_size(self, read_bytes: int) -> None:
        self.up.read_bytes = self.down.read_bytes = read_bytes  # also each write's bound
        _set_read_size(self.client_writer, read_bytes)
        _set_read_size(self.upstream_writer, read_bytes)

    def hand_over_tap(self) -> None:
        """Tell the decoder this connection is done: what the link did to it first (a
        ``LinkConnection`` line, when the link shapes traffic), then the decoder writes the
        ``TapConnection`` line."""
        tap = self.proxy.tap
        if tap is None:
            return
        now_ns = time.monotonic_ns()
        for pump in (self.up, self.down):
            if pump.tap is not None:
                pump.tap.close(now_ns)
        if self.proxy.shapes_traffic:  # first: readers wait for the conn line
            line = encode_tap_line(self.link_record())
            tap.line(json.dumps(line, separators=(",", ":")))
        tap.conn_done(self.conn_id, self.opened_ns, now_ns)

    def link_record(self) -> LinkConnection:
        return LinkConnection(
            self.conn_id, self.opened_ns, _link_side(self.up.queue), _link_side(self.down.queue)
        )


def _link_side(queue: DelayQueue) -> LinkSide:
    trace = queue.delivered
    return LinkSide(
        peak_queued_bytes=queue.peak_queued_bytes,
        delivered=DeliveryTrace(trace.origin_ns or 0, trace.bucket_ns, tuple(trace.buckets)),
    )


def _open_counter(path: str, sock: socket.socket, tap_file: IO[str] | None) -> ByteCounter:
    try:
        return ByteCounter(path)
    except OSError as exc:
        sock.close()
        if tap_file is not None:
            tap_file.close()
        raise TopologyError(
            f"cannot create the byte counter {path}: {exc.strerror or exc}"
        ) from exc


class DelayLine:
    """The proxy: ``await start()`` (returns the port), ``await aclose()`` to stop cleanly."""

    def __init__(self, config: ProxyConfig) -> None:
        self.config = config
        self.bottlenecks = (bottleneck_for(config, "up"), bottleneck_for(config, "down"))
        # Only a link with a rate or jitter has more to tell than a fixed delay (a link line),
        # unless a live count was asked for: then the delivery trace is the record's series.
        self.shapes_traffic = (
            any(self.bottlenecks) or config.link.jitter_ms > 0 or config.counter_path is not None
        )
        self.counter: ByteCounter | None = None  # opened in start()
        self.stats = ProxyStats(bottlenecks=self.bottlenecks)
        self.port = 0
        self._acceptor: Acceptor | None = None
        self._starting: set[asyncio.Future[None]] = set()
        self._conns: dict[_Connection, asyncio.Task[None]] = {}
        self._next_id = 0
        self._read_size = config.read_bytes  # what every transport reads now (fit_read_sizes)
        self.tap: TapChannel | None = None
        self.budget = Budget(config.max_buffered_bytes)
        self._refusals = QuietLog(_log)
        self._fd_trouble = QuietLog(_log)
        self.sleeper: Sleeper = SpinSleeper()  # replaced by the best available in start()

    async def start(self) -> int:
        """Listen (and open the tap file); TopologyError naming what failed."""
        config = self.config
        fd_warning = ensure_fd_room(config.max_connections)
        if fd_warning is not None:
            _log(fd_warning)
        tap_file: IO[str] | None = None
        if config.tap_path:
            try:
                tap_file = open(config.tap_path, "a", encoding="utf-8")  # noqa: SIM115
            except OSError as exc:
                raise TopologyError(
                    f"cannot open tap file {config.tap_path}: {exc.strerror or exc}"
                ) from exc
        try:
            sock = listen_socket(config.listen_host, config.listen_port)
        except OSError as exc:
            if tap_file is not None:
                tap_file.close()
            where = f"{config.listen_host}:{config.listen_port}"
            raise TopologyError(f"cannot listen on {where}: {exc.strerror or exc}") from exc
        if config.counter_path:
            self.counter = _open_counter(config.counter_path, sock, tap_file)
        if tap_file is not None:
            with tap_file:  # the decoder appends through its own copy of the descriptor
                self.tap = TapChannel.open(tap_file.fileno(), config.read_bytes)
        self.port = sock.getsockname()[1]
        self._acceptor = Acceptor(sock, self._adopt, self._accept_failed)
        self._acceptor.start()
        self.sleeper = make_sleeper()  # chosen once: a timerfd on Linux, else sleep + spin
        return self.port

    def dial_failed(self, exc: OSError) -> None:
        self.stats.dial_errors += 1
        self._fd_trouble(
            f"cannot connect upstream: {exc.strerror or exc} ({self.stats.active} open; "
            "raise `ulimit -n` or lower --max-connections); closing those client connections"
        )

    def _accept_failed(self, exc: OSError) -> None:
        self.stats.accept_errors += 1
        self._fd_trouble(
            f"cannot accept new connections: {exc.strerror or exc} "
            f"({self.stats.active} open; raise `ulimit -n` or lower --max-connections); "
            "they wait in the listen backlog"
        )

    def _adopt(self, sock: socket.socket) -> None:
        task = asyncio.ensure_future(self._start_connection(sock))
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _start_connection(self, sock: socket.socket) -> None:
        try:
            reader, writer = await open_stamped(sock=sock, limit=self.config.read_bytes)
        except OSError as exc:
            sock.close()
            self._accept_failed(exc)
            return
        await self._accept(reader, writer)

    async def _accept(self, reader: StampedReader, writer: asyncio.StreamWriter) -> None:
        if self.stats.active >= self.config.max_connections:
            self.stats.refused_connections += 1
            self._refusals(
                f"refused a connection: {self.stats.active} open, the limit is "
                f"--max-connections {self.config.max_connections} "
                f"({self.stats.refused_connections} refused so far)"
            )
            writer.transport.abort()
            return
        self._next_id += 1
        self.stats.accepted += 1
        self.stats.active += 1
        conn = _Connection(self, self._next_id, reader, writer)
        task = asyncio.current_task()
        assert task is not None
        self._conns[conn] = task
        await conn.run()

    def connection_done(self, conn: _Connection) -> None:
        if self._conns.pop(conn, None) is not None:
            self.stats.active -= 1
            conn.up.release_budget()
            conn.down.release_budget()
            conn.hand_over_tap()
            self.fit_read_sizes()

    def fit_read_sizes(self) -> int:
        """Bound each loop turn's read work while connections share the loop (see
        ``SHARED_READ_BYTES``); a connection alone reads ``read_bytes`` at a time."""
        read_bytes = self.config.read_bytes
        shared = min(read_bytes, SHARED_READ_BYTES) if len(self._conns) > 1 else read_bytes
        if shared != self._read_size:
            self._read_size = shared
            for conn in self._conns:
                conn.set_read_size(shared)
        return shared

    async def aclose(self) -> None:
        """Stop accepting, flush what is due, close every connection, write final records."""
        if self._acceptor is not None:
            self._acceptor.close()
        for task in list(self._starting):
            if task not in self._conns.values():  # not a connection yet: nothing to flush
                task.cancel()
        for conn in list(self._conns):
            conn.shutdown()
        tasks = list(self._conns.values())
        if tasks:
            await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE_S + 1.0)
        for conn in list(self._conns):  # did not finish in time: record them anyway
            self.connection_done(conn)
        self.stats.buffer_full_pauses = self.budget.pauses
        self._refusals.flush()
        self._fd_trouble.flush()
        if self.tap is not None:
            self.stats.tap_not_decoded_bytes = self.tap.not_decoded_bytes
            line = json.dumps(encode_tap_line(self.stats.totals()), separators=(",", ":"))
            problem = await self.tap.aclose(line)
            if problem is not None:
                _log(problem)
            self.tap = None
        self.sleeper.close()


async def serve_proxy(
    config: ProxyConfig,
    on_ready: Callable[[int], None] | None = None,
    stop: asyncio.Event | None = None,
) -> ProxyStats:
    """Run a delay line until ``stop`` is set (default: until SIGINT/SIGTERM).

    ``on_ready(port)`` is called once the socket listens. Raises TopologyError when it
    cannot listen. Returns the final counters after a clean shutdown.
    """
    proxy = DelayLine(config)
    await proxy.start()
    apply_gc_lever()
    own_stop = stop is None
    stop_event = asyncio.Event() if stop is None else stop
    if own_stop:
        _install_signal_handlers(stop_event)
    try:
        if on_ready is not None:
            on_ready(proxy.port)
        await stop_event.wait()
    finally:
        if own_stop:
            _remove_signal_handlers()
        await proxy.aclose()
    return proxy.stats


GC_ENV = "KIT_DELAYLINE_GC"  # "freeze" or "off": a lever for side-by-side measurement


def apply_gc_lever() -> None:
    """``KIT_DELAYLINE_GC=freeze``: move what start-up allocated out of the collector's
    sight (cheaper full collections); ``off``: no cyclic GC at all. Neither is the default:
    measured beside the default in the same minute (``make bench``), neither moved the idle
    delay's p50/p99 beyond noise; a collection here is rare (the hot path makes no cycles)."""
    lever = os.environ.get(GC_ENV, "")
    if lever in ("freeze", "off"):
        gc.collect()
        gc.freeze()
    if lever == "off":
        gc.disable()


def _install_signal_handlers(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)  # only possible in the main thread


def _remove_signal_handlers() -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(sig)


def describe(config: ProxyConfig, port: int) -> str:
    return (
        f"delay line listening on {config.listen_host}:{port} -> "
        f"{config.upstream_host}:{config.upstream_port}, delay up "
        f"{config.link.delay_up_ms:g} ms, down {config.link.delay_down_ms:g} ms"
        f"{link_text(config.link)}"
    )
