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
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from kit.analysis.modelcheck import check_rows, load_shifts
from kit.campaign.runner import ProgressLine, campaign_records, run_campaigns
from kit.errors import KitError
from kit.plan.modelcheck import DEFAULT_ROUNDS, parse_pairs, plan
from kit.report.modelcheck import render

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


def run(records: Path, rounds: int, seed: int, pairs: tuple[str, ...]) -> str:
    campaigns = plan(rounds, seed, pairs)
    records.parent.mkdir(parents=True, exist_ok=True)
    for condition, spec in campaigns:
        print(f"-- {spec.name} ({condition})", file=sys.stderr, flush=True)
        with busy_core(condition == "busy"):
            run_campaigns([spec], records, resume=True, progress=_progress)
    measurements = campaign_records(records, [spec.name for _, spec in campaigns])
    rows = check_rows(measurements)
    return render(rows, load_shifts(rows))


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
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        pairs = parse_pairs(args.pair)
        if args.report_only:
            rows = check_rows(campaign_records(args.records, _names(args.rounds, pairs)))
            print(render(rows, load_shifts(rows)))
            return 0
        print(f"records: {args.records}", file=sys.stderr)
        print(run(args.records, args.rounds, args.seed, pairs))
    except KitError as exc:
        print(f"modelcheck: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"modelcheck: interrupted; records so far in {args.records}", file=sys.stderr)
        return 130
    return 0


def _names(rounds: int, pairs: tuple[str, ...]) -> list[str]:
    return [spec.name for _, spec in plan(rounds, pairs=pairs)]


if __name__ == "__main__":
    sys.exit(main())
