"""``python -m kit.tools.soak``: minutes of mixed traffic through a real delay-line process.

Not part of CI (``make soak``). A client and a server in this process talk through
``python -m kit.delayline`` on 127.0.0.1 with a mix of connection shapes: bulk both ways at
once, request then response, server first, tiny exchanges, slow readers (backpressure) and
clients that reset mid-transfer. Every byte stream carries an end-to-end SHA-256: the sender
hashes what it sent, the receiver what it got, and a connection whose hashes or lengths
differ is a corruption. Beside that mix, through the same proxy: a flood of 17-byte HTTP/2
PING frames (the tap's worst case), a client that sends and never reads (its queues fill
to the cap and stay there), and a neighbour's ping-pong, in a process of its own, whose
RTT minus the configured RTT (and minus the same ping-pong without the proxy) is the delay
error the mix causes. At the end it prints bytes relayed, connections, errors, the proxy's
peak memory, peak buffered bytes and file descriptors, the neighbour's delay error and what
the tap could not decode, and exits non-zero if anything was lost, corrupted or leaked.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import random
import socket
import statistics
import struct
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kit.capture.tapfile import TapLine, read_tap
from kit.errors import KitError, RecordsError
from kit.plan.processes import ProxyConfig
from kit.plan.programs import proxy_program
from kit.plan.trial import Link
from kit.plan.units import MIB, parse_duration_ms, parse_size_bytes
from kit.quantile import percentile
from kit.results.records import ProxyTotals
from kit.tools.tapbench import flood
from kit.topology.processes import Child, spawn

HEADER = struct.Struct(">4sBIQQ")  # magic, kind, conn id, up bytes, down bytes
MAGIC = b"SOAK"
POOL = random.Random(5).randbytes(4 * MIB + 65536)  # streams are windows into this pool
BLOCK = 64 * 1024
KINDS = {  # name: (kind id, weight, up bytes range, down bytes range)
    "bulk-both": (0, 3, (1 * MIB, 24 * MIB), (1 * MIB, 24 * MIB)),
    "request-response": (1, 3, (1, 256 * 1024), (1, 4 * MIB)),
    "server-first": (2, 2, (1, 2 * MIB), (1, 2 * MIB)),
    "tiny": (3, 10, (1, 200), (1, 200)),
    "slow-reader": (4, 1, (1, 100), (8 * MIB, 16 * MIB)),
    "reset": (5, 1, (64 * 1024, 4 * MIB), (4 * MIB, 8 * MIB)),
}
KIND_NAMES = {spec[0]: name for name, spec in KINDS.items()}
# Side traffic is told apart by its first byte (a soak stream starts with MAGIC's "S").
FLOOD_ROLE, NEVER_READ_ROLE, ECHO_ROLE = b"P", b"n", b"e"  # "P": the HTTP/2 preface
SIDE_ROLES = (FLOOD_ROLE, NEVER_READ_ROLE, ECHO_ROLE)
NEIGHBOUR_PINGS = 200


def stream_block(seed: int, offset: int, size: int) -> memoryview:
    """Bytes [offset, offset+size) of the stream named by ``seed`` (size <= BLOCK)."""
    start = (seed * 7919 + offset) % (len(POOL) - BLOCK)
    return memoryview(POOL)[start : start + size]


async def send_stream(
    writer: asyncio.StreamWriter, seed: int, total: int, pause_s: float = 0.0
) -> str:
    digest, sent = hashlib.sha256(), 0
    while sent < total:
        block = stream_block(seed, sent, min(BLOCK, total - sent))
        digest.update(block)
        writer.write(block)
        await writer.drain()
        sent += len(block)
        if pause_s:
            await asyncio.sleep(pause_s)
    return digest.hexdigest()


async def recv_stream(reader: asyncio.StreamReader, pause_s: float = 0.0) -> tuple[int, str]:
    digest, got = hashlib.sha256(), 0
    while chunk := await reader.read(BLOCK):
        digest.update(chunk)
        got += len(chunk)
        if pause_s:
            await asyncio.sleep(pause_s)
    return got, digest.hexdigest()


@dataclass
class Ledger:
    """What each end sent and received, per connection id, and the soak's counters."""

    sent: dict[tuple[int, str], tuple[int, str]] = field(default_factory=dict)
    received: dict[tuple[int, str], tuple[int, str]] = field(default_factory=dict)
    connections: Counter[str] = field(default_factory=Counter)
    expected_resets: int = 0
    unexpected: list[str] = field(default_factory=list)

    def note_error(self, message: str) -> None:
        if len(self.unexpected) < 50:
            self.unexpected.append(message)
        else:
            self.unexpected[-1] = f"... and more: {message}"

    def corrupt(self) -> list[str]:
        """Connections whose received (length, SHA-256) differs from what was sent."""
        return [
            f"conn {key[0]} {key[1]}: sent {sent} got {self.received.get(key)}"
            for key, sent in sorted(self.sent.items())
            if self.received.get(key) != sent
        ]


# -- the server side ------------------------------------------------------------------------


def make_server(ledger: Ledger) -> Any:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        kind = -1
        try:
            first = await reader.readexactly(1)
            if first in SIDE_ROLES:  # the side traffic: flood, never-reader, neighbour
                await serve_side(reader, writer, first)
                return
            head = first + await reader.readexactly(HEADER.size - 1)
            magic, kind, cid, _up, down = HEADER.unpack(head)
            if magic != MAGIC:
                raise ValueError(f"bad header {magic!r}")
            await serve_one(reader, writer, ledger, kind, cid, down)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            if KIND_NAMES.get(kind) != "reset":
                ledger.note_error(f"server: {type(exc).__name__}: {exc}")
        except Exception as exc:  # a soak reports every surprise instead of dying
            ledger.note_error(f"server: {type(exc).__name__}: {exc}")
        finally:
            writer.close()

    return handle


async def serve_side(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, role: bytes
) -> None:
    """Echo (the neighbour's pings, the never-reader's bytes) or swallow (the flood)."""
    with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
        if role == ECHO_ROLE:
            writer.write(role)  # the neighbour's first ping
        while data := await reader.read(BLOCK):
            if role != FLOOD_ROLE:
                writer.write(data)
                await writer.drain()


async def serve_one(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    ledger: Ledger,
    kind: int,
    cid: int,
    down: int,
) -> None:
    name, seed = KIND_NAMES[kind], cid * 2 + 1
    if name == "request-response":
        ledger.received[(cid, "up")] = await recv_stream(reader)
        ledger.sent[(cid, "down")] = (down, await send_stream(writer, seed, down))
        writer.write_eof()
    elif name == "server-first":
        ledger.sent[(cid, "down")] = (down, await send_stream(writer, seed, down))
        writer.write_eof()  # half-close first; the client answers after our EOF
        ledger.received[(cid, "up")] = await recv_stream(reader)
    else:
        received, digest = await asyncio.gather(
            recv_stream(reader), send_stream(writer, seed, down)
        )
        if name != "reset":
            ledger.received[(cid, "up")] = received
            ledger.sent[(cid, "down")] = (down, digest)
        writer.write_eof()
    await writer.drain()


# -- the client side ------------------------------------------------------------------------


async def client_one(port: int, ledger: Ledger, rng: random.Random, cid: int) -> None:
    name = rng.choices(list(KINDS), weights=[spec[1] for spec in KINDS.values()])[0]
    kind, _, up_range, down_range = KINDS[name]
    up, down = rng.randint(*up_range), rng.randint(*down_range)
    ledger.connections[name] += 1
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(HEADER.pack(MAGIC, kind, cid, up, down))
        if name == "reset":
            await reset_midway(reader, writer, cid, up)
            ledger.expected_resets += 1
            return
        await talk(reader, writer, ledger, name, cid, up)
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        ledger.note_error(f"client conn {cid} ({name}): {type(exc).__name__}: {exc}")
    finally:
        writer.close()


async def talk(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    ledger: Ledger,
    name: str,
    cid: int,
    up: int,
) -> None:
    seed = cid * 2
    if name == "request-response":
        ledger.sent[(cid, "up")] = (up, await send_stream(writer, seed, up))
        writer.write_eof()
        ledger.received[(cid, "down")] = await recv_stream(reader)
    elif name == "server-first":
        ledger.received[(cid, "down")] = await recv_stream(reader)
        ledger.sent[(cid, "up")] = (up, await send_stream(writer, seed, up))
        writer.write_eof()
    else:
        pause = 0.002 if name == "slow-reader" else 0.0

        async def send_then_eof() -> str:
            digest = await send_stream(writer, seed, up)
            writer.write_eof()
            return digest

        digest, received = await asyncio.gather(send_then_eof(), recv_stream(reader, pause))
        ledger.sent[(cid, "up")] = (up, digest)
        ledger.received[(cid, "down")] = received


async def reset_midway(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, cid: int, up: int
) -> None:
    sender = asyncio.create_task(send_stream(writer, cid * 2, up))
    with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
        await reader.readexactly(256 * 1024)
    sender.cancel()
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
    with contextlib.suppress(asyncio.CancelledError, ConnectionError):
        await sender


# -- side traffic: a frame flood, a client that never reads, a neighbour's ping-pong -------


async def flooder(port: int, ledger: Ledger, deadline: float) -> int:
    """HTTP/2 PING frames, 17 bytes each, as fast as the proxy takes them, until the end."""
    payload, sent = flood("ping", 16 * MIB), 0
    while time.monotonic() < deadline:
        ledger.connections["side-flood"] += 1
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for off in range(0, len(payload), MIB):
                writer.write(payload[off : off + MIB])
                await writer.drain()
            writer.write_eof()
            await reader.read()  # the server closes once it has swallowed everything
            sent += len(payload)
        except ConnectionError as exc:
            ledger.note_error(f"flood: {type(exc).__name__}: {exc}")
        finally:
            writer.close()
    return sent


async def never_reader(port: int, ledger: Ledger, deadline: float) -> int:
    """Sends to an echo and never reads the echo: both queues fill to the cap and stay."""
    ledger.connections["side-never-reads"] += 1
    _reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(NEVER_READ_ROLE)
    block, sent = b"n" * BLOCK, 0
    try:
        while time.monotonic() < deadline:
            if writer.transport.get_write_buffer_size() < 4 * BLOCK:
                writer.write(block)
                sent += len(block)
            else:  # held back, as it should be: wait, without piling up bytes here
                await asyncio.sleep(0.05)
        sent -= writer.transport.get_write_buffer_size()
    except ConnectionError as exc:
        ledger.note_error(f"never-reader: {type(exc).__name__}: {exc}")
    finally:
        writer.transport.abort()
    return sent


async def ping_pong_ms(port: int, pings: int) -> list[float]:
    """A blocking ping-pong in a process of its own (this one is busy with the mix)."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kit.tools.tapbench",
        "pingpong",
        str(port),
        str(pings),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await child.communicate()
    rtts: list[float] = json.loads(out or b"[]")
    return rtts


async def side_traffic(
    port: int, floor: list[float], ledger: Ledger, args: argparse.Namespace
) -> dict[str, Any]:
    deadline = time.monotonic() + args.duration_s
    flood_task = asyncio.create_task(flooder(port, ledger, deadline))
    never_task = asyncio.create_task(never_reader(port, ledger, deadline))
    neighbour: list[float] = []
    await asyncio.sleep(min(1.0, args.duration_s / 4))  # let the mix and the flood build up
    while time.monotonic() < deadline - 2.0 or not neighbour:
        ledger.connections["side-neighbour"] += 1
        neighbour += await ping_pong_ms(port, NEIGHBOUR_PINGS)
    floor_ms = statistics.median(floor) if floor else 0.0
    errors = [r - args.rtt_ms - floor_ms for r in neighbour] or [float("nan")]
    return {
        "flood_bytes": await flood_task,
        "never_reader_bytes_taken": await never_task,
        "neighbour_pings": len(neighbour),
        "neighbour_delay_error_ms": {
            "p50": round(percentile(errors, 50), 3),
            "p99": round(percentile(errors, 99), 3),
            "floor_rtt_ms": round(floor_ms, 3),
        },
    }


# -- the proxy process and its vital signs --------------------------------------------------


@dataclass
class Vitals:
    peak_rss_kib: int = 0
    peak_fds: int = 0
    samples: int = 0

    def sample(self, pid: int) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.peak_rss_kib = max(self.peak_rss_kib, proc_status_kib(pid, "VmHWM"))
            self.peak_fds = max(self.peak_fds, fd_count(pid))
            self.samples += 1


def proc_status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def watch(pid: int, vitals: Vitals, stop_event: asyncio.Event) -> None:
    while not stop_event.is_set():
        vitals.sample(pid)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop_event.wait(), 0.25)


def start_proxy(upstream_port: int, args: argparse.Namespace, tap: Path) -> Child:
    config = ProxyConfig(
        upstream_port=upstream_port,
        link=Link.from_rtt(args.rtt_ms),
        tap_path=str(tap),
        buffer_cap_bytes=args.buffer_cap_bytes,
    )
    return spawn("proxy", proxy_program(), config)


# -- the run ---------------------------------------------------------------------------------


async def workers(port: int, ledger: Ledger, args: argparse.Namespace) -> None:
    deadline = time.monotonic() + args.duration_s
    next_id = iter(range(1, 2**31))

    async def worker(index: int) -> None:
        rng = random.Random(args.seed * 1000 + index)
        while time.monotonic() < deadline:
            try:
                await asyncio.wait_for(client_one(port, ledger, rng, next(next_id)), 120)
            except asyncio.TimeoutError:
                ledger.note_error("a connection made no progress for 120 s")

    await asyncio.gather(*(worker(i) for i in range(args.parallel)))


async def soak(args: argparse.Namespace, tap: Path) -> dict[str, Any]:
    ledger, vitals = Ledger(), Vitals()
    server = await asyncio.start_server(make_server(ledger), "127.0.0.1", 0, backlog=1024)
    proxy = await asyncio.to_thread(start_proxy, server.sockets[0].getsockname()[1], args, tap)
    stop_event = asyncio.Event()
    try:
        fds_start = fd_count(proxy.pid)
        watcher = asyncio.create_task(watch(proxy.pid, vitals, stop_event))
        started = time.monotonic()
        # The same ping-pong without the proxy, before any load: the physical floor.
        floor = await ping_pong_ms(server.sockets[0].getsockname()[1], 50)
        side = asyncio.create_task(side_traffic(proxy.port, floor, ledger, args))
        await workers(proxy.port, ledger, args)
        elapsed = time.monotonic() - started
        side_result = await side
        # Let the proxy close its side of the last connections (a peer that stopped reading
        # gets a bounded grace of 2 s before its connection is aborted).
        settle = time.monotonic() + 5.0
        while fd_count(proxy.pid) > fds_start and time.monotonic() < settle:
            await asyncio.sleep(0.1)
        fds_end = fd_count(proxy.pid)
        stop_event.set()
        await watcher
    finally:
        exit_code = await asyncio.to_thread(proxy.stop)
        proxy.stderr_file.close()
        server.close()
    result = report(ledger, vitals, tap, elapsed, fds_start, fds_end, exit_code)
    return result | side_result


def report(
    ledger: Ledger,
    vitals: Vitals,
    tap: Path,
    elapsed_s: float,
    fds_start: int,
    fds_end: int,
    exit_code: int | None,
) -> dict[str, Any]:
    finals = [line for line in _tap_lines(tap) if isinstance(line, ProxyTotals)]
    final = finals[-1] if finals else None
    relayed = final.bytes_up + final.bytes_down if final else 0
    checked = sum(n for n, _ in ledger.received.values())
    return {
        "duration_s": round(elapsed_s, 1),
        "connections": sum(ledger.connections.values()),
        "by_kind": dict(ledger.connections),
        "proxy_connections": final.connections if final else None,
        "bytes_relayed": relayed,
        "relayed_mib_s": round(relayed / MIB / max(elapsed_s, 1e-9), 1),
        "bytes_checksummed": checked,
        "streams_checked": len(ledger.sent),
        "corrupt_or_lost": ledger.corrupt()[:20],
        "expected_resets": ledger.expected_resets,
        "unexpected_errors": ledger.unexpected,
        "proxy_errors_reported": len(final.errors) if final else 0,
        "proxy_peak_rss_mib": round(vitals.peak_rss_kib / 1024, 1),
        "proxy_peak_buffered_bytes": final.peak_buffered_bytes if final else None,
        "proxy_fds": {"start": fds_start, "end": fds_end, "peak": vitals.peak_fds},
        "proxy_exit_code": exit_code,
        "tap_not_decoded_bytes": final.tap_not_decoded_bytes if final else None,
        "proxy_refused_connections": final.refused_connections if final else None,
    }


def _tap_lines(tap: Path) -> list[TapLine]:
    """The proxy's tap lines; none when it wrote no file (it died: the verdict says so)."""
    try:
        return read_tap(tap)[0]
    except RecordsError:
        return []


def verdict(result: dict[str, Any]) -> list[str]:
    """Reasons the soak failed (empty: it passed)."""
    problems = []
    if result["corrupt_or_lost"]:
        problems.append(f"{len(result['corrupt_or_lost'])}+ streams corrupted or lost")
    if result["unexpected_errors"]:
        problems.append(f"{len(result['unexpected_errors'])} unexpected errors")
    if result["proxy_fds"]["end"] > result["proxy_fds"]["start"]:
        problems.append("the proxy holds more file descriptors than at the start")
    if result["proxy_exit_code"] != 0:
        problems.append(f"the proxy exited with {result['proxy_exit_code']}")
    if result["proxy_connections"] != result["connections"]:
        problems.append("the proxy's connection count differs from the client's")
    return problems


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m kit.tools.soak", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--duration", default="3min", help="how long to generate traffic")
    parser.add_argument("--rtt", default="2ms", help="delay line RTT (split evenly)")
    parser.add_argument("--parallel", type=int, default=24, help="concurrent connections")
    parser.add_argument("--buffer-cap", default="4MiB", help="the proxy's per-direction cap")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    args.duration_s = parse_duration_ms(args.duration, option="--duration") / 1000
    args.rtt_ms = parse_duration_ms(args.rtt, option="--rtt")
    args.buffer_cap_bytes = parse_size_bytes(args.buffer_cap, option="--buffer-cap")
    if not 1 <= args.parallel <= 500:
        parser.error("--parallel: 1..500")
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        with tempfile.TemporaryDirectory(prefix="kit-soak-") as tmp:
            result = asyncio.run(soak(args, Path(tmp) / "tap.jsonl"))
    except KitError as exc:
        print(f"kit.soak: error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(json.dumps(result, indent=2))
    problems = verdict(result)
    print("SOAK " + ("FAILED: " + "; ".join(problems) if problems else "PASSED"), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
