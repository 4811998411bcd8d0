"""The working directories of kits that were killed (SIGKILL runs no clean-up): each
``Topology`` marks its directory with its process id, and the next one removes those whose
process is gone. A directory without the mark, or of a process still running, is left alone."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import psutil

PREFIX = "kit-"
OWNER_FILE = "kit-owner.pid"


def mark(workdir: Path) -> None:
    (workdir / OWNER_FILE).write_text(f"{os.getpid()}\n")


def owner(workdir: Path) -> int | None:
    try:
        text = (workdir / OWNER_FILE).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the marked working directories of kits no longer running; return them."""
    base = Path(tempfile.gettempdir()) if root is None else root
    removed = []
    for path in sorted(base.glob(PREFIX + "*")):
        pid = owner(path) if path.is_dir() and not path.is_symlink() else None
        if pid is None or pid == os.getpid() or psutil.pid_exists(pid):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed
