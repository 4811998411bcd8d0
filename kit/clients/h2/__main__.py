"""``python -m kit.clients.h2 --target HOST:PORT --trial JSON``: the h2 client as a process."""

from __future__ import annotations

import sys

from kit.clients.h2.client import run_h2
from kit.clients.process import main

if __name__ == "__main__":
    sys.exit(main(run_h2, "kit.clients.h2"))
