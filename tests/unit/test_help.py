"""``kit COMMAND --help``: options in panels, metavars that say what to type, examples."""

from __future__ import annotations

import pytest

from kit.cli import main

COMMANDS = ("run", "compare", "knee", "proxy", "serve", "tables", "plot", "report")


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
    assert "Examples:" in text and "kit run --rtt 20ms --window 4MiB" in text
    # descriptions get more than 25 columns: the longest description line is wide
    widest = max(len(line.split("  ")[-1]) for line in text.splitlines() if "│" in line)
    assert widest > 40


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_names_what_to_type(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help(command, monkeypatch, capsys)
    assert "<str>" not in text and "<list[str]>" not in text, text
    assert all(len(line) <= 100 for line in text.splitlines())
