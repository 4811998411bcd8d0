"""``python -m kit.clients.h2 --config '<ClientProcess as JSON>'``: the h2 client as a process."""

from __future__ import annotations

import sys

import h2

from kit.clients.h2.client import run_h2
from kit.clients.process import client_main

if __name__ == "__main__":
    sys.exit(client_main(run_h2, "h2", h2.__version__))
