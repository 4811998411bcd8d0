"""The packet link's per-packet rules as data: cases (a direction's delay, rate or rate steps,
drop-tail queue, jitter, loss, burst length and seed; arrivals with times and sizes) and what
the reference schedule (``kit.delayline.packets.PacketDirection``) does with each packet, in
``tests/vectors/packets.json``.

Both forwarders pass the same file: ``test_packet_vectors.py`` replays it through the Python
schedule, ``linkd/tests/packet_vectors.rs`` through the Rust one. The file is written from the
cases below by ``python tests/unit/packet_vectors.py`` (run it only when a rule changes on
purpose, and say so in the commit: the file is the specification).

A case: ``delay_ns``, ``jitter_ns``, ``loss``, ``burst_len``, ``queue_bytes``, ``seed``
(decimal text), ``rate_bits_s`` or ``steps`` (``[[rate, ns], ...]``) or neither, and
``arrivals`` (``[t_ns, size]``). ``expect``: one due time per arrival (null: dropped) and the
direction's counts.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

from schedule_vectors import write

from kit.delayline.packets import PacketDirection
from kit.delayline.schedule import Bottleneck, RateSteps

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "packets.json"
MS = 1_000_000
US = 1_000
Case = dict[str, Any]


def direction(case: Case) -> PacketDirection:
    """The case's direction, as the forwarder builds one."""
    bottleneck = None
    if "steps" in case:
        bottleneck = Bottleneck(0.0, RateSteps([(r, d) for r, d in case["steps"]]))
    elif "rate_bits_s" in case:
        bottleneck = Bottleneck(case["rate_bits_s"])
    return PacketDirection(
        case["delay_ns"],
        bottleneck=bottleneck,
        queue_bytes=case.get("queue_bytes", 0),
        jitter_ns=case.get("jitter_ns", 0),
        loss=case.get("loss", 0.0),
        burst_len=case.get("burst_len", 0.0),
        seed=int(case.get("seed", "1")),
    )


def replay(case: Case) -> dict[str, Any]:
    """Each arrival's due time (None: dropped), then the counts."""
    packets = direction(case)
    dues = [packets.offer(size, t) for t, size in case["arrivals"]]
    return {"due_ns": dues, "counts": dataclasses.asdict(packets.counts)}


def _steady(count: int, gap_ns: int, size: int, start: int = 0) -> list[list[int]]:
    return [[start + i * gap_ns, size] for i in range(count)]


def _random_arrivals(rng: random.Random, count: int, mtu: int) -> list[list[int]]:
    t, out = 0, []
    for _ in range(count):
        t += rng.choice((0, 0, rng.randint(0, 20 * US), rng.randint(0, 2 * MS)))
        out.append([t, rng.choice((40, 52, 576, mtu, rng.randint(40, mtu)))])
    return out


def fixed_cases() -> list[Case]:
    burst = _steady(40, 0, 1500) + _steady(40, 12 * US, 1500, 2 * MS)
    return [
        {"name": "delay only", "delay_ns": 5 * MS, "arrivals": _steady(10, 100 * US, 1500)},
        {"name": "zero delay", "delay_ns": 0, "arrivals": _steady(5, 0, 60)},
        {
            "name": "rate serialises, queue drops the tail",
            "delay_ns": 1 * MS,
            "rate_bits_s": 100e6,
            "queue_bytes": 64 * 1024,
            "arrivals": burst,
        },
        {
            "name": "queue of one packet",
            "delay_ns": 2 * MS,
            "rate_bits_s": 10e6,
            "queue_bytes": 1500,
            "arrivals": _steady(6, 500 * US, 1500),
        },
        {
            "name": "jitter never reorders",
            "delay_ns": 3 * MS,
            "jitter_ns": 2 * MS,
            "seed": "7",
            "arrivals": _steady(60, 50 * US, 1200),
        },
        {
            "name": "jitter above the delay clamps at 0",
            "delay_ns": 100 * US,
            "jitter_ns": 1 * MS,
            "seed": "3",
            "arrivals": _steady(40, 10 * US, 100),
        },
        {
            "name": "bernoulli loss",
            "delay_ns": 1 * MS,
            "loss": 0.1,
            "seed": "42",
            "arrivals": _steady(200, 10 * US, 1500),
        },
        {
            "name": "gilbert-elliott bursts",
            "delay_ns": 1 * MS,
            "loss": 0.05,
            "burst_len": 4.0,
            "seed": "5",
            "arrivals": _steady(300, 10 * US, 1500),
        },
        {
            "name": "burst length 1",
            "delay_ns": 1 * MS,
            "loss": 0.3,
            "burst_len": 1.0,
            "seed": "9",
            "arrivals": _steady(100, 10 * US, 1500),
        },
        {
            "name": "loss behind a full queue: a drop is not a draw",
            "delay_ns": 1 * MS,
            "rate_bits_s": 50e6,
            "queue_bytes": 16 * 1024,
            "loss": 0.2,
            "jitter_ns": 500 * US,
            "seed": "11",
            "arrivals": burst,
        },
        {
            "name": "rate steps with an outage",
            "delay_ns": 1 * MS,
            "steps": [[20e6, 2 * MS], [0.0, 1 * MS], [80e6, 3 * MS]],
            "queue_bytes": 256 * 1024,
            "arrivals": _steady(120, 30 * US, 1500),
        },
        {
            "name": "a seed above 64 bits (a direction's loss seed is seed x 7919 + 1)",
            "delay_ns": 1 * MS,
            "jitter_ns": 300 * US,
            "loss": 0.02,
            "seed": str(2**64 + 1),
            "arrivals": _steady(100, 20 * US, 1500),
        },
    ]


def random_cases(count: int = 10, seed: int = 2026) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        mtu = rng.choice((1500, 9000))
        case: Case = {
            "name": f"random {i}",
            "delay_ns": rng.randint(0, 20 * MS),
            "jitter_ns": rng.choice((0, rng.randint(0, 5 * MS))),
            "loss": rng.choice((0.0, 0.01, rng.uniform(0.001, 0.3))),
            "seed": str(rng.randint(0, 2**63 - 1) * 2 + rng.randint(0, 1)),
            "queue_bytes": rng.randint(1500, 512 * 1024),
            "arrivals": _random_arrivals(rng, 150, mtu),
        }
        if case["loss"] and rng.random() < 0.5:
            case["burst_len"] = rng.uniform(1.0, 10.0)
        kind = rng.randint(0, 2)
        if kind == 1:
            case["rate_bits_s"] = rng.uniform(1e6, 2e9)
        elif kind == 2:
            case["steps"] = [
                [rng.choice((0.0, rng.uniform(1e6, 1e9))), rng.randint(100 * US, 5 * MS)]
                for _ in range(rng.randint(1, 4))
            ]
            case["steps"][0][0] = rng.uniform(1e6, 1e9)
        cases.append(case)
    return cases


def prng_vectors() -> list[dict[str, Any]]:
    """``random.Random(seed).random()``: the loss draws, bit for bit."""
    out = []
    for seed in (0, 1, 7919 * 3 + 1, 2**32, 2**64 * 7919 + 1):
        rng = random.Random(seed)
        out.append({"seed": str(seed), "draws": [rng.random() for _ in range(20)]})
    return out


def build() -> dict[str, Any]:
    return {
        "about": (
            "The packet link's per-packet schedule as data (tests/unit/packet_vectors.py writes "
            "it from kit.delayline.packets; linkd's forwarder passes it too). Times in ns, sizes "
            "in bytes, due_ns null for a dropped packet."
        ),
        "cases": [{**case, "expect": replay(case)} for case in fixed_cases() + random_cases()],
        "prng": prng_vectors(),
    }


def main() -> int:
    return write(VECTORS, build())


if __name__ == "__main__":
    raise SystemExit(main())
