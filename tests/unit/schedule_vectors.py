"""The schedule's rules as data: cases (arrivals with times, sizes, queues, seeds) and what the
reference schedule (``kit.delayline.schedule``) does with them, in ``tests/vectors/schedule.json``.

Both delay lines pass the same file: ``test_schedule_vectors.py`` replays it through the
Python schedule, ``linkd/tests/vectors.rs`` through the Rust one. The file is written from the
cases below by ``python tests/unit/schedule_vectors.py`` (run it only when a rule changes on
purpose, and say so in the commit: the file is the specification).

A case has bottlenecks (``{"up": {"rate_bits_s": R}}`` or ``{"down": {"steps": [[R, ns]...]}}``),
queues (``delay_ns``, ``jitter_ns``, ``seed`` (decimal text: seeds exceed 64 bits), ``cap_bytes``, ``bottleneck``: a name or null) and
events, each at a time ``t`` (ns) on queue ``q``: ``push`` (bytes), ``eof``, ``pop``,
``discard``, ``set`` (a queue's ``delay_ns`` / ``jitter_ns`` from then on), ``set_rate`` (of a
bottleneck). ``expect`` holds one outcome per event and the final state.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from kit.delayline.schedule import (
    Bottleneck,
    DelayQueue,
    RateSteps,
    chunk_bytes,
    hash_seed,
)

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "schedule.json"
MS = 1_000_000
US = 1_000
Case = dict[str, Any]


def _bottlenecks(spec: dict[str, Any]) -> dict[str, Bottleneck]:
    out = {}
    for name, b in spec.items():
        if "steps" in b:
            out[name] = Bottleneck(0.0, RateSteps([(r, d) for r, d in b["steps"]]))
        else:
            out[name] = Bottleneck(b["rate_bits_s"])
    return out


def replay(case: Case) -> dict[str, Any]:
    """What the Python schedule does with ``case``: one outcome per event, then the state."""
    bottlenecks = _bottlenecks(case.get("bottlenecks", {}))
    queues = [
        DelayQueue(
            q["delay_ns"],
            q.get("cap_bytes", 64 * 1024 * 1024),
            bottleneck=bottlenecks[q["bottleneck"]] if q.get("bottleneck") else None,
            jitter_ns=q.get("jitter_ns", 0),
            seed=int(q.get("seed", "1")),
        )
        for q in case["queues"]
    ]
    outcomes = [_event(event, queues, bottlenecks) for event in case["events"]]
    final = {
        "queues": [
            {
                "buffered": q.buffered_bytes,
                "peak_buffered": q.peak_buffered_bytes,
                "peak_queued": q.peak_queued_bytes,
                "released": q.released_bytes,
                "delivered_origin": q.delivered.origin_ns,
                "delivered": q.delivered.buckets,
            }
            for q in queues
        ],
        "bottlenecks": {
            name: {"peak_queued": b.peak_queued_bytes, "chunk_bytes": b.chunk_bytes}
            for name, b in bottlenecks.items()
        },
    }
    return {"events": outcomes, "final": final}


def _event(
    event: dict[str, Any], queues: list[DelayQueue], bottlenecks: dict[str, Bottleneck]
) -> dict[str, Any]:
    t = event["t"]
    if "set_rate" in event:
        bottleneck = bottlenecks[event["bottleneck"]]
        try:
            bottleneck.set_rate(event["set_rate"])
        except Exception:
            return {"ok": False}
        return {"ok": True}
    queue = queues[event.get("q", 0)]
    before = len(queue)
    if "push" in event:
        queue.push(b"\x00" * event["push"], t)
    elif "eof" in event:
        queue.push_eof(t)
    elif "discard" in event:
        return {"dropped": queue.discard(t), "queued": _queued(queue, t)}
    elif "set" in event:
        queue.delay_ns = event["set"].get("delay_ns", queue.delay_ns)
        queue.jitter_ns = event["set"].get("jitter_ns", queue.jitter_ns)
        return {}
    elif "pop" in event:
        chunks = queue.pop_due(t)
        return {
            "released": [len(c) for c in chunks],
            "eof_released": queue.eof_released,
            "buffered": queue.buffered_bytes,
            "paused": queue.should_pause_reading,
            "next_due": queue.next_due_ns(),
        }
    added = list(queue._entries)[before:]
    return {
        "entries": [[due, None if c is None else len(c)] for due, c in added],
        "buffered": queue.buffered_bytes,
        "paused": queue.should_pause_reading,
        "peak_queued": queue.peak_queued_bytes,
    }


def _queued(queue: DelayQueue, t: int) -> int | None:
    return None if queue.bottleneck is None else queue.bottleneck.queued_bytes(t)


# --- the cases --------------------------------------------------------------------------------


def _pushes(times_sizes: list[tuple[int, int]], q: int = 0) -> list[dict[str, Any]]:
    return [{"t": t, "q": q, "push": n} for t, n in times_sizes]


def _pops(times: list[int], q: int = 0) -> list[dict[str, Any]]:
    return [{"t": t, "q": q, "pop": True} for t in times]


def _by_time(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(events, key=lambda e: e["t"])  # stable: a push before a pop at the same t


def fixed_cases() -> list[Case]:
    cases: list[Case] = [
        {
            "name": "delay: each chunk leaves its arrival + delay later, never sooner",
            "queues": [{"delay_ns": 5 * MS}],
            "events": [
                *_pushes([(0, 100), (1 * MS, 1), (1 * MS, 1500), (7 * MS, 65536)]),
                *_pops([4_999_999, 5 * MS, 6 * MS, 11 * MS, 12 * MS]),
            ],
        },
        {
            "name": "delay: an older arrival than the last one never overtakes it",
            "queues": [{"delay_ns": 2 * MS}],
            "events": [
                {"t": 10 * MS, "push": 10},
                {"t": 9 * MS, "push": 10},
                {"t": 12 * MS, "pop": True},
            ],
        },
        {
            "name": "zero delay: due at arrival",
            "queues": [{"delay_ns": 0}],
            "events": [{"t": 5, "push": 1}, {"t": 5, "pop": True}],
        },
        {
            "name": "end of stream: after every chunk before it, delay after it arrived",
            "queues": [{"delay_ns": 3 * MS, "jitter_ns": 2 * MS, "seed": "4"}],
            "events": _by_time(
                [
                    *_pushes([(0, 10), (100 * US, 20)]),
                    {"t": 200 * US, "eof": True},
                    {"t": 300 * US, "eof": True},
                    *_pops([2 * MS, 3 * MS, 4 * MS, 6 * MS]),
                ]
            ),
        },
        {
            "name": "buffer cap: reading pauses at the cap, resumes below half of it",
            "queues": [{"delay_ns": 1 * MS, "cap_bytes": 4000}],
            "events": _by_time(
                [
                    *_pushes([(i * 100 * US, 1000) for i in range(6)]),
                    *_pops([1 * MS, 1_100 * US, 1_250 * US, 1_350 * US, 1_500 * US, 2 * MS]),
                ]
            ),
        },
    ]
    cases += jitter_cases() + rate_cases() + step_cases() + live_cases()
    return cases


def jitter_cases() -> list[Case]:
    return [
        {
            "name": "jitter: uniform in [-J, +J], seeded, never reordering",
            "queues": [{"delay_ns": 10 * MS, "jitter_ns": 8 * MS, "seed": "11"}],
            "events": _by_time(
                [
                    *_pushes([(i * 100 * US, 100) for i in range(40)]),
                    *_pops([i * MS for i in range(25)]),
                ]
            ),
        },
        {
            "name": "jitter: a delay is clamped at 0, never negative",
            "queues": [{"delay_ns": 1 * MS, "jitter_ns": 5 * MS, "seed": "3"}],
            "events": _by_time(
                [
                    *_pushes([(i * 50 * US, 1) for i in range(30)]),
                    *_pops([i * MS for i in range(8)]),
                ]
            ),
        },
        {
            "name": "jitter: a large seed and connection (hash_seed of 2^63-1, conn 70000, down)",
            "queues": [
                {
                    "delay_ns": 20 * MS,
                    "jitter_ns": 7_777_777,
                    "seed": str(hash_seed(2**63 - 1, 70000, "down")),
                }
            ],
            "events": _pushes([(i * 10 * US, 1) for i in range(20)]),
        },
    ]


def rate_cases() -> list[Case]:
    rate_8m = {"up": {"rate_bits_s": 8e6}}  # one byte per microsecond
    return [
        {
            "name": "rate: serialised at the rate, then delayed; large reads split in 1 ms chunks",
            "bottlenecks": rate_8m,
            "queues": [{"delay_ns": 5 * MS, "bottleneck": "up"}],
            "events": _by_time(
                [
                    *_pushes([(0, 1500), (0, 1500), (10 * US, 5000), (20 * MS, 100)]),
                    *_pops([5 * MS, 6 * MS, 8 * MS, 13 * MS, 26 * MS]),
                ]
            ),
        },
        {
            "name": "rate: one bottleneck shared by two connections, in arrival order",
            "bottlenecks": {"up": {"rate_bits_s": 100e6}},
            "queues": [
                {"delay_ns": 2 * MS, "bottleneck": "up"},
                {"delay_ns": 2 * MS, "bottleneck": "up"},
            ],
            "events": _by_time(
                [
                    *_pushes([(i * 20 * US, 4000) for i in range(10)], q=0),
                    *_pushes([(i * 20 * US + 5 * US, 3000) for i in range(10)], q=1),
                    *_pops([3 * MS, 5 * MS], q=0),
                    *_pops([3 * MS, 5 * MS], q=1),
                ]
            ),
        },
        {
            "name": "rate: a closed connection gives its unserialised time back",
            "bottlenecks": {"up": {"rate_bits_s": 8e6}},
            "queues": [
                {"delay_ns": 1 * MS, "bottleneck": "up"},
                {"delay_ns": 1 * MS, "bottleneck": "up"},
            ],
            "events": [
                {"t": 0, "q": 0, "push": 20000},
                {"t": 2 * MS, "q": 0, "discard": True},
                {"t": 2 * MS, "q": 1, "push": 1000},
                {"t": 4 * MS, "q": 1, "pop": True},
            ],
        },
        {
            "name": "rate with jitter: the jitter is added after the bottleneck, FIFO holds",
            "bottlenecks": {"down": {"rate_bits_s": 50e6}},
            "queues": [
                {"delay_ns": 4 * MS, "jitter_ns": 3 * MS, "seed": "17", "bottleneck": "down"}
            ],
            "events": _by_time(
                [
                    *_pushes([(i * 30 * US, 2000 + 97 * i) for i in range(30)]),
                    *_pops([i * MS for i in range(12)]),
                ]
            ),
        },
        {
            "name": "rate: a slow link's chunk floor is 1 KiB",
            "bottlenecks": {"up": {"rate_bits_s": 1e6}},
            "queues": [{"delay_ns": 0, "bottleneck": "up"}],
            "events": [{"t": 0, "push": 4000}, {"t": 40 * MS, "pop": True}],
        },
    ]


def step_cases() -> list[Case]:
    steps = [[8e6, 2 * MS], [0.0, 3 * MS], [16e6, 1 * MS]]  # 2000 + 0 + 2000 bytes per 6 ms
    return [
        {
            "name": "rate steps: looped from the first byte on; an outage holds bytes back",
            "bottlenecks": {"down": {"steps": steps}},
            "queues": [{"delay_ns": 1 * MS, "bottleneck": "down"}],
            "events": _by_time(
                [
                    *_pushes([(0, 1500), (1 * MS, 1500), (2_500 * US, 700), (14 * MS, 9000)]),
                    *_pops([i * MS for i in range(40)]),
                ]
            ),
        },
        {
            "name": "rate steps: a read longer than whole periods",
            "bottlenecks": {"down": {"steps": [[1e6, 1 * MS], [3e6, 2 * MS]]}},
            "queues": [{"delay_ns": 0, "bottleneck": "down"}],
            "events": [{"t": 123, "push": 20000}, {"t": 5 * MS, "discard": True}],
        },
    ]


def live_cases() -> list[Case]:
    return [
        {
            "name": "live change: a new delay applies to what arrives next, FIFO holds",
            "queues": [{"delay_ns": 30 * MS}],
            "events": [
                {"t": 0, "push": 10},
                {"t": 1 * MS, "set": {"delay_ns": 5 * MS}},
                {"t": 2 * MS, "push": 10},
                {"t": 40 * MS, "push": 10},
                {"t": 50 * MS, "pop": True},
            ],
        },
        {
            "name": "live change: a new rate for what arrives next; none for rate steps",
            "bottlenecks": {
                "up": {"rate_bits_s": 8e6},
                "down": {"steps": [[8e6, 1 * MS], [16e6, 1 * MS]]},
            },
            "queues": [{"delay_ns": 0, "bottleneck": "up"}],
            "events": [
                {"t": 0, "push": 2000},
                {"t": 1 * MS, "bottleneck": "up", "set_rate": 80e6},
                {"t": 1 * MS, "push": 2000},
                {"t": 1 * MS, "bottleneck": "down", "set_rate": 80e6},
                {"t": 1 * MS, "bottleneck": "up", "set_rate": 0.0},
            ],
        },
    ]


def random_cases(count: int = 8, seed: int = 2024) -> list[Case]:
    """Mixed schedules from a seeded generator: rates, steps, jitter, caps, several queues."""
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        bottlenecks: dict[str, Any] = {}
        if rng.random() < 0.5:
            bottlenecks["up"] = {"rate_bits_s": rng.choice([1e6, 7.5e6, 100e6, 1e9, 3.3e9])}
        if rng.random() < 0.3:
            bottlenecks["down"] = {
                "steps": [
                    [rng.choice([0.0, 2e6, 10e6, 123e6]), rng.randint(1, 5000) * US]
                    for _ in range(rng.randint(1, 4))
                ]
            }
            if not any(r for r, _ in bottlenecks["down"]["steps"]):
                bottlenecks["down"]["steps"][0][0] = 5e6
        queues = []
        for _ in range(rng.randint(1, 3)):
            queues.append(
                {
                    "delay_ns": rng.choice([0, 1, 250 * US, 5 * MS, 33_333_333]),
                    "jitter_ns": rng.choice([0, 0, 1, 777 * US, 4 * MS]),
                    "seed": str(rng.randint(0, 2**40)),
                    "cap_bytes": rng.choice([2048, 65536, 64 * 1024 * 1024]),
                    "bottleneck": rng.choice([None, *bottlenecks]),
                }
            )
        events: list[dict[str, Any]] = []
        t = 0
        for _ in range(rng.randint(20, 80)):
            t += rng.choice([0, 1, 999, 10 * US, 300 * US, 2 * MS])
            q = rng.randrange(len(queues))
            roll = rng.random()
            if roll < 0.6:
                events.append({"t": t, "q": q, "push": rng.choice([1, 17, 1500, 16384, 40_000])})
            elif roll < 0.95:
                events.append({"t": t, "q": q, "pop": True})
            else:
                events.append({"t": t, "q": q, "set": {"delay_ns": rng.randint(0, 10 * MS)}})
        events += [{"t": t + 10**10, "q": q, "pop": True} for q in range(len(queues))]
        cases.append({"name": f"random schedule {index}", "bottlenecks": bottlenecks,
                      "queues": queues, "events": events})  # fmt: skip
    return cases


def prng_vectors() -> list[dict[str, Any]]:
    """``random.Random(seed).randint(-J, J)``: the jitter's draws."""
    out = []
    seeds = [0, 1, 11, 2**32 + 5, 2**63 - 1, hash_seed(2**63 - 1, 70000, "down")]
    for seed in seeds:
        for jitter in (1, 2500, 1_000_000, 2**33 + 3):
            rng = random.Random(seed)
            draws = [rng.randint(-jitter, jitter) for _ in range(20)]
            out.append({"seed": str(seed), "jitter_ns": jitter, "draws": draws})
    return out


def hash_seed_vectors() -> list[dict[str, Any]]:
    out = []
    for seed, conn, direction in ((1, 1, "up"), (1, 1, "down"), (2**63 - 1, 70000, "down")):
        out.append({"seed": str(seed), "conn": conn, "down": direction == "down",
                    "hash": str(hash_seed(seed, conn, direction))})  # fmt: skip
    return out


def chunk_vectors() -> list[dict[str, Any]]:
    rates = [1.0, 1e6, 8.192e6, 8.2e6, 100e6, 1e9, 8.3886e9, 9e9, 40e9]
    return [{"rate_bits_s": r, "chunk_bytes": chunk_bytes(r)} for r in rates]


def build() -> dict[str, Any]:
    cases = fixed_cases() + random_cases()
    return {
        "about": (
            "The delay line's schedule as data (tests/unit/schedule_vectors.py writes it from "
            "kit.delayline.schedule; linkd passes it too). Times in ns, sizes in bytes."
        ),
        "cases": [{**case, "expect": replay(case)} for case in cases],
        "prng": prng_vectors(),
        "hash_seed": hash_seed_vectors(),
        "chunk_bytes": chunk_vectors(),
    }


def dumps(vectors: dict[str, Any]) -> str:
    """One case (or vector) per line: a change to a rule shows as the lines it changes."""
    parts = []
    for key, value in vectors.items():
        if isinstance(value, list):
            rows = ",\n".join(json.dumps(v, separators=(",", ":")) for v in value)
            parts.append(f"{json.dumps(key)}: [\n{rows}\n]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write(path: Path, vectors: dict[str, Any]) -> int:
    """Write a vectors file (``dumps``), say so on stderr; the scripts' exit code."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(vectors), encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)
    return 0


def main() -> int:
    return write(VECTORS, build())


if __name__ == "__main__":
    raise SystemExit(main())
