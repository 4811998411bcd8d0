"""The tap scanner's vectors (``tests/vectors/scanner.json``), which linkd's scanner passes
too: the Python reference gives every case's records, byte for byte."""

from __future__ import annotations

import json
from typing import Any

import pytest
from scanner_vectors import VECTORS, build, records

SPEC = json.loads(VECTORS.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", SPEC["cases"], ids=lambda c: c["name"])
def test_the_python_scanner_gives_each_cases_records(case: dict[str, Any]) -> None:
    chunks = [bytes.fromhex(c) for c in case["chunks"]]
    expected = {k: case[k] for k in ("records", "held", "in_data_payload")}
    assert records(case["client_side"], chunks) == expected


def test_the_file_is_what_the_cases_write() -> None:
    assert build() == SPEC
