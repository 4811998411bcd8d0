"""``python -m kit.delayline --config '<ProxyJob as JSON>'``: one delay line as a process.

A process of the kit's process protocol (``kit.protocol``,
``docs/process-protocol.md``): once listening, its ready line; SIGTERM/SIGINT stop accepting,
flush, close, write the tap records, print the result line (the proxy's ``ProxyTotals``) and
exit 0. A bad config exits 2, an address it cannot listen on 3, each with one error line.
Each line of stdin is a ``LinkJob``: the link from then on (``kit proxy --control``),
answered once applied with ``{"changed": N}``.
Human-readable lines (warnings, upstream errors) go to stderr. The compiled delay line
(``linkd/``) is the same program in Rust; this one is its fallback and the reference of the
schedule's vectors.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable
from typing import cast

from kit import __version__
from kit._proto import worker_pb2 as pb
from kit.delayline.priority import raise_priority
from kit.delayline.relay import ProxyStats, serve_proxy
from kit.delayline.schedule import LIVE
from kit.errors import UsageError
from kit.plan.jobs import job_link, parse_job, proxy_config
from kit.plan.processes import ProxyConfig
from kit.plan.trial import Link
from kit.protocol import changed_line, child_main, emit
from kit.results.records import ProxyTotals

STACK = "kit.delayline"


def serve(job: pb.ProxyJob, ready: Callable[[int], None]) -> ProxyTotals:
    config = proxy_config(job)
    refused = raise_priority()
    if refused is not None:
        print(f"{STACK}: {refused}", file=sys.stderr, flush=True)
    return asyncio.run(_serve_following_stdin(config, ready)).totals()


async def _serve_following_stdin(config: ProxyConfig, ready: Callable[[int], None]) -> ProxyStats:
    loop = asyncio.get_running_loop()
    changes = 0

    def change(link: Link) -> None:  # on the loop, between two chunks
        nonlocal changes
        LIVE.change(link)
        changes += 1
        emit(changed_line(changes))

    follow_link_changes(0, lambda link: loop.call_soon_threadsafe(change, link))
    return await serve_proxy(config, on_ready=ready)


def follow_link_changes(fd: int, apply: Callable[[Link], object]) -> None:
    """Read ``LinkJob`` lines from ``fd`` on a daemon thread and ``apply`` each link; a line
    that does not decode is told on stderr and skipped (the kit sends checked ones). Raw
    ``os.read``: a buffered stdin's lock, held by a daemon thread, fails the interpreter's
    exit."""

    def follow() -> None:
        pending = b""
        while chunk := _read(fd):
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                if raw.strip():
                    _apply_line(raw, apply)

    threading.Thread(target=follow, name="kit-link-changes", daemon=True).start()


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:
        return b""


def _apply_line(raw: bytes, apply: Callable[[Link], object]) -> None:
    try:
        job = parse_job(raw.decode("utf-8", "replace"), pb.LinkJob(), "stdin")
    except UsageError as exc:
        print(f"{STACK}: {exc}", file=sys.stderr, flush=True)
        return
    apply(job_link(cast(pb.LinkJob, job)))


def main() -> int:
    return child_main(pb.ProxyJob, serve, STACK, __version__, who="kit.delayline")


if __name__ == "__main__":
    sys.exit(main())
