"""A hostile downloader: raw HTTP/2 that opens Download calls and never reads them.

It never sends a WINDOW_UPDATE, so a server can send each call at most the default 65535-byte
window: whatever else a call costs the server is what the server built and holds for it.
``hold`` returns each call's grpc-status (RESOURCE_EXHAUSTED = 8 for a call the server
refused at once; None for one still open) and the server tree's peak RSS while held.

Run by hand against any server: ``python -m tests.integration.hostile_support PORT``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

import h2.config
import h2.connection
import h2.events

from kit._proto import throughput_pb2 as pb

DOWNLOAD_PATH = "/kit.throughput.Throughput/Download"


@dataclass
class Held:
    statuses: dict[int, int | None] = field(default_factory=dict)
    peak_rss_bytes: int = 0

    @property
    def refused(self) -> int:
        return sum(1 for s in self.statuses.values() if s == 8)


def tree_rss_bytes(pid: int) -> int:
    """The resident memory of ``pid`` and every process below it (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def hold(
    port: int,
    calls: int = 40,
    message_bytes: int = 64 << 20,
    hold_s: float = 15.0,
    server_pid: int | None = None,
    host: str = "127.0.0.1",
) -> Held:
    """Open ``calls`` Download calls on one connection, read none of them for ``hold_s``."""
    sock = socket.create_connection((host, port), timeout=10)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    request = pb.DownloadRequest(message_count=0, message_bytes=message_bytes).SerializeToString()
    held = Held()
    for _ in range(calls):
        stream = conn.get_next_available_stream_id()
        conn.send_headers(
            stream,
            [
                (":method", "POST"),
                (":scheme", "http"),
                (":path", DOWNLOAD_PATH),
                (":authority", f"{host}:{port}"),
                ("content-type", "application/grpc"),
                ("te", "trailers"),
            ],
        )
        conn.send_data(stream, b"\x00" + struct.pack(">I", len(request)) + request, end_stream=True)
        held.statuses[stream] = None
    sock.sendall(conn.data_to_send())
    end = time.monotonic() + hold_s
    sock.settimeout(0.2)
    while time.monotonic() < end:  # bounded by hold_s
        try:
            data = sock.recv(1 << 20)
        except TimeoutError:
            data = b""
        except ConnectionError:  # the server hung up: what it said before counts
            break
        else:
            if not data:
                break
        for event in conn.receive_data(data) if data else ():
            if isinstance(event, h2.events.ResponseReceived | h2.events.TrailersReceived):
                for name, value in event.headers:
                    if name in (b"grpc-status", "grpc-status"):
                        held.statuses[event.stream_id] = int(value)
        out = conn.data_to_send()  # SETTINGS and PING acks only: never a WINDOW_UPDATE
        if out:
            try:
                sock.sendall(out)
            except ConnectionError:
                break
        if server_pid is not None:
            held.peak_rss_bytes = max(held.peak_rss_bytes, tree_rss_bytes(server_pid))
    sock.close()
    return held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--message-bytes", type=int, default=64 << 20)
    parser.add_argument("--hold", type=float, default=15.0)
    parser.add_argument("--pid", type=int, help="the server's pid, to read its tree's RSS")
    args = parser.parse_args()
    held = hold(args.port, args.calls, args.message_bytes, args.hold, args.pid)
    print(
        json.dumps(
            {
                "refused": held.refused,
                "statuses": list(held.statuses.values()),
                "peak_rss_mib": round(held.peak_rss_bytes / 2**20, 1),
                "pid": os.getpid(),
            }
        )
    )


if __name__ == "__main__":
    main()
