"""Pure rendering of what the window matrix shows (``kit.analysis.matrix``), in sentences."""

from __future__ import annotations

from collections.abc import Sequence

from kit.analysis.matrix import MatrixGroup
from kit.plan.presets import DEFAULTS


def matrix_findings(groups: Sequence[MatrixGroup]) -> str:
    lines = ["What the matrix shows (median ratio to the defaults, and the verdict):"]
    for group in groups:
        lines.append(f"{group.downloads} concurrent download(s):")
        for f in group.findings:
            ratio = "-" if f.ratio is None else f"x{f.ratio:.2f}"
            lines.append(f"  {f.what}: {ratio} of {DEFAULTS} - {f.verdict}")
    return "\n".join(lines)
