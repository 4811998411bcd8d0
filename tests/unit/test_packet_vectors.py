"""The packet link's per-packet rules, tested once: the vectors both forwarders pass
(``tests/vectors/packets.json``, replayed here through ``kit.delayline.packets``;
``linkd/tests/packet_vectors.rs`` replays them through the Rust schedule)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from packet_vectors import VECTORS, build, replay

SPEC = json.loads(VECTORS.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", SPEC["cases"], ids=lambda c: c["name"][:60])
def test_the_python_packet_schedule_gives_each_cases_outcomes(case: dict[str, Any]) -> None:
    inputs = {k: v for k, v in case.items() if k != "expect"}
    assert replay(inputs) == case["expect"]


def test_the_packet_file_is_what_the_cases_write() -> None:
    """A rule changed on purpose is a regenerated file (``python tests/unit/packet_vectors.py``)."""
    assert json.loads(json.dumps(build())) == SPEC


def test_loss_draws_are_the_vectors() -> None:
    for v in SPEC["prng"]:
        rng = random.Random(int(v["seed"]))
        assert [rng.random() for _ in range(20)] == v["draws"]


def test_the_cases_drop_deliver_and_lose() -> None:
    """The file exercises every outcome: queue drops, losses, and deliveries."""
    counts = [case["expect"]["counts"] for case in SPEC["cases"]]
    assert any(c["queue_drops"] for c in counts)
    assert any(c["lost_packets"] for c in counts)
    assert all(c["delivered_packets"] for c in counts)
