"""A slow reader beside a fast one on one connection, grpc-java's server, the h2 client's
grpc-java model and real grpc-java: Netty refills grpc-java's connection window on receipt
(``autoRefillConnectionWindow``), so the slow stream holds only its own window and the fast
stream is not held back.

Physics with room for a busy 2-core machine: the fast stream moves at least 4x what the
slow one (read at 8 Mbit/s, 1 MB/s) moves. With connection credit on consumption (the
model before 2026-12-03) the fast stream got 1.2-1.7 MiB/s beside the slow one's 0.96: a
ratio under 2; measured with the fix: 22-128 MiB/s, real grpc-java 42-125.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import kit_here
from stacks_support import need_built

pytestmark = [pytest.mark.integration, pytest.mark.alone]

RUN = ("--streams", "2", "--slow-streams", "1", "--read-rate", "8Mbit", "--rtt", "20ms",
       "--duration", "2s", "--server", "grpc-java", "--json")  # fmt: skip


@pytest.mark.parametrize("client", [("h2", "--window-policy", "grpc-java"), ("grpc-java",)])
def test_the_fast_stream_is_not_held_by_the_slow_one(
    tmp_path: Path, client: tuple[str, ...]
) -> None:
    need_built("grpc-java")
    proc = kit_here("run", "--client", *client, "--records", str(tmp_path / "r"), *RUN)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    slow, fast = data["result_stream_bytes"]
    assert slow > 0
    assert fast >= 4 * slow, (slow, fast)
