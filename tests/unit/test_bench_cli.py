"""``make bench``'s entry point parses its arguments before measuring anything."""

from __future__ import annotations

import pytest

from kit.tools import bench


def test_help_prints_usage_and_measures_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--help"])
    assert exit_.value.code == 0
    assert "--floor" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--bogus"], ["--links", "--floor"], ["links"]])
def test_an_unknown_or_conflicting_argument_is_refused(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        bench.main(argv)
    assert exit_.value.code == 2
    assert "error:" in capsys.readouterr().err
