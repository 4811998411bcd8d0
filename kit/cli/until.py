"""``--until-decided``: the options, and what ``kit compare`` and ``kit knee`` decide by.

Thin: the budget is parsed into ``kit.plan.schedule.Budget``; what is still open comes from
the same analysis the report prints (``kit.analysis.compare.undecided_of``,
``kit.analysis.knee.undecided_of``); the runner adds the rounds
(``kit.campaign.runner.run_campaigns(until=...)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from kit.analysis import compare as compare_analysis
from kit.analysis import knee as knee_analysis
from kit.analysis.compare import CompareMeta, build_report
from kit.campaign.runner import Judge, UntilDecided
from kit.errors import UsageError
from kit.plan.campaign import CampaignSpec
from kit.plan.compare import ComparePlan
from kit.plan.schedule import DEFAULT_MAX_ROUNDS, Undecided, budget_of
from kit.results.records import Measurement

UntilDecidedFlag = Annotated[
    bool,
    typer.Option(
        "--until-decided",
        help="Add rounds to the cells not decided yet (and the control) until each is, "
        "within --max-rounds and --time-limit.",
    ),
]
MaxRounds = Annotated[
    int | None,
    typer.Option(
        "--max-rounds",
        help=f"--until-decided: at most N rounds per cell in all (default {DEFAULT_MAX_ROUNDS}).",
    ),
]
TimeLimit = Annotated[
    str | None,
    typer.Option(
        "--time-limit",
        metavar="DURATION",
        help="--until-decided: start no round that would end later than this (e.g. 10m).",
    ),
]


def until_of(
    plans: Sequence[ComparePlan],
    until_decided: bool,
    max_rounds: int | None,
    time_limit: str | None,
    knee: bool = False,
) -> UntilDecided | None:
    """The runner's ``until`` for these plans (None without ``--until-decided``)."""
    budget = budget_of(until_decided, max_rounds, time_limit)
    if budget is None:
        return None
    return UntilDecided(_judge(plans, knee), budget)


def _judge(plans: Sequence[ComparePlan], knee: bool) -> Judge:
    by_name = {p.campaign_name: p for p in plans}

    def judge(spec: CampaignSpec, records: Sequence[Measurement]) -> Undecided:
        plan = by_name.get(spec.name)
        if plan is None or not records:
            return Undecided({})
        report = build_report(CompareMeta.of(plan), records)
        if not knee:
            return compare_analysis.undecided_of(report)
        try:
            return knee_analysis.undecided_of(knee_analysis.analyse_sweep(plan, report))
        except UsageError:  # no window has a result yet: nothing to decide
            return Undecided({})

    return judge
