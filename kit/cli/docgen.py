"""The docs' generated parts, made from the code they describe so that they cannot drift.

A docs page asks for a part with a marker line, ``<!-- kit:generated NAME -->``; the site's
build hook (``docs/hooks/kit_docs.py``, run by ``make docs`` and every ``mkdocs build``)
replaces it with ``generated(NAME)``:

- ``cli``: every command of ``kit``, its arguments and options, walked from the click
  commands typer builds (with ``--help``'s panels and metavars), in ``kit --help``'s order;
- ``exit-codes``: the exception tree of ``kit.errors`` and each class's exit code;
- ``records``: the records file's line kinds and every record type's fields, from the
  dataclasses themselves;
- ``flat-columns``: every column of the flat row (``--json``, ``--csv``), from
  ``kit.analysis.flat``;
- ``reference-windows``, ``-wire``, ``-starvation``, ``-unary``, ``-uploads``: the reference
  figures ``kit tables`` prints beside its own, from the data it checks against
  (``kit.analysis.reference``, ``kit.analysis.tables.uploads``).

``python -m kit.cli.docgen NAME`` prints one part (``--out FILE`` writes it).
"""

from __future__ import annotations

import dataclasses
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.main

from kit import errors
from kit.analysis import flat, reference
from kit.analysis.tables.uploads import HAPROXY_MBIT_S, HAPROXY_SOURCE
from kit.cli import app
from kit.cli.help import DETAILS, apply_help
from kit.plan.tables.uploads import HAPROXY_RTT_MS
from kit.plan.units import format_bytes
from kit.results.records import Measurement
from kit.results.store import KINDS, RECORDS_SCHEMA

MARKER = re.compile(r"^<!-- kit:generated ([a-z-]+) -->[ \t]*$", re.MULTILINE)
DEFAULT_PANEL = "Options"  # options without a panel, as --help shows them
_TRAILERS = re.compile(r"\s*\[(default: [^\]]*|required)\]\s*$")


# --- markdown helpers -----------------------------------------------------------------------


def cell(text: str) -> str:
    """Text safe in a markdown table cell: no column-splitting pipe, no HTML tag, one line."""
    text = " ".join(text.split())
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", r"\|")


def code(text: str) -> str:
    """A code span; inside one, markdown's tables take a pipe literally and HTML is text."""
    return f"`{text}`" if text else ""


def table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


# --- the command line -------------------------------------------------------------------------


def root_command() -> Any:
    """The ``kit`` click group as ``kit --help`` shows it (panels and metavars applied)."""
    return apply_help(typer.main.get_command(app))


def commands(root: Any) -> Iterator[tuple[str, Any]]:
    """(name, click command) of every command, in ``kit --help``'s order."""
    ctx = root.make_context("kit", [], resilient_parsing=True)
    for name in root.list_commands(ctx):
        yield name, root.get_command(ctx, name)


def cli_reference() -> str:
    root = root_command()
    usage = "kit [OPTIONS] COMMAND [ARGS]..."
    lines = ["## kit", "", _paragraph(root.help), "", "```", usage, "```", ""]
    lines += _options_tables(root, "kit")
    for name, command in commands(root):
        lines += ["", *_command_section(name, command)]
    return "\n".join(lines) + "\n"


def _command_section(name: str, command: Any) -> list[str]:
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    usage = " ".join(["kit", name, "[OPTIONS]", *(p.name.upper() for p in arguments)])
    lines = [f"## kit {name}", "", _paragraph(command.help), "", "```", usage, "```"]
    if arguments:
        rows = [(code(p.name.upper()), "yes" if p.required else "no") for p in arguments]
        lines += ["", "**Arguments**", "", *table(("argument", "required"), rows)]
        lines += [f"\n`{p.name.upper()}`: {cell(_argument_help(p))}" for p in arguments]
    lines += ["", *_options_tables(command, f"kit {name}")]
    if command.epilog:
        lines += ["", "```", *_epilog_lines(command.epilog), "```"]
    return lines


def _paragraph(text: str | None) -> str:
    return " ".join((text or "").split())


def _argument_help(param: Any) -> str:
    return str(getattr(param, "help", "") or "")


def _epilog_lines(epilog: str) -> list[str]:
    return [line[2:] if line.startswith("  ") else line for line in epilog.strip().splitlines()]


def _options_tables(command: Any, path: str) -> list[str]:
    """One table per ``--help`` panel, in the order ``--help`` shows them."""
    ctx = command.make_context(path, [], resilient_parsing=True)
    panels: dict[str, list[tuple[str, ...]]] = {DEFAULT_PANEL: []}
    for param in command.params:
        if param.param_type_name == "option" and not param.hidden:
            panel = getattr(param, "rich_help_panel", None) or DEFAULT_PANEL
            panels.setdefault(panel, []).append(_option_row(param, ctx))
    lines: list[str] = []
    for panel, rows in panels.items():
        if rows:
            lines += [f"**{panel}**", "", *table(("option", "value", "default", "meaning"), rows)]
            lines.append("")
    return lines[:-1]


def _option_row(param: Any, ctx: Any) -> tuple[str, ...]:
    record = param.get_help_record(ctx)
    help_text = record[1] if record else ""
    default = ""
    while match := _TRAILERS.search(help_text):
        if match.group(1).startswith("default: "):
            default = match.group(1).removeprefix("default: ")
        help_text = help_text[: match.start()]
    names = " / ".join(code(o) for o in [*param.opts, *param.secondary_opts])
    flag = getattr(param, "is_flag", False)
    value = "flag" if flag else code(str(param.metavar or "").strip())
    detail = DETAILS.get(param.name or "", "")
    meaning = help_text.rstrip(" .") + "." + (f" {detail}" if detail else "")
    return (names, value, code(default), cell(meaning))


# --- exit codes ------------------------------------------------------------------------------


def _kit_errors() -> list[type[BaseException]]:
    """``KitError`` and its subclasses, base first, then depth-first; ``Interrupted`` last."""
    found: list[type[BaseException]] = []

    def walk(cls: type[BaseException]) -> None:
        found.append(cls)
        for sub in cls.__subclasses__():
            if sub.__module__ == errors.__name__:
                walk(sub)

    walk(errors.KitError)
    return [*found, errors.Interrupted]


def exit_codes() -> str:
    rows = []
    for cls in _kit_errors():
        parent = cls.__mro__[1].__name__
        exit_code = getattr(cls, "exit_code", None)
        shown = str(exit_code) if isinstance(exit_code, int) else "128 + N (the signal's number)"
        rows.append((code(cls.__name__), code(parent), shown, cell(_first_line(cls.__doc__))))
    return "\n".join(table(("exception", "is a", "exit code", "what it is"), rows)) + "\n"


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().split("\n\n")[0]


# --- records -----------------------------------------------------------------------------------


def record_types() -> list[type[Any]]:
    """Every record type a records file holds, and the types of their fields, in the order a
    reader meets them (breadth first from each line kind)."""
    seen: list[type[Any]] = []
    queue = list(KINDS.values())
    while queue:
        cls = queue.pop(0)
        if cls in seen:
            continue
        seen.append(cls)
        hints = typing.get_type_hints(cls)
        queue += [t for f in dataclasses.fields(cls) for t in _dataclasses_in(hints[f.name])]
    return seen


def _dataclasses_in(tp: Any) -> list[type[Any]]:
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return [tp]
    return [found for arg in typing.get_args(tp) for found in _dataclasses_in(arg)]


def type_name(tp: Any) -> str:
    """A field's type as written in the code, without module paths: ``tuple[int, ...]``."""
    if tp is type(None):
        return "None"
    if tp is Ellipsis:
        return "..."
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(map(type_name, args))}]"
    return getattr(tp, "__name__", str(tp))


def _default(field: dataclasses.Field[Any]) -> str:
    if field.default is not dataclasses.MISSING:
        value = field.default
        return repr(value) if not dataclasses.is_dataclass(value) else f"{type(value).__name__}()"
    if field.default_factory is not dataclasses.MISSING:
        made = field.default_factory()
        return repr(made) if not dataclasses.is_dataclass(made) else f"{type(made).__name__}()"
    return "required"


def records_reference() -> str:
    kinds = ", ".join(f"{code(kind)} ({cls.__name__})" for kind, cls in KINDS.items())
    lines = [f"Records schema **{RECORDS_SCHEMA}**. Line kinds: {kinds}.", ""]
    for cls in record_types():
        hints = typing.get_type_hints(cls)
        rows = [
            (code(f.name), code(type_name(hints[f.name])), code(_default(f)))
            for f in dataclasses.fields(cls)
        ]
        doc = _doc(cls)
        lines += [f"### {cls.__name__}", "", f"`{cls.__module__}.{cls.__name__}`", ""]
        lines += [cell(doc), ""] if doc else []
        lines += [*table(("field", "type", "default"), rows), ""]
    return "\n".join(lines)


def _doc(cls: type[Any]) -> str:
    """A record type's docstring on one line; "" for the one ``dataclass`` makes up for a
    class without one (its signature, ``Name(field: type, ...)``)."""
    doc = " ".join((cls.__doc__ or "").split())
    return "" if doc.startswith(f"{cls.__name__}(") else doc


# --- the flat row ----------------------------------------------------------------------------------


def _column_group(name: str) -> str:
    if name in flat.HEADLINE:
        return "headline"
    if name in flat.DERIVED:
        return "derived"
    if name == "cells_left_out":
        return "compact row only"
    return "record field"


def _column_note(name: str) -> str:
    if name in flat.EXCLUDED:
        return "never (the records file keeps it)"
    if name in flat.SERIES:
        return "`--full` only (a time series)"
    if name in flat.SAME_AS:
        return f"`--full` only (same as `{flat.SAME_AS[name]}`)"
    # the one list of what the compact row leaves out (a few restate other columns)
    if name in flat._COMPACT_LEFT_OUT:
        return "`--full` only (restates another column)"
    return ""


def flat_columns() -> str:
    rows = [
        (code(name), kind, _column_group(name), _column_note(name))
        for name, kind in flat.column_kinds(Measurement).items()
    ]
    intro = f"Flat schema **{flat.FLAT_SCHEMA}**, {len(rows)} columns."
    return "\n".join([intro, "", *table(("column", "kind", "from", "left out"), rows)]) + "\n"


# --- the reference study's figures --------------------------------------------------------------


def _setting(window: int | None) -> str:
    return "dynamic (BDP estimator)" if window is None else f"static {format_bytes(window)}"


def reference_windows() -> str:
    rtts = sorted({rtt for rtt, _ in reference.THROUGHPUT_MIB_S})
    windows = [None, *sorted({w for _, w in reference.THROUGHPUT_MIB_S if w is not None})]
    header = ("client setting", *(f"RTT {rtt:g} ms" if rtt else "loopback" for rtt in rtts))
    rows = []
    for window in windows:
        cells = []
        for rtt in rtts:
            mib_s = reference.THROUGHPUT_MIB_S[(rtt, window)]
            theory = "" if window is None or not rtt else f" ({window / 2**20 / (rtt / 1000):.1f})"
            cells.append(f"{mib_s:.1f}{theory}")
        rows.append((_setting(window), *cells))
    note = "MiB/s; in brackets the theory, window / RTT, in MiB/s."
    return "\n".join([*table(header, rows), "", note]) + "\n"


def reference_wire() -> str:
    wire = reference.WIRE_DYNAMIC_20MS
    increments = " ".join(str(i) for i in wire.first_increments)
    rows = [
        ("throughput", f"{wire.throughput_mib_s:g} MiB/s"),
        ("connection-level WINDOW_UPDATEs", str(wire.conn_window_updates)),
        ("their first increments", increments),
        ("PINGs sent by the client", str(wire.pings_sent)),
    ]
    rows += [
        (f"client SETTINGS, {_setting(window)}", code(sent))
        for window, sent in reference.CLIENT_SETTINGS.items()
    ]
    return "\n".join(table(("dynamic client, RTT 20 ms", "reference"), rows)) + "\n"


def reference_starvation() -> str:
    rows = [
        (f"{window} bytes ({format_bytes(window)})", f"{total_ms:g} ms", f"{mib_s:g} MiB/s")
        for window, (total_ms, mib_s) in reference.STARVATION.items()
    ]
    return "\n".join(table(("connection window", "total time", "aggregate"), rows)) + "\n"


def reference_unary() -> str:
    rows = [(_setting(w), f"{ms:g} ms") for w, ms in reference.UNARY_MEAN_MS.items()]
    return "\n".join(table(("client setting", "mean per call"), rows)) + "\n"


def reference_uploads() -> str:
    rows = [
        (label, f"{format_bytes(window)}", f"{mbit:g} Mbit/s")
        for window, (label, mbit) in HAPROXY_MBIT_S.items()
    ]
    upload = f"one upload at {HAPROXY_RTT_MS:g} ms"
    header = ("HAProxy setting", "kit's nearest server window", upload)
    return "\n".join([*table(header, rows), "", f"Source: {cell(HAPROXY_SOURCE)}."]) + "\n"


# --- blocks and markers ------------------------------------------------------------------------------

BLOCKS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "exit-codes": exit_codes,
    "records": records_reference,
    "flat-columns": flat_columns,
    "reference-windows": reference_windows,
    "reference-wire": reference_wire,
    "reference-starvation": reference_starvation,
    "reference-unary": reference_unary,
    "reference-uploads": reference_uploads,
}


def generated(name: str) -> str:
    if name not in BLOCKS:
        known = ", ".join(BLOCKS)
        raise errors.UsageError(f"no generated docs part {name!r} (known: {known})")
    return BLOCKS[name]()


def expand(markdown: str) -> str:
    """A page's markdown with each ``<!-- kit:generated NAME -->`` line replaced by its part."""
    return MARKER.sub(lambda m: generated(m.group(1)).rstrip("\n"), markdown)


def _main(
    name: Annotated[str, typer.Argument(help=f"One of: {', '.join(BLOCKS)}.")],
    out: Annotated[Path | None, typer.Option("--out", help="Write it here.")] = None,
) -> None:
    """Print (or write) one generated part of the docs."""
    text = generated(name)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    try:
        typer.run(_main)
    except errors.KitError as exc:
        sys.stderr.write(f"kit.cli.docgen: error: {exc}\n")
        sys.exit(exc.exit_code)
