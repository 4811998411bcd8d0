"""A killed kit's working directory is removed by the next kit; nobody else's is."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from kit.topology import leftovers


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_only_the_directories_of_gone_kits_are_removed(tmp_path: Path) -> None:
    gone, alive, unmarked, other = (tmp_path / n for n in ("kit-a", "kit-b", "kit-c", "tap-d"))
    for path in (gone, alive, unmarked, other):
        path.mkdir()
        (path / "stderr").write_text("x")
    (gone / leftovers.OWNER_FILE).write_text(f"{_dead_pid()}\n")
    (alive / leftovers.OWNER_FILE).write_text(f"{os.getppid()}\n")
    (other / leftovers.OWNER_FILE).write_text(f"{_dead_pid()}\n")
    assert leftovers.sweep(tmp_path) == [gone]
    assert not gone.exists() and alive.exists() and unmarked.exists() and other.exists()


def test_a_garbled_mark_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "kit-x"
    path.mkdir()
    (path / leftovers.OWNER_FILE).write_text("not a pid")
    assert leftovers.sweep(tmp_path) == [] and path.exists()
