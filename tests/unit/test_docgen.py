"""The docs' generated parts (``kit.cli.docgen``): every command, argument and option of the
CLI appears in the command-line reference, every error class and record field in theirs,
every table row keeps its columns, and every marker a docs page uses names a known part."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from kit import errors
from kit.analysis import flat
from kit.cli import docgen
from kit.cli.docgen import cell
from kit.cli.help import DETAILS
from kit.errors import UsageError

REPO = Path(__file__).resolve().parents[2]


def _sections(text: str) -> dict[str, str]:
    """The reference's text by command path (``kit``, ``kit run``, ...)."""
    parts = re.split(r"^## (kit(?: [a-z-]+)?)$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_command_and_option_of_the_cli_appears_in_its_section() -> None:
    root = docgen.root_command()
    sections = _sections(docgen.cli_reference())
    expected = {"kit": root, **{f"kit {name}": cmd for name, cmd in docgen.commands(root)}}
    assert set(sections) == set(expected)
    missing = []
    for path, command in expected.items():
        for param in command.params:
            if getattr(param, "hidden", False):
                continue
            if param.param_type_name == "argument":
                names = [param.name.upper()]
            else:
                names = [*param.opts, *param.secondary_opts]
            missing += [f"{path} {n}" for n in names if f"`{n}`" not in sections[path]]
    assert missing == []


def test_the_reference_lists_commands_in_the_help_order_with_their_help() -> None:
    root = docgen.root_command()
    text = docgen.cli_reference()
    names = [name for name, _ in docgen.commands(root)]
    assert {"run", "compare", "knee", "tables", "report", "plot", "proxy", "serve"} <= set(names)
    positions = [text.index(f"\n## kit {name}\n") for name in names]
    assert positions == sorted(positions)
    for name, command in docgen.commands(root):
        assert " ".join((command.help or "").split()) in _sections(text)[f"kit {name}"]


def test_defaults_and_metavars_are_their_own_columns() -> None:
    run = _sections(docgen.cli_reference())["kit run"]
    assert "| `--rtt` | `DURATION` | `20ms` | RTT the delay line adds" in run
    assert "| `--keep-awake` | flag |  |" in run
    assert "[default:" not in run


def _columns(line: str) -> int:
    """Cells of a markdown table row: pipes outside code spans and not escaped."""
    outside_code = re.sub(r"`[^`]*`", "", line).replace(r"\|", "")
    return outside_code.count("|") - 1


@pytest.mark.parametrize("name", list(docgen.BLOCKS))
def test_every_table_row_keeps_its_columns(name: str) -> None:
    rows: list[str] = []
    for line in [*docgen.generated(name).splitlines(), ""]:
        if line.startswith("|"):
            rows.append(line)
            continue
        if rows:
            assert {_columns(r) for r in rows} == {_columns(rows[0])}, rows
            rows = []


def test_cells_escape_what_would_break_a_table() -> None:
    assert docgen.cell("a | b <c>\n d") == r"a \| b &lt;c&gt; d"


def test_exit_codes_name_every_error_class_and_its_code() -> None:
    text = docgen.exit_codes()
    classes = [
        v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, BaseException)
    ]
    for cls in classes:
        if cls.__module__ == errors.__name__:
            code = getattr(cls, "exit_code", None)
            shown = str(code) if isinstance(code, int) else "128 + N"
            assert f"| `{cls.__name__}` |" in text and shown in text.split(cls.__name__, 1)[1]


def test_the_records_reference_names_every_field_of_every_record_type() -> None:
    text = docgen.records_reference()
    for cls in docgen.record_types():
        assert f"### {cls.__name__}\n" in text
        section = text.split(f"### {cls.__name__}\n", 1)[1].split("\n### ", 1)[0]
        for field in dataclasses.fields(cls):
            assert f"| `{field.name}` |" in section, (cls.__name__, field.name)


def test_the_flat_reference_lists_every_column() -> None:
    text = docgen.flat_columns()
    for column in flat.column_kinds():
        assert f"| `{column}` |" in text


def test_the_flat_row_page_describes_every_headline_and_derived_column() -> None:
    page = (REPO / "docs" / "reference" / "flat-row.md").read_text(encoding="utf-8")
    missing = [c for c in [*flat.HEADLINE, *flat.DERIVED] if f"`{c}`" not in page]
    assert missing == []


def test_expand_replaces_each_marker_and_refuses_an_unknown_one() -> None:
    page = "# Title\n\n<!-- kit:generated exit-codes -->\n\nafter\n"
    expanded = docgen.expand(page)
    assert "<!-- kit:generated" not in expanded and "| `KitError` |" in expanded
    assert expanded.endswith("\n\nafter\n")
    with pytest.raises(UsageError, match="no generated docs part 'nope'"):
        docgen.expand("<!-- kit:generated nope -->\n")


def test_every_marker_in_the_docs_names_a_known_part() -> None:
    used = {
        match.group(1)
        for page in (REPO / "docs").rglob("*.md")
        for match in docgen.MARKER.finditer(page.read_text(encoding="utf-8"))
    }
    assert "cli" in used
    assert used <= set(docgen.BLOCKS)


def test_every_options_long_form_is_in_the_reference() -> None:
    """What an option's one-line ``--help`` leaves out (``kit.cli.help.DETAILS``) is in the
    command reference beside it, and names no option that is gone."""
    run = _sections(docgen.cli_reference())["kit run"]
    command = docgen.root_command().commands["run"]
    names = {p.name for p in command.params if p.param_type_name == "option"}
    assert set(DETAILS) <= names
    for name, detail in DETAILS.items():
        assert cell(detail) in run, name
