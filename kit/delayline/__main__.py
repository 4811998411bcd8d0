"""``python -m kit.delayline``: run one delay line as a child process of the orchestrator.

Contract (the orchestrator depends on it): once listening, exactly one JSON line on stdout,
``{"ready": true, "port": <int>, "pid": <int>}``. If it cannot start, one line
``{"ready": false, "error": "<reason>"}`` and exit 2 (bad arguments) or 3 (cannot listen),
never a traceback. SIGTERM/SIGINT: stop accepting, flush, close, write tap records, exit 0.
Human-readable lines (warnings, upstream errors) go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from kit.delayline.relay import ProxyConfig, serve_proxy, startup_warnings
from kit.errors import KitError, TopologyError, UsageError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would print usage and exit 2
        raise UsageError(message)


def _split_host_port(text: str, option: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise UsageError(f"{option}: {text!r} is not HOST:PORT (e.g. 127.0.0.1:0)")
    return host.strip("[]"), int(port)


def parse_args(argv: Sequence[str]) -> ProxyConfig:
    parser = _Parser(prog="python -m kit.delayline", description="HTTP/2-aware TCP delay line")
    parser.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT (0 = OS picks)")
    parser.add_argument("--upstream", required=True, help="HOST:PORT of the server")
    parser.add_argument("--delay-up-ms", type=float, default=0.0, help="client->server delay")
    parser.add_argument("--delay-down-ms", type=float, default=0.0, help="server->client delay")
    parser.add_argument("--tap-file", default=None, help="append frame-tap JSON lines here")
    parser.add_argument("--read-bytes", type=int, default=1024 * 1024)
    parser.add_argument("--buffer-cap-bytes", type=int, default=64 * 1024 * 1024)
    args = parser.parse_args(list(argv))
    listen_host, listen_port = _split_host_port(args.listen, "--listen")
    upstream_host, upstream_port = _split_host_port(args.upstream, "--upstream")
    return ProxyConfig(
        listen_host=listen_host, listen_port=listen_port,
        upstream_host=upstream_host, upstream_port=upstream_port,
        delay_up_ms=args.delay_up_ms, delay_down_ms=args.delay_down_ms,
        read_bytes=args.read_bytes, buffer_cap_bytes=args.buffer_cap_bytes,
        tap_path=args.tap_file,
    )


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
