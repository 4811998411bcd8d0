"""The reference study's tables, and the kit's own, as campaigns of trials.

One module per table holds its cells (``windows`` is table 1, ``wire`` 2, ``starvation`` 3,
``unary`` 4, ``uploads`` 5, ``links`` 6, ``sharing`` 7, ``stacks`` 8, ``policies`` 9, ``loss`` 10,
``pairs`` 11; ``sizing`` says how long the cells
of tables 1, 3 and 4 run). This module holds what every table shares: the registry of names
and numbers, the settings of a ``kit tables`` run, and the campaigns a run needs, each
named after its table's number (``table6-links``). Pure planning: ``kit.campaign`` runs
these campaigns; the settings are stored as the records file's first line (``kit.results``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.errors import UsageError
from kit.plan.campaign import CampaignSpec, Cell
from kit.plan.tables.links import LINKS_CAMPAIGN, LINKS_CONTROL, link_cells
from kit.plan.tables.loss import LOSS_CAMPAIGN, LOSS_CONTROL, loss_cells
from kit.plan.tables.pairs import CONTROL as PAIRS_CONTROL
from kit.plan.tables.pairs import PAIRS_CAMPAIGN, pair_cells
from kit.plan.tables.policies import LINKS_CONTROL as POLICIES_LINKS_CONTROL
from kit.plan.tables.policies import (
    POLICIES_LINKS_CAMPAIGN,
    POLICIES_SHARING_CAMPAIGN,
)
from kit.plan.tables.policies import SHARING_CONTROL as POLICIES_SHARING_CONTROL
from kit.plan.tables.policies import links_cells as policy_links_cells
from kit.plan.tables.policies import sharing_cells as policy_sharing_cells
from kit.plan.tables.sharing import SHARING_CAMPAIGN, SHARING_CONTROL, sharing_cells
from kit.plan.tables.sizing import DEFAULT_TIMING, QUICK_TIMING, CellTiming
from kit.plan.tables.stacks import (
    LINKS_CONTROL as STACKS_LINKS_CONTROL,
)
from kit.plan.tables.stacks import (
    STACKS_LINKS_CAMPAIGN,
    STACKS_UPLOADS_CAMPAIGN,
    STACKS_WINDOWS_CAMPAIGN,
    UPLOADS_CONTROL,
    links_cells,
    windows_cells,
    windows_control,
)
from kit.plan.tables.stacks import (
    upload_cells as stack_upload_cells,
)
from kit.plan.tables.starvation import STARVATION_CAMPAIGN, STARVATION_CONTROL, starvation_cells
from kit.plan.tables.unary import UNARY_BASELINE, UNARY_CAMPAIGN, unary_cells
from kit.plan.tables.uploads import (
    UPLOAD_CONTROL,
    UPLOAD_RTTS_MS,
    upload_campaign_name,
    upload_cells,
)
from kit.plan.tables.windows import (
    TABLE1_CONTROL,
    TABLE1_RTTS_MS,
    table1_campaign_name,
    table1_cells,
)
from kit.plan.tables.wire import WIRE_RTT_MS

# Every table: its name (what ``--only`` takes, and its module's name in every layer) and its
# number (the heading, and its campaigns' prefix; ``--only`` still takes numbers). A new table
# is one line here, its campaigns in ``_campaigns``, and one module per layer.
TABLES: tuple[tuple[str, int], ...] = (
    ("windows", 1),
    ("wire", 2),
    ("starvation", 3),
    ("unary", 4),
    ("uploads", 5),
    ("links", 6),
    ("sharing", 7),
    ("stacks", 8),
    ("policies", 9),
    ("loss", 10),
    ("pairs", 11),
)
TABLE_NAMES: tuple[str, ...] = tuple(name for name, _ in TABLES)
TABLE_NUMBERS: dict[str, int] = dict(TABLES)


@dataclass(frozen=True)
class TablesSettings:
    """What ``kit tables`` was asked for; stored as the first line of the records file."""

    quick: bool = False
    rounds: int = 3
    seed: int = 1
    only: tuple[str, ...] = TABLE_NAMES

    def __post_init__(self) -> None:
        if not 1 <= self.rounds <= 100:
            raise UsageError(f"--rounds: {self.rounds} is outside 1..100")
        if not self.only or any(t not in TABLE_NAMES for t in self.only):
            raise UsageError(
                f"--only: {list(self.only)} must name tables among {', '.join(TABLE_NAMES)}"
            )

    @property
    def timing(self) -> CellTiming:
        return QUICK_TIMING if self.quick else DEFAULT_TIMING


def table_name(token: str | int) -> str:
    """A table's name from its name (any case) or its number; UsageError if there is none."""
    text = str(token).strip().lower()
    by_number = {str(number): name for name, number in TABLES}
    if text in by_number:
        return by_number[text]
    if text in TABLE_NUMBERS:
        return text
    shown = str(token).strip()
    shown = shown if len(shown) <= 20 else shown[:17] + "..."
    raise UsageError(
        f"--only: {shown!r} is not a table: 1-{len(TABLES)} or a name (kit tables --help)"
    )


def parse_only(text: str | None) -> tuple[str, ...]:
    """``"unary,1"`` -> ("windows", "unary") in table order; None -> every table."""
    if text is None:
        return TABLE_NAMES
    chosen = {table_name(part) for part in text.split(",") if part.strip()}
    if not chosen:
        raise UsageError(f"--only: {text!r} names no table (e.g. --only windows,unary)")
    return tuple(name for name in TABLE_NAMES if name in chosen)


@dataclass(frozen=True)
class TableCampaign:
    """One campaign of the tables run and the tables it feeds."""

    spec: CampaignSpec
    tables: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.spec.name


# One campaign: its name, its cells, its control cell, the tables it feeds.
CampaignParts = tuple[str, list[Cell], str, tuple[str, ...]]


def _campaigns(settings: TablesSettings) -> list[CampaignParts]:
    """Every table's campaigns, in table order. Tables 1 and 5 have one per RTT, each with
    its own control and noise floor; table 2 reads table 1's 20 ms campaign."""
    timing, quick = settings.timing, settings.quick
    table1: list[CampaignParts] = [
        (
            table1_campaign_name(rtt),
            table1_cells(rtt, timing),
            TABLE1_CONTROL,
            ("windows", "wire") if rtt == WIRE_RTT_MS else ("windows",),
        )
        for rtt in TABLE1_RTTS_MS
    ]
    uploads: list[CampaignParts] = [
        (upload_campaign_name(rtt), upload_cells(rtt, quick), UPLOAD_CONTROL, ("uploads",))
        for rtt in UPLOAD_RTTS_MS
    ]
    return [
        *table1,
        (STARVATION_CAMPAIGN, starvation_cells(timing), STARVATION_CONTROL, ("starvation",)),
        (UNARY_CAMPAIGN, unary_cells(timing), UNARY_BASELINE, ("unary",)),
        *uploads,
        (LINKS_CAMPAIGN, link_cells(quick), LINKS_CONTROL, ("links",)),
        (SHARING_CAMPAIGN, sharing_cells(quick), SHARING_CONTROL, ("sharing",)),
        *_stacks_campaigns(quick),
        *_policies_campaigns(quick),
        (LOSS_CAMPAIGN, loss_cells(quick), LOSS_CONTROL, ("loss",)),
        (PAIRS_CAMPAIGN, pair_cells(), PAIRS_CONTROL, ("pairs",)),
    ]


def _stacks_campaigns(quick: bool) -> list[CampaignParts]:
    """Table 8's three parts, each a campaign with its own control and noise floor."""
    return [
        (STACKS_WINDOWS_CAMPAIGN, windows_cells(quick), windows_control(quick), ("stacks",)),
        (STACKS_LINKS_CAMPAIGN, links_cells(quick), STACKS_LINKS_CONTROL, ("stacks",)),
        (STACKS_UPLOADS_CAMPAIGN, stack_upload_cells(quick), UPLOADS_CONTROL, ("stacks",)),
    ]


def _policies_campaigns(quick: bool) -> list[CampaignParts]:
    """Table 9's two parts: the policies on links, and beside a slow reader."""
    return [
        (
            POLICIES_LINKS_CAMPAIGN,
            policy_links_cells(quick),
            POLICIES_LINKS_CONTROL,
            ("policies",),
        ),
        (
            POLICIES_SHARING_CAMPAIGN,
            policy_sharing_cells(quick),
            POLICIES_SHARING_CONTROL,
            ("policies",),
        ),
    ]


# Tables that run fewer rounds than the others, to fit the whole run's budget: the stacks
# table's 68 cells (JVM and Node clients start in 0.5-0.8 s each) take ~2 min a round.
# The policies table's 104 link cells (JVM clients among them) likewise; the loss table's 21
# runs take ~85 s a round (each cell builds its namespaces and rides slow start).
ROUNDS_FEWER: dict[str, int] = {"stacks": 1, "policies": 1, "loss": 1}
# The pairs table says who hangs up on whom, not how fast: one round, its cells all at once
# (each waits most of a minute for keepalive to act).
ONE_ROUND = frozenset({"pairs"})
TOGETHER = frozenset({"pairs"})


def table_rounds(table: str, rounds: int) -> int:
    """The rounds one table runs in a run of ``rounds`` (at least 1)."""
    if table in ONE_ROUND:
        return 1
    return max(1, rounds - ROUNDS_FEWER.get(table, 0))


def plan_tables(settings: TablesSettings) -> list[TableCampaign]:
    """The campaigns the selected tables need (``--only wire`` runs table 1's 20 ms one)."""
    wanted = set(settings.only)
    return [
        TableCampaign(
            CampaignSpec(
                name,
                tuple(cells),
                control,
                table_rounds(fed[0], settings.rounds),
                settings.seed,
                together=fed[0] in TOGETHER,
            ),
            fed,
        )
        for name, cells, control, fed in _campaigns(settings)
        if wanted & set(fed)
    ]
