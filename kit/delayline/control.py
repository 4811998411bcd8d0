"""``kit proxy --control HOST:PORT``: a small HTTP JSON API to read and change the running
delay line's link (delay, jitter, rate), like toxiproxy's.

- ``GET /link``: the link now, ``{"delay_up_ms": .., "delay_down_ms": .., "jitter_ms": ..,
  "rate_up_bits_s": .., "rate_down_bits_s": .., "changes": N}``.
- ``POST /link`` with a JSON object of the fields to change (and ``rtt_ms``, split evenly,
  ``rate_bits_s`` for both directions): the new link, or 400 with ``{"error": ...}``.

It runs on a thread of the kit's process (``kit proxy``), beside the delay line it started
(the compiled line or the Python one: one API, one set of refusals, whichever runs). A
change is checked here, as the kit's ``Link``, and handed to the line (``apply``: one
``LinkJob`` on its stdin), which changes its queues and bottlenecks between two chunks.
Every change is announced with its time and appended to the tap file as a ``LinkChange``
line. Loopback only: a control port is not something to expose.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kit.capture.tapfile import encode_tap_line
from kit.errors import KitError, TopologyError, UsageError
from kit.plan.processes import is_loopback_host
from kit.plan.trial import Link, is_number
from kit.plan.units import format_rate
from kit.results.records import LinkChange

FIELDS = ("delay_up_ms", "delay_down_ms", "jitter_ms", "rate_up_bits_s", "rate_down_bits_s")
MAX_BODY_BYTES = 4096


def link_state(link: Link, changes: int) -> dict[str, Any]:
    return {**{name: getattr(link, name) for name in FIELDS}, "changes": changes}


def changed_link(link: Link, started: Link, body: dict[str, Any]) -> Link:
    """``link`` with the fields of ``body`` changed; ``UsageError`` naming what is wrong. A
    rate changes only where the line ``started`` with a bottleneck."""
    updates = dict(body)
    for name, value in updates.items():  # JSON's true and false are not numbers
        if not is_number(value) and not (value is None and name.startswith("rate_")):
            raise UsageError(f"{name}: {json.dumps(value)} is not a number")
    if "rtt_ms" in updates:
        rtt = updates.pop("rtt_ms")
        updates.update(delay_up_ms=rtt / 2, delay_down_ms=rtt / 2)
    if "rate_bits_s" in updates:
        rate = updates.pop("rate_bits_s")
        updates.update(rate_up_bits_s=rate, rate_down_bits_s=rate)
    unknown = sorted(set(updates) - set(FIELDS))
    if unknown:
        raise UsageError(
            f"{', '.join(unknown)}: not a field of the stream link (it has "
            f"{', '.join(FIELDS)}, rtt_ms, rate_bits_s; it loses nothing)"
        )
    limited = {
        "up": started.rate_up_bits_s is not None,
        "down": started.rate_down_bits_s is not None or bool(started.rate_steps),
    }
    for direction in ("up", "down"):
        key = f"rate_{direction}_bits_s"
        if key in updates and not limited[direction]:
            raise UsageError(f"{key}: the delay line started without a rate {direction}")
    return dataclasses.replace(link, **updates)


class Control:
    """The API's state: the live link, the change count, where changes go and are told."""

    def __init__(
        self,
        started: Link,
        apply: Callable[[Link], None],
        tap_path: str | None,
        announce: Callable[[str], None],
    ) -> None:
        self.started, self.link, self._apply = started, started, apply
        self.tap_path, self.announce = tap_path, announce
        self.changes = 0
        self.lock = threading.Lock()

    def current(self) -> Link:
        return self.link

    def apply(self, body: dict[str, Any]) -> Link:
        with self.lock:
            link = changed_link(self.link, self.started, body)
            self._apply(link)
            self.link = link
            self.changes += 1
            change = LinkChange(time.monotonic_ns(), time.strftime("%Y-%m-%dT%H:%M:%S%z"), link)
            self._record(change)
        return link

    def _record(self, change: LinkChange) -> None:
        link = change.link
        text = (
            f"{change.at} link changed: delay up {link.delay_up_ms:g} ms, down "
            f"{link.delay_down_ms:g} ms, jitter {link.jitter_ms:g} ms, rate up "
            f"{_rate(link.rate_up_bits_s)}, down {_rate(link.rate_down_bits_s)}"
        )
        for line in textwrap.wrap(text, ANNOUNCE_WIDTH, subsequent_indent="  "):
            self.announce(line)
        if self.tap_path is not None:
            line = json.dumps(encode_tap_line(change), separators=(",", ":")) + "\n"
            with open(self.tap_path, "a", encoding="utf-8") as tap:  # one append: one write
                tap.write(line)


ANNOUNCE_WIDTH = 100  # every line the kit prints fits this many columns


def _rate(bits_s: float | None) -> str:
    return "unlimited" if bits_s is None else format_rate(bits_s)


def _handler(control: Control) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.rstrip("/") != "/link":
                self._send(404, {"error": "the API is GET/POST /link"})
                return
            self._send(200, link_state(control.current(), control.changes))

        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/link":
                self._send(404, {"error": "the API is GET/POST /link"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                if not 0 < length <= MAX_BODY_BYTES:
                    raise UsageError(f"a JSON object of at most {MAX_BODY_BYTES} bytes, please")
                body = json.loads(self.rfile.read(length))
                if not isinstance(body, dict):
                    raise UsageError("the body must be a JSON object")
                link = control.apply(body)
            except (KitError, ValueError) as exc:
                self._send(400, {"error": str(exc)})
                return
            self._send(200, link_state(link, control.changes))

        def _send(self, status: int, data: dict[str, Any]) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return None  # changes are announced by Control; requests are not news

    return Handler


def check_control_host(host: str) -> None:
    if not is_loopback_host(host):
        raise UsageError(f"--control: {host} is not a loopback address (the API has no auth)")


def start_control(host: str, port: int, control: Control) -> ThreadingHTTPServer:
    """Serve the API on a daemon thread; ``TopologyError`` when it cannot listen."""
    check_control_host(host)
    try:
        server = ThreadingHTTPServer((host, port), _handler(control))
    except OSError as exc:
        raise TopologyError(f"--control: cannot listen on {host}:{port} ({exc.strerror})") from None
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="kit-control", daemon=True).start()
    return server
