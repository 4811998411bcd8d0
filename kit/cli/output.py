"""The CLI's only output helpers: files the user named, and lines on stderr."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console

from kit.errors import UsageError
from kit.plan.programs import proxy_note
from kit.results.store import SkippedLines
from kit.topology.topology import Topology


def write_text(path: Path, text: str, option: str) -> None:
    """Write an output file the user named; failures are one-line errors naming the option."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{option}: cannot write {path}: {exc.strerror or exc}") from None


def write_chunks(path: Path, chunks: Iterable[str], option: str) -> None:
    """``write_text`` for a text made a piece at a time (never held whole)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as f:
            for chunk in chunks:
                f.write(chunk)
    except OSError as exc:
        raise UsageError(f"{option}: cannot write {path}: {exc.strerror or exc}") from None


# The console of a line being redrawn in place (a campaign's progress), while there is one.
_live: list[Console] = []


def echo_err(message: str) -> None:
    """One line on stderr; above a progress line being redrawn, if there is one (click
    writes to stderr's buffer, past rich's redirection, and would append to that line)."""
    if _live:
        _live[-1].print(message, markup=False, highlight=False, emoji=False, soft_wrap=True)
        return
    typer.echo(message, err=True)


@contextmanager
def lines_above(console: Console) -> Iterator[None]:
    """While a ``rich.live.Live`` redraws a line on ``console``: ``echo_err`` prints above it."""
    _live.append(console)
    try:
        yield
    finally:
        _live.remove(console)


def warn_teardown(problem: str) -> None:
    """A teardown failure is reported at once, never swallowed: the user may have a stray
    process, and the run may be ending with an error of its own."""
    echo_err(f"kit: warning: while stopping: {problem}")


def topology(
    direct: bool = False,
    target: tuple[str, int] | None = None,
    keep_awake: bool = False,
    live_count: bool = False,
    fresh_clients: bool = False,
) -> Topology:
    """The topology every command measures with: it reports its own teardown problems.

    ``target``: a running kit server (``kit serve``) to measure instead of starting one.
    ``keep_awake``: busy loops at nice 19 keep every vCPU awake while it measures.
    ``live_count``: the delay lines count what they deliver, for ``kit run --interval``.
    ``fresh_clients``: a client process per trial instead of client workers.
    Says once when the delay line is the Python fallback (the compiled one is not built)."""
    note = None if direct else proxy_note()
    if note is not None:
        echo_err(f"kit: {note}")
    return Topology(
        direct=direct,
        on_teardown_problem=warn_teardown,
        target=target,
        keep_awake=keep_awake,
        live_count=live_count,
        workers=not fresh_clients,
    )


SHOWN_WARNINGS = 5


def echo_warnings(
    prefix: str, warnings: Sequence[str] | SkippedLines, shown: int = SHOWN_WARNINGS
) -> None:
    """The first few skipped-line warnings, then how many more (a file that is no records
    file at all would otherwise print a line for each of its lines)."""
    first, total = (
        (warnings.first, warnings.count)
        if isinstance(warnings, SkippedLines)
        else (warnings, len(warnings))
    )
    for warning in first[:shown]:
        echo_err(f"{prefix}: {warning}")
    if total > shown:
        echo_err(f"{prefix}: {total - shown} more line(s) skipped likewise")
