"""``kit COMMAND --help``: options in panels, metavars that say what to type, examples."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer.main

from kit.cli import app, main

COMMANDS = ("run", "compare", "knee", "proxy", "serve", "tables", "plot", "report", "check")


def _help(command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("TERM", "dumb")
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


def test_run_help_has_panels_metavars_and_examples(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help("run", monkeypatch, capsys)
    for panel in ("Link", "Workload", "Client", "Server", "Output"):
        assert f"─ {panel} ─" in text
    assert "--window" in text and "SIZE" in text and "DURATION" in text and "RATE" in text
    assert "HOST:PORT" in text and "KEY=VALUE" in text
    assert "<str>" not in text and "<list[str]>" not in text and "<int>" not in text
    assert "Examples" in text and "kit run --rtt 20ms --window 4MiB" in text
    # descriptions get more than 25 columns: each starts well left of the box's edge
    starts = [
        line.index(help_text)
        for line in text.splitlines()
        for help_text in ("RTT the delay line adds", "Static stream window")
        if help_text in line
    ]
    assert len(starts) == 2 and all(100 - start > 40 for start in starts), starts


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_names_what_to_type(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help(command, monkeypatch, capsys)
    assert "<str>" not in text and "<list[str]>" not in text, text
    assert all(len(line) <= 100 for line in text.splitlines())


PANEL_MAX_LINES = 50  # one screen


def _panels(text: str) -> dict[str, list[str]]:
    """Each boxed panel's lines (its title and its rules included), by title."""
    panels: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("╭─ "):
            current = panels.setdefault(line.split("─ ", 1)[1].split(" ─", 1)[0], [])
        if current is not None:
            current.append(line)
        if line.startswith("╰"):
            current = None
    return panels


def test_run_help_panels_each_fit_one_screen(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    panels = _panels(_help("run", monkeypatch, capsys))
    assert {"Link", "Workload", "Client", "Server", "Output"} <= set(panels)
    for title, lines in panels.items():
        assert len(lines) <= PANEL_MAX_LINES, f"{title}: {len(lines)} lines"
        assert all(len(line) <= 100 for line in lines)
    # the packet link's options are the link's, not left in a catch-all panel
    assert any("--loss " in line for line in panels["Packet link (--link packet)"])
    assert not any("--loss " in line for line in panels.get("Options", []))


@pytest.mark.parametrize("command", COMMANDS)
def test_no_command_shows_a_type_in_angle_brackets(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Flags show as flags (``--help``, ``--json``: no ``<bool>``); values by what to type;
    arguments by their name (no ``<path>`` beside FILE)."""
    text = _help(command, monkeypatch, capsys)
    assert "<bool>" not in text and "<path>" not in text
    shown = [line for line in text.splitlines() if "│ --help " in line]
    assert shown and all(line.split()[2] == "Show" for line in shown), shown


def test_plot_out_is_a_directory(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = next(line for line in _help("plot", monkeypatch, capsys).splitlines() if "--out" in line)
    assert out.split()[2] == "DIR"


RUN_HELP_MAX_LINES = {100: 90, 80: 100}  # columns -> lines (it was 122 and 164)


def _command() -> Any:
    return typer.main.get_command(app)


@pytest.mark.parametrize("columns", sorted(RUN_HELP_MAX_LINES))
def test_run_help_is_short_and_loses_no_option(
    columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setenv("TERM", "dumb")
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert len(lines) <= RUN_HELP_MAX_LINES[columns], len(lines)
    assert all(len(line) <= columns for line in lines)
    shown = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-z])\b", text))
    for param in _command().commands["run"].params:
        for name in (*param.opts, *param.secondary_opts):
            assert name in shown, name
    assert "--no-direct" not in shown  # a flag is one option, not two
    assert "docs/reference/cli.md" in text  # where the long form is
    panels = _panels(text)
    assert "Options" not in panels  # --help sits with the output options, not alone
