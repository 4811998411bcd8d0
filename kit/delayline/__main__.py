"""``python -m kit.delayline --config '<ProxyConfig as JSON>'``: one delay line as a process.

A process of the kit's process protocol (``kit.protocol``,
``docs/process-protocol.md``): once listening, its ready line; SIGTERM/SIGINT stop accepting,
flush, close, write the tap records, print the result line (the proxy's ``ProxyTotals``) and
exit 0. A bad config exits 2, an address it cannot listen on 3, each with one error line.
Human-readable lines (warnings, upstream errors) go to stderr.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from kit import __version__
from kit.delayline.priority import raise_priority
from kit.delayline.relay import serve_proxy, startup_warnings
from kit.plan.processes import ProxyConfig
from kit.protocol import child_main
from kit.results.records import ProxyTotals

STACK = "kit.delayline"


def serve(config: ProxyConfig, ready: Callable[[int], None]) -> ProxyTotals:
    for line in startup_warnings(config):
        print(line, file=sys.stderr, flush=True)
    refused = raise_priority()
    if refused is not None:
        print(f"{STACK}: {refused}", file=sys.stderr, flush=True)
    return asyncio.run(serve_proxy(config, on_ready=ready)).totals()


def main() -> int:
    return child_main(ProxyConfig, serve, STACK, __version__)


if __name__ == "__main__":
    sys.exit(main())
