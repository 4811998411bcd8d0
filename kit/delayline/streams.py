"""asyncio streams whose reader remembers when its bytes arrived in the process.

The delay line stamps each chunk on arrival. Stamping when the reading task resumes charges
the chunk with the turns the event loop spent elsewhere first: beside a max-rate flood on
another connection a neighbour's bytes waited 1-2 turns (~1 ms each) per direction before
the task ran, and were released that much late (+2.6 ms p50 at 10 ms while the writes
themselves were 0.1 ms late). ``StampedReader`` records the clock when the transport hands
it bytes (``feed_data``, one callback after the socket became readable), and the relay
stamps with that. It is the time of the newest bytes in the buffer, so a chunk is never
released before its own arrival + delay.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterable
from typing import SupportsIndex


class StampedReader(asyncio.StreamReader):
    """A StreamReader with ``fed_ns``: the monotonic time of the last ``feed_data``."""

    fed_ns = 0

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        self.fed_ns = time.monotonic_ns()
        super().feed_data(data)

    def feed_eof(self) -> None:
        self.fed_ns = time.monotonic_ns()
        super().feed_eof()


Streams = tuple[StampedReader, asyncio.StreamWriter]


async def open_stamped(
    host: str | None = None,
    port: int | None = None,
    *,
    sock: socket.socket | None = None,
    limit: int,
) -> Streams:
    """``asyncio.open_connection`` (to host:port, or over an accepted ``sock``) with a
    ``StampedReader``."""
    loop = asyncio.get_running_loop()
    reader = StampedReader(limit=limit, loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    if sock is not None:
        transport, _ = await loop.create_connection(lambda: protocol, sock=sock)
    elif host is not None and port is not None:
        transport, _ = await loop.create_connection(lambda: protocol, host, port)
    else:
        raise ValueError("open_stamped needs host and port, or sock")
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)
