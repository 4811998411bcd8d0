"""The delay lines every delay-line test runs on: the compiled one (``linkd/``) where built,
and the Python one (its fallback, and the reference of the schedule's vectors). The compiled
line not built is a skip, except in CI (``KIT_REQUIRE_STACKS=1``), where it is a failure."""

from __future__ import annotations

import os

import pytest

from kit.plan.programs import PROXY_PROGRAMS

LINES = ("python", "compiled")


@pytest.fixture(params=LINES)
def line(request: pytest.FixtureRequest) -> str:
    kind = str(request.param)
    why = PROXY_PROGRAMS[kind].missing()
    if why is not None:
        if os.environ.get("KIT_REQUIRE_STACKS") == "1":
            pytest.fail(f"the {kind} delay line: {why}")
        pytest.skip(f"the {kind} delay line: {why}")
    return kind
