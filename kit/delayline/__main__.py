"""``python -m kit.delayline --config '<ProxyJob as JSON>'``: one delay line as a process.

A process of the kit's process protocol (``kit.protocol``,
``docs/process-protocol.md``): once listening, its ready line; SIGTERM/SIGINT stop accepting,
flush, close, write the tap records, print the result line (the proxy's ``ProxyTotals``) and
exit 0. A bad config exits 2, an address it cannot listen on 3, each with one error line.
Each line of stdin is a ``LinkJob``: the link from then on (``kit proxy --control``).
Human-readable lines (warnings, upstream errors) go to stderr. The compiled delay line
(``linkd/``) is the same program in Rust; this one is its fallback and the reference of the
schedule's vectors.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from typing import BinaryIO

from kit import __version__
from kit._proto import worker_pb2 as pb
from kit.delayline.priority import raise_priority
from kit.delayline.relay import ProxyStats, serve_proxy, startup_warnings
from kit.delayline.schedule import LIVE
from kit.errors import UsageError
from kit.plan.jobs import job_link, parse_job, proxy_config
from kit.plan.processes import ProxyConfig
from kit.plan.trial import Link
from kit.protocol import child_main
from kit.results.records import ProxyTotals

STACK = "kit.delayline"


def serve(job: pb.ProxyJob, ready: Callable[[int], None]) -> ProxyTotals:
    config = proxy_config(job)
    for line in startup_warnings(config):
        print(line, file=sys.stderr, flush=True)
    refused = raise_priority()
    if refused is not None:
        print(f"{STACK}: {refused}", file=sys.stderr, flush=True)
    return asyncio.run(_serve_following_stdin(config, ready)).totals()


async def _serve_following_stdin(config: ProxyConfig, ready: Callable[[int], None]) -> ProxyStats:
    loop = asyncio.get_running_loop()
    follow_link_changes(sys.stdin.buffer, lambda link: loop.call_soon_threadsafe(LIVE.change, link))
    return await serve_proxy(config, on_ready=ready)


def follow_link_changes(stream: BinaryIO, apply: Callable[[Link], object]) -> None:
    """Read ``LinkJob`` lines from ``stream`` on a daemon thread and ``apply`` each link; a
    line that does not decode is told on stderr and skipped (the kit sends checked ones)."""

    def follow() -> None:
        for raw in stream:
            if not raw.strip():
                continue
            try:
                link = job_link(parse_job(raw.decode("utf-8", "replace"), pb.LinkJob(), "stdin"))
            except UsageError as exc:
                print(f"{STACK}: {exc}", file=sys.stderr, flush=True)
                continue
            apply(link)

    threading.Thread(target=follow, name="kit-link-changes", daemon=True).start()


def main() -> int:
    return child_main(pb.ProxyJob, serve, STACK, __version__, who="kit.delayline")


if __name__ == "__main__":
    sys.exit(main())
