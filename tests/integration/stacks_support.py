"""The stacks in tests: a stack that is not built is skipped only where its toolchain is
missing too, and never in CI (``KIT_REQUIRE_STACKS=1``, set by ``.ci/run``): there a stack
that did not build fails its tests."""

from __future__ import annotations

import os
import shutil

import pytest

from kit.plan.programs import CLIENT_PROGRAMS, SERVER_PROGRAMS, STACK_KINDS

TOOLCHAINS = {
    "grpc-go": ("go",),
    "grpc-java": ("java", "mvn"),
    "grpc-js": ("node", "npm"),
    "tonic": ("cargo",),
}


def need_built(kind: str) -> None:
    """Skip (no toolchain, outside CI) or fail (CI, or a toolchain that did not build it)."""
    if kind not in STACK_KINDS:
        return
    why = CLIENT_PROGRAMS[kind].missing() or SERVER_PROGRAMS[kind].missing()  # type: ignore[index]
    if why is None:
        return
    absent = [tool for tool in TOOLCHAINS[kind] if shutil.which(tool) is None]
    if absent and os.environ.get("KIT_REQUIRE_STACKS") != "1":
        pytest.skip(f"{kind}: {', '.join(absent)} not installed ({why})")
    pytest.fail(f"{kind} is not built: {why}")
