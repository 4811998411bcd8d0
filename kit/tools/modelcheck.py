"""``make modelcheck``: the h2 client's models beside the stacks they model, same delay line.

The pairs (``--pair``, default all): grpc-go's model beside real grpc-go, hyper's beside
tonic with its adaptive window on, grpc-java's beside real grpc-java. Runs
``kit.plan.modelcheck``'s cells with the campaign runner (seeded, reshuffled rounds,
a duplicate of every cell), round by round on a quiet machine and with one core kept busy
by an unrelated loop (a nice-0 Python process this tool starts for the busy rounds and
stops after each; every process it starts is stopped, also on Ctrl-C and SIGTERM), appends
every record to a JSONL file and prints the table of ``kit.report.modelcheck``.
About 5-6 minutes per pair on 2 cores with the default 3 rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from kit.analysis.modelcheck import CheckRow, check_rows, load_shifts
from kit.campaign.runner import ProgressLine, run_campaigns
from kit.errors import KitError
from kit.plan.campaign import CampaignSpec, expected_campaign_s
from kit.plan.modelcheck import (
    DEFAULT_ROUNDS,
    campaign,
    campaign_name,
    parse_campaign,
    parse_pairs,
    plan,
    split_key,
)
from kit.plan.schedule import DEFAULT_MAX_ROUNDS, Budget, UntilOutcome, budget_of
from kit.report.compare import until_lines
from kit.report.modelcheck import render
from kit.results.records import Measurement
from kit.results.store import read_records

BUSY_LOOP = "while True:\n    pass\n"


@contextlib.contextmanager
def busy_core(enabled: bool) -> Iterator[None]:
    """One core kept busy by a plain Python loop for the duration (nothing when disabled)."""
    if not enabled:
        yield
        return
    proc = subprocess.Popen([sys.executable, "-c", BUSY_LOOP], stdin=subprocess.DEVNULL)
    try:
        time.sleep(0.2)  # let it reach the loop before the first cell starts
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _progress(line: ProgressLine) -> None:
    print(line.text(), file=sys.stderr, flush=True)


def run(
    records: Path, rounds: int, seed: int, pairs: tuple[str, ...], budget: Budget | None = None
) -> str:
    started = time.monotonic()
    campaigns = plan(rounds, seed, pairs)
    records.parent.mkdir(parents=True, exist_ok=True)
    for condition, spec in campaigns:
        _run_one(records, condition, spec)
    until = None if budget is None else until_decided(records, seed, pairs, budget, started)
    rows = check_rows(modelcheck_records(records))
    text = render(rows, load_shifts(rows))
    return text if until is None else "\n\n".join([text, "\n".join(until_lines(until))])


def _run_one(records: Path, condition: str, spec: CampaignSpec) -> None:
    print(f"-- {spec.name} ({condition})", file=sys.stderr, flush=True)
    with busy_core(condition == "busy"):
        run_campaigns([spec], records, resume=True, progress=_progress)


def modelcheck_records(records: Path) -> list[Measurement]:
    """Every model-check record of the file: the planned rounds' and those ``--until-decided``
    added (``modelcheck-...-r<i>`` beyond ``--rounds``)."""
    if not records.exists():
        return []
    return [m for m in read_records(records).measurements if parse_campaign(m.tags.campaign)]


def until_decided(
    records: Path, seed: int, pairs: tuple[str, ...], budget: Budget, started: float
) -> UntilOutcome:
    """Rounds added, one at a time, to the rows not decided yet (both stacks of their cell,
    with their duplicates, and the pair's control), each its own campaign like any round,
    on the quiet or busy machine its condition needs; until every row is decided or the
    budget is spent."""
    added = 0
    while True:
        measurements = modelcheck_records(records)
        rows = [r for r in check_rows(measurements) if r.cell.pair in pairs]
        open_ = open_rows(rows)
        if not open_:
            return UntilOutcome(added, {}, "")
        still = {f"{p} ({c})": cells for (p, c), cells in open_.items()}
        specs = [
            (condition, spec)
            for (pair, condition), cells in open_.items()
            if (spec := added_campaign(measurements, pair, condition, cells, seed, budget))
        ]
        if not specs:
            return UntilOutcome(added, still, f"--max-rounds {budget.max_rounds} reached")
        limit = budget.time_limit_s
        need_s = sum(expected_campaign_s(spec) for _, spec in specs)
        if limit is not None and time.monotonic() - started + need_s > limit:
            return UntilOutcome(
                added, still, f"--time-limit {limit:g}s: the next round would end after it"
            )
        for condition, spec in specs:
            _run_one(records, condition, spec)
        added += 1


def open_rows(rows: list[CheckRow]) -> dict[tuple[str, str], dict[str, int | None]]:
    """(pair, condition) -> its undecided cells -> the rounds each needs."""
    out: dict[tuple[str, str], dict[str, int | None]] = {}
    for row in rows:
        if row.undecided and row.decision is not None:
            out.setdefault((row.cell.pair, row.condition), {})[row.cell.name] = row.decision.needs
    return out


def added_campaign(
    measurements: list[Measurement],
    pair: str,
    condition: str,
    cells: dict[str, int | None],
    seed: int,
    budget: Budget,
) -> CampaignSpec | None:
    """The next round of ``pair`` in ``condition`` for ``cells`` only (and the control);
    None when it would take them past ``budget.max_rounds``."""
    done = [
        where[1]
        for m in measurements
        if (where := parse_campaign(m.tags.campaign)) is not None
        and where[0] == condition
        and m.tags.campaign == campaign_name(condition, where[1], pair)
    ]
    next_round = 1 + max(done, default=-1)
    if next_round >= budget.max_rounds:
        return None
    full = campaign("busy" if condition == "busy" else "quiet", next_round, seed, pair)
    kept = tuple(c for c in full.cells if split_key(c.key)[0] in cells or c.key == full.control_key)
    return dataclasses.replace(full, cells=kept)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kit.tools.modelcheck", description=__doc__)
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--pair", default="all", help="grpc-go, hyper, grpc-java (comma-separated) or all"
    )
    stamp = time.strftime("%Y%m%d-%H%M%S")
    parser.add_argument("--records", type=Path, default=Path(f"results/modelcheck-{stamp}.jsonl"))
    parser.add_argument(
        "--report-only", action="store_true", help="render --records without measuring"
    )
    parser.add_argument(
        "--until-decided",
        action="store_true",
        help="add rounds to the rows not decided yet (and the control) until each is, "
        "within --max-rounds and --time-limit",
    )
    parser.add_argument(
        "--max-rounds",
        type=int,
        default=None,
        help=f"--until-decided: at most N rounds per row in all (default {DEFAULT_MAX_ROUNDS})",
    )
    parser.add_argument(
        "--time-limit",
        default=None,
        metavar="DURATION",
        help="--until-decided: start no round that would end later than this (e.g. 30m)",
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        pairs = parse_pairs(args.pair)
        budget = budget_of(args.until_decided, args.max_rounds, args.time_limit)
        if args.report_only:
            rows = check_rows(modelcheck_records(args.records))
            rows = [r for r in rows if r.cell.pair in pairs]
            print(render(rows, load_shifts(rows)))
            return 0
        print(f"records: {args.records}", file=sys.stderr)
        print(run(args.records, args.rounds, args.seed, pairs, budget))
    except KitError as exc:
        print(f"modelcheck: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"modelcheck: interrupted; records so far in {args.records}", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
