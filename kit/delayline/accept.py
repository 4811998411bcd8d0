"""The delay line's listening socket and accept loop.

asyncio's own server (``start_server``) handles a failed ``accept()`` badly when the
process is out of file descriptors: it reports each failure with a traceback, keeps trying
the rest of its backlog-sized batch, and schedules one retry per failure, so a proxy at
its descriptor limit writes thousands of tracebacks a second (and more at shutdown, when
the retries find the socket closed). This loop accepts a bounded batch per wake-up; on
EMFILE/ENFILE/ENOBUFS/ENOMEM it stops reading the socket, tells ``on_trouble`` once, and
tries again after ``ACCEPT_RETRY_S``: connections meanwhile wait in the kernel's backlog.
(Any other accept error is handled the same way rather than raised into the event loop.)
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable

ACCEPT_BATCH = 64
ACCEPT_RETRY_S = 0.5
LISTEN_BACKLOG = 1024


def listen_socket(host: str, port: int) -> socket.socket:
    """A non-blocking listening TCP socket on ``host:port`` (OSError if impossible)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    # One socket: for a name with both (localhost), IPv4 first, where clients dial by default.
    infos.sort(key=lambda info: info[0] != socket.AF_INET)
    family, kind, proto, _name, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(LISTEN_BACKLOG)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


class Acceptor:
    """Calls ``on_socket(conn)`` for each accepted connection; ``close()`` stops it."""

    def __init__(
        self,
        sock: socket.socket,
        on_socket: Callable[[socket.socket], None],
        on_trouble: Callable[[OSError], None],
    ) -> None:
        self.sock, self.on_socket, self.on_trouble = sock, on_socket, on_trouble
        self._loop = asyncio.get_running_loop()
        self._retry: asyncio.TimerHandle | None = None
        self._closed = False

    def start(self) -> None:
        self._retry = None
        if not self._closed:
            self._loop.add_reader(self.sock.fileno(), self._ready)

    def _ready(self) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                conn, _addr = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:  # out of descriptors (or memory): wait, say so once
                self._pause(exc)
                return
            conn.setblocking(False)
            self.on_socket(conn)

    def _pause(self, exc: OSError) -> None:
        self._loop.remove_reader(self.sock.fileno())
        self.on_trouble(exc)
        if self._retry is None and not self._closed:
            self._retry = self._loop.call_later(ACCEPT_RETRY_S, self.start)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._retry is not None:
            self._retry.cancel()
        with contextlib.suppress(ValueError, OSError):
            self._loop.remove_reader(self.sock.fileno())
        self.sock.close()
