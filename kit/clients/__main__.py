"""``python -m kit.clients --target HOST:PORT --trial JSON``: either client, by the trial's kind.

The contract is ``kit.clients.process``'s. The orchestrator starts each client's own entry
module instead (``kit.clients.h2``, ``kit.clients.grpcio_client``), which imports one stack.
"""

from __future__ import annotations

import sys

from kit.clients.grpcio_client import run_grpcio
from kit.clients.h2.client import run_h2
from kit.clients.process import main
from kit.plan.trial import Trial
from kit.results.client import ClientResult


def run_client(host: str, port: int, trial: Trial) -> ClientResult:
    return (run_h2 if trial.client.kind == "h2" else run_grpcio)(host, port, trial)


if __name__ == "__main__":
    sys.exit(main(run_client, "kit.clients"))
