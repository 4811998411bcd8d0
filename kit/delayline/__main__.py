"""``python -m kit.delayline --config '<json>'``: one delay line as a child process.

The config is a ``kit.plan.processes.ProxyConfig`` as JSON (``kit.results.codec.to_json``);
``kit.delayline.child_args(config)`` builds the arguments. Contract (the orchestrator
depends on it): once listening, exactly one JSON line on stdout,
``{"ready": true, "port": <int>, "pid": <int>}``. If it cannot start, one line
``{"ready": false, "error": "<reason>"}`` and exit 2 (bad config) or 3 (cannot listen),
never a traceback. SIGTERM/SIGINT: stop accepting, flush, close, write tap records, exit 0.
Human-readable lines (warnings, upstream errors) go to stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence

from kit.delayline.priority import raise_priority
from kit.delayline.relay import serve_proxy, startup_warnings
from kit.errors import KitError, TopologyError, UsageError
from kit.plan.processes import ProxyConfig
from kit.results.codec import from_json

CONFIG_FLAG = "--config"
USAGE = f"usage: python -m kit.delayline {CONFIG_FLAG} '<ProxyConfig as JSON>'"


def parse_args(argv: Sequence[str]) -> ProxyConfig:
    """``--config JSON`` (or ``--config=JSON``) -> a validated config; UsageError if not."""
    args = list(argv)
    if len(args) == 1 and args[0].startswith(CONFIG_FLAG + "="):
        return parse_config(args[0][len(CONFIG_FLAG) + 1 :])
    if len(args) == 2 and args[0] == CONFIG_FLAG:
        return parse_config(args[1])
    raise UsageError(f"{USAGE} (got {len(args)} argument(s))")


def parse_config(text: str) -> ProxyConfig:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"proxy config: not JSON ({exc})") from None
    return from_json(ProxyConfig, data, "proxy config")


def _emit(payload: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    try:
        config = parse_args(sys.argv[1:] if argv is None else argv)
    except KitError as exc:
        _emit({"ready": False, "error": _one_line(exc)})
        return exc.exit_code
    for line in startup_warnings(config):
        print(line, file=sys.stderr, flush=True)
    refused = raise_priority()
    if refused is not None:
        print(f"kit.delayline: {refused}", file=sys.stderr, flush=True)
    ready = False

    def on_ready(port: int) -> None:
        nonlocal ready
        ready = True
        _emit({"ready": True, "port": port, "pid": os.getpid()})

    try:
        asyncio.run(serve_proxy(config, on_ready=on_ready))
    except KeyboardInterrupt:  # a signal before the handlers were installed
        return 0
    except Exception as exc:  # the contract: one line, no traceback
        if ready:
            print(f"kit.delayline: failed: {_one_line(exc)}", file=sys.stderr, flush=True)
            return 1
        _emit({"ready": False, "error": _one_line(exc)})
        return TopologyError.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
