"""The ``kit`` command: thin typer commands that parse options, build a plan, call the engine.

Only this package prints, and only ``main`` turns a ``KitError`` into a one-line message
and its exit code: the one boundary where errors become exit codes. Commands live in
``run`` (run, proxy, serve), ``tables`` (tables, report), ``compare`` (compare, knee),
``plot`` and ``check`` (the CI gate).
"""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import Annotated, Any, NoReturn

import typer
import typer.main

from kit import __version__
from kit.cli import check, compare, plot, run, tables
from kit.cli.help import apply_help
from kit.cli.output import echo_err
from kit.errors import Interrupted, KitError

# The click exceptions typer raises, wherever this typer keeps click (vendored or not).
click_errors = sys.modules[typer.BadParameter.__module__]

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Measure how HTTP/2 flow-control windows and RTT bound gRPC throughput.",
)
for _commands in (run, tables, compare, plot, check):
    _commands.register(app)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"kit {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Measure how HTTP/2 flow-control windows and RTT bound gRPC throughput."""


def _usage_line(exc: Any) -> str:
    """Typer's boxed usage error -> the kit's one line, naming the command's --help."""
    command = exc.ctx.command_path if exc.ctx is not None else "kit"
    return f"kit: error: {exc.format_message().rstrip('.')} (see {command} --help)"


def _on_signal(signum: int, frame: FrameType | None) -> NoReturn:
    # unwinds through every `with Topology()`: children stop
    raise Interrupted(signum, signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_signal)
    try:
        command = apply_help(typer.main.get_command(app))
        code = command.main(args=argv, prog_name="kit", standalone_mode=False)
    except click_errors.NoArgsIsHelpError as exc:
        exc.show()
        sys.exit(2)
    except click_errors.UsageError as exc:
        echo_err(_usage_line(exc))
        sys.exit(2)
    except click_errors.ClickException as exc:
        echo_err(f"kit: error: {exc.format_message()}")
        sys.exit(exc.exit_code)
    except typer.Abort:
        echo_err("kit: aborted")
        sys.exit(1)
    except KeyboardInterrupt:
        echo_err("kit: interrupted; every process the kit started was stopped")
        sys.exit(130)
    except Interrupted as exc:
        echo_err(f"kit: {exc}")
        sys.exit(exc.exit_code)
    except KitError as exc:
        echo_err(f"kit: error: {exc}")
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
