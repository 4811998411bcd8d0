"""Is ``--target HOST:PORT`` an HTTP/2 server? Asked once, before measuring, in seconds.

Without this, a target that refuses, or speaks something else, surfaced as a client's
error naming the delay line's port ("cannot reach 127.0.0.1:<port> within 10 s", after
21 s) or as a 30 s wait. ``answer_problem`` is the pure part: what the first bytes back to
an HTTP/2 client preface say about the server; ``check_target`` the socket shell.
"""

from __future__ import annotations

import socket
import time

from kit.errors import TopologyError

PROBE_TIMEOUT_S = 3.0
# An HTTP/2 client's connection preface, then an empty SETTINGS frame (RFC 9113 3.4).
CLIENT_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
FRAME_HEADER_BYTES = 9
SETTINGS = 4


def answer_problem(answer: bytes) -> str | None:
    """What is wrong with the first bytes a server sent back to the preface (None: it
    opened with a SETTINGS frame on stream 0, as an HTTP/2 server must)."""
    if not answer:
        return "closed the connection without an HTTP/2 answer"
    if CLIENT_PREFACE.startswith(answer[: len(CLIENT_PREFACE)]):
        return "sent the HTTP/2 client preface back (an echo server?), not an HTTP/2 answer"
    if answer.startswith(b"HTTP/"):
        status = answer.split(b"\r\n", 1)[0].decode("ascii", errors="replace")
        return f"answered HTTP/1 ({status!r}), not HTTP/2"
    if len(answer) < FRAME_HEADER_BYTES:
        return f"answered {answer!r}, not an HTTP/2 frame"
    kind, stream = answer[3], int.from_bytes(answer[5:9], "big") & 0x7FFFFFFF
    if kind != SETTINGS or stream != 0:
        return f"answered {answer[:16]!r}, not an HTTP/2 SETTINGS frame"
    return None


def check_target(host: str, port: int, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """``TopologyError`` naming the target and what it answered, unless it speaks HTTP/2."""
    where = f"--target {_address(host, port)}"
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.sendall(CLIENT_PREFACE)
            answer = _first_bytes(sock, time.monotonic() + timeout_s)
    except ConnectionRefusedError:
        raise TopologyError(f"{where}: connection refused (is kit serve running there?)") from None
    except TimeoutError:
        raise TopologyError(f"{where}: no answer within {timeout_s:g} s") from None
    except OSError as exc:
        raise TopologyError(f"{where}: cannot connect: {exc.strerror or exc}") from None
    if answer is None:
        raise TopologyError(
            f"{where}: sent nothing within {timeout_s:g} s of an HTTP/2 preface: "
            "not an HTTP/2 (gRPC) server"
        )
    problem = answer_problem(answer)
    if problem is not None:
        raise TopologyError(f"{where}: {problem}: is it the kit's server (kit serve)?")


def _first_bytes(sock: socket.socket, deadline: float) -> bytes | None:
    """Up to a frame header's worth of the answer; b"" when closed, None when silent."""
    got = b""
    while len(got) < FRAME_HEADER_BYTES:
        left = deadline - time.monotonic()
        if left <= 0:
            return got or None
        sock.settimeout(left)
        try:
            chunk = sock.recv(FRAME_HEADER_BYTES - len(got))
        except TimeoutError:
            return got or None
        except ConnectionResetError:
            return got
        if not chunk:
            return got
        got += chunk
    return got


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
