"""The CLI's only output helpers: files the user named, and lines on stderr."""

from __future__ import annotations

from pathlib import Path

import typer

from kit.errors import UsageError
from kit.topology.topology import Topology


def write_text(path: Path, text: str, option: str) -> None:
    """Write an output file the user named; failures are one-line errors naming the option."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{option}: cannot write {path}: {exc.strerror or exc}") from None


def echo_err(message: str) -> None:
    typer.echo(message, err=True)


def warn_teardown(problem: str) -> None:
    """A teardown failure is reported at once, never swallowed: the user may have a stray
    process, and the run may be ending with an error of its own."""
    echo_err(f"kit: warning: while stopping: {problem}")


def topology(
    direct: bool = False, target: tuple[str, int] | None = None, keep_awake: bool = False
) -> Topology:
    """The topology every command measures with: it reports its own teardown problems.

    ``target``: a running kit server (``kit serve``) to measure instead of starting one.
    ``keep_awake``: busy loops at nice 19 keep every vCPU awake while it measures."""
    return Topology(
        direct=direct, on_teardown_problem=warn_teardown, target=target, keep_awake=keep_awake
    )
