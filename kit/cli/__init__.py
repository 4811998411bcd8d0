"""The ``kit`` command: thin typer commands that parse options, build a plan, call the engine.

Only this package prints, and only ``main`` turns a ``KitError`` into a one-line message
and its exit code: the one boundary where errors become exit codes. Commands live in
``run`` (run, proxy, serve), ``tables`` (tables, report) and ``compare`` (compare, knee).
"""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import NoReturn

import typer

from kit.cli import compare, plot, run, tables
from kit.cli.output import echo_err
from kit.errors import Interrupted, KitError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Measure how HTTP/2 flow-control windows and RTT bound gRPC throughput.",
)
for _commands in (run, tables, compare, plot):
    _commands.register(app)


def _on_signal(signum: int, frame: FrameType | None) -> NoReturn:
    raise Interrupted(signum)  # unwinds through every `with Topology()`: children stop


def main(argv: list[str] | None = None) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_signal)
    try:
        app(args=argv)
    except KeyboardInterrupt:
        echo_err("kit: interrupted; every process the kit started was stopped")
        sys.exit(130)
    except Interrupted as exc:
        echo_err(f"kit: {exc}")
        sys.exit(exc.exit_code)
    except KitError as exc:
        echo_err(f"kit: error: {exc}")
        sys.exit(exc.exit_code)
