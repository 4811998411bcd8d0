"""Pure rendering of what the window matrix shows (``kit.analysis.matrix``), in sentences."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from kit.analysis.matrix import MatrixGroup
from kit.plan.presets import DEFAULTS


def matrix_findings(groups: Sequence[MatrixGroup]) -> str:
    lines = ["What the matrix shows (median ratio to the defaults, and the verdict):"]
    for group in groups:
        lines.append(f"{group.downloads} concurrent download(s):")
        for f in group.findings:
            ratio = "-" if f.ratio is None else f"x{f.ratio:.2f}"
            text = f"{f.what}: {ratio} of {DEFAULTS} - {f.verdict}"
            lines += textwrap.wrap(text, 100, initial_indent="  ", subsequent_indent="    ")
    return "\n".join(lines)
