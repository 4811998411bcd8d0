"""The client process contract, shared by both clients' entry points.

``python -m kit.clients.h2 --target HOST:PORT --trial JSON`` (or ``kit.clients.grpcio_client``)
runs one client and prints one JSON line: ``{"result": {...}}`` on success or
``{"error": "...", "exit_code": N}`` on failure (exit code N, no traceback). The trial
arrives as ``kit.results.codec.to_json(trial)``; a bad one is a usage error (exit 2).
Each client has its own entry module so that a process imports only its own stack: grpc
alone costs a client ~0.1-0.2 s to start, paid once per measured cell.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from kit.errors import KitError, UsageError
from kit.plan.trial import ClientKind, Trial
from kit.plan.units import split_host_port
from kit.results.client import ClientResult
from kit.results.codec import from_json, to_json

Runner = Callable[[str, int, Trial], ClientResult]
ENTRY_MODULES: dict[ClientKind, str] = {
    "grpcio": "kit.clients.grpcio_client",
    "h2": "kit.clients.h2",
}


def child_args(trial: Trial, target: str) -> list[str]:
    """The ``python -m`` arguments that run ``trial``'s client against ``target``."""
    module = ENTRY_MODULES[trial.client.kind]
    return [module, "--target", target, "--trial", json.dumps(to_json(trial))]


def parse_trial(text: str) -> Trial:
    """The ``--trial`` JSON -> a validated Trial; ``UsageError`` names what is wrong."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--trial: not JSON ({exc})") from None
    return from_json(Trial, data, "trial")


def main(run: Runner, prog: str, argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {prog}")
    parser.add_argument("--target", required=True, help="HOST:PORT of the server")
    parser.add_argument("--trial", required=True, help="the Trial as JSON (codec.to_json)")
    args = parser.parse_args(argv)
    try:
        host, port = split_host_port(args.target, "--target")
        result = run(host, port, parse_trial(args.trial))
    except KitError as exc:
        _emit({"error": str(exc), "exit_code": exc.exit_code})
        return exc.exit_code
    _emit({"result": to_json(result)})
    return 0


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
