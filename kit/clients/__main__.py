"""``python -m kit.clients --target HOST:PORT --trial JSON``: run one client, print one JSON line.

Process contract with the orchestrator: the last stdout line is ``{"result": {...}}`` on
success or ``{"error": "...", "exit_code": N}`` on failure (exit code N, no traceback).
"""

from __future__ import annotations

import argparse
import json
import sys

from kit.errors import KitError, UsageError
from kit.measure import ClientResult
from kit.plan import Trial


def run_client(host: str, port: int, trial: Trial) -> ClientResult:
    if trial.client.kind == "h2":
        from kit.clients.h2_client import run_h2

        return run_h2(host, port, trial)
    from kit.clients.grpcio_client import run_grpcio

    return run_grpcio(host, port, trial)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kit.clients")
    parser.add_argument("--target", required=True)
    parser.add_argument("--trial", required=True, help="Trial as JSON (Trial.to_dict)")
    args = parser.parse_args(argv)
    try:
        host, _, port = args.target.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"--target: {args.target!r} is not HOST:PORT")
        trial = Trial.from_dict(json.loads(args.trial))
        result = run_client(host, int(port), trial)
    except KitError as exc:
        _emit({"error": str(exc), "exit_code": exc.exit_code})
        return exc.exit_code
    except (ValueError, TypeError) as exc:
        _emit({"error": f"bad trial: {exc}", "exit_code": 2})
        return 2
    _emit({"result": result.to_dict()})
    return 0


def _emit(obj: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
