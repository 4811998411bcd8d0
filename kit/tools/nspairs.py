"""Connected socket pairs across the packet link's namespaces (one end opened in each of a
forwarder's namespaces with ``setns``), the blocking 1-byte ping-pong over them, and a
forwarder's totals: shared by the packet-link benches (``packetbench``, ``fwdbench``)."""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

from kit.delayline.netns import CLIENT_NS_FD, SERVER_NS_FD, inside
from kit.plan.packet import SERVER_ADDR
from kit.results.codec import from_json
from kit.results.records import PacketTotals
from kit.tools.pingpong import PING_TIMEOUT_S
from kit.topology.processes import Child


@dataclass(frozen=True)
class PingPair:
    """A connected ping-pong pair: ``client`` sends, ``echo`` answers."""

    client: socket.socket
    echo: socket.socket


def pair_of(listener: socket.socket, client: socket.socket) -> PingPair:
    """``client`` (connecting) and the end ``listener`` accepts, as a pair with no Nagle."""
    listener.settimeout(10)
    echo, _ = listener.accept()
    listener.close()
    for sock in (client, echo):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(PING_TIMEOUT_S)
    return PingPair(client, echo)


def packet_pair(forwarder_pid: int, rcvbuf: int = 0) -> PingPair:
    """A connected pair across the packet link (``rcvbuf``: the client end's SO_RCVBUF,
    set before it connects; 0: autotuned)."""
    with ns_handle(forwarder_pid, SERVER_NS_FD) as server_ns, inside(server_ns):
        listener = socket.create_server((SERVER_ADDR, 0))
    port = listener.getsockname()[1]
    with ns_handle(forwarder_pid, CLIENT_NS_FD) as client_ns, inside(client_ns):
        client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        client.settimeout(10)
        client.connect((SERVER_ADDR, port))
    return pair_of(listener, client)


@contextlib.contextmanager
def ns_handle(forwarder_pid: int, ns_fd: int) -> Iterator[int]:
    """A handle of one of the forwarder's namespaces, held while in use."""
    fd = os.open(f"/proc/{forwarder_pid}/fd/{ns_fd}", os.O_RDONLY)
    try:
        yield fd
    finally:
        os.close(fd)


def ping_burst(pair: PingPair, pings: int, out: list[float]) -> None:
    """``pings`` blocking round trips (ms, appended to ``out``), 1 ms apart."""
    for _ in range(pings):
        t0 = time.perf_counter_ns()
        pair.client.send(b"p")
        if not pair.echo.recv(64):
            raise OSError("the echo closed the connection")
        pair.echo.send(b"p")
        if not pair.client.recv(64):
            raise OSError("the echo closed the connection")
        out.append((time.perf_counter_ns() - t0) / 1e6)
        time.sleep(0.001)


def forwarder_totals(child: Child) -> PacketTotals | None:
    """Stop a forwarder and read its ``PacketTotals`` (None: it had none)."""
    child.close()
    final = child.final
    data = getattr(final, "data", None)
    return None if data is None else from_json(PacketTotals, data, "forwarder result")
