"""The reference study's tables as campaigns of trials.

One campaign per table (table 1 has one per RTT, so each RTT gets its own duplicate control
and noise floor; table 2 is read from the frame tap of table 1's 20 ms campaign). Cells are
sized by their expected throughput: a timed cell lasts at least 20 RTTs and long enough to
carry ``min_bytes`` at window/RTT, capped so the whole run stays within a few minutes.

Dynamic windows depend on the transfer length, so every dynamic row is measured twice: a
short fixed transfer of 8 MiB (the reference's shape) and a timed one. Pure planning:
``kit.campaign`` runs these campaigns; the settings are stored as the records file's first
line (``kit.results``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kit.errors import UsageError
from kit.plan.campaign import CampaignSpec, Cell
from kit.plan.links import LINKS_CAMPAIGN, LINKS_CONTROL, link_cells
from kit.plan.trial import (
    DEFAULT_MESSAGE_BYTES,
    ClientConfig,
    Link,
    Trial,
    Workload,
    theory_mib_s,
)
from kit.plan.units import KIB, MIB, size_spec
from kit.plan.upload_table import UPLOAD_CONTROL, UPLOAD_RTTS_MS, campaign_name, upload_cells

# Every table: its name (what ``--only`` takes) and its number (the heading; ``--only``
# still takes numbers). A new table is one line here plus its campaign in ``plan_tables``.
TABLES: tuple[tuple[str, int], ...] = (
    ("windows", 1),
    ("wire", 2),
    ("starvation", 3),
    ("unary", 4),
    ("uploads", 5),
    ("links", 6),
    ("sharing", 7),
)
TABLE_NAMES: tuple[str, ...] = tuple(name for name, _ in TABLES)
TABLE_NUMBERS: dict[str, int] = dict(TABLES)
WINDOWS_BYTES: tuple[int, ...] = (64 * KIB, 256 * KIB, MIB, 4 * MIB)
TABLE1_RTTS_MS: tuple[float, ...] = (0.0, 5.0, 20.0)
SHORT_TRANSFER_BYTES = 8 * MIB  # the reference's transfer (grpc-go: ~23 MiB/s at 20 ms)
STARVATION_RTT_MS = 5.0
STARVATION_STREAMS = 4
STARVATION_BYTES_PER_STREAM = 4 * MIB
STARVATION_STREAM_WINDOW = MIB
STARVATION_CONN_WINDOWS: tuple[int, ...] = (64 * KIB, 4 * MIB)
UNARY_RTT_MS = 5.0
MIN_RTTS_PER_CELL = 20
MIN_SIZED_MESSAGES = 4
SIZED_MAX_THEORY_MIB_S = 200.0
TABLE1_PREFIX = "table1-"
WIRE_CAMPAIGN = "table1-rtt20ms"  # table 2 reads the frames of table 1's 20 ms campaign
STARVATION_CAMPAIGN = "table3-starvation"
UNARY_CAMPAIGN = "table4-unary"
SHARING_CAMPAIGN = "table6-sharing"


@dataclass(frozen=True)
class CellTiming:
    """How long cells run: timed cells last base_s..max_s (never under 20 RTTs)."""

    base_s: float
    max_s: float
    min_bytes: int
    unary_calls: int
    timeout_floor_s: float = 10.0


DEFAULT_TIMING = CellTiming(base_s=1.0, max_s=1.5, min_bytes=4 * MIB, unary_calls=200)
QUICK_TIMING = CellTiming(base_s=0.3, max_s=0.5, min_bytes=MIB, unary_calls=100)


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
    choices = ", ".join(f"{name} ({number})" for name, number in TABLES)
    raise UsageError(f"--only: {str(token).strip()!r} is not a table; choose among {choices}")


def parse_only(text: str | None) -> tuple[str, ...]:
    """``"unary,1"`` -> ("windows", "unary") in table order; None -> every table."""
    if text is None:
        return TABLE_NAMES
    chosen = {table_name(part) for part in text.split(",") if part.strip()}
    if not chosen:
        raise UsageError(f"--only: {text!r} names no table (e.g. --only windows,unary)")
    return tuple(name for name in TABLE_NAMES if name in chosen)


# --- cell sizing ----------------------------------------------------------------------------


def timed_duration_s(rtt_ms: float, expected_mib_s: float | None, timing: CellTiming) -> float:
    """base_s, longer for slow cells (min_bytes at the expected rate), capped, >= 20 RTTs."""
    wanted = timing.base_s
    if expected_mib_s:
        wanted = max(wanted, timing.min_bytes / MIB / expected_mib_s)
    return max(min(wanted, timing.max_s), MIN_RTTS_PER_CELL * rtt_ms / 1000.0)


def _timeout_s(expected_s: float, timing: CellTiming) -> float:
    return max(timing.timeout_floor_s, 10 * expected_s)


def timed_trial(link: Link, client: ClientConfig, timing: CellTiming, label: str) -> Trial:
    probe = Trial(link=link, client=client)
    duration = timed_duration_s(link.rtt_ms, theory_mib_s(probe), timing)
    workload = Workload(duration_s=duration, timeout_s=_timeout_s(duration, timing))
    return Trial(link=link, client=client, workload=workload, label=label)


def fixed_trial(
    link: Link, client: ClientConfig, workload: Workload, timing: CellTiming, label: str
) -> Trial:
    trial = Trial(link=link, client=client, workload=workload, label=label)
    total = (workload.bytes_per_stream or 0) * workload.streams
    expected = theory_mib_s(trial)
    expected_s = total / MIB / expected if expected else 1.0
    return replace(trial, workload=replace(workload, timeout_s=_timeout_s(expected_s, timing)))


# --- the tables ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TableCampaign:
    """One campaign of the tables run and the tables it feeds."""

    spec: CampaignSpec
    tables: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.spec.name


def rtt_name(rtt_ms: float) -> str:
    return "loopback" if rtt_ms == 0 else f"rtt{rtt_ms:g}ms"


def table1_cells(rtt_ms: float, timing: CellTiming) -> list[Cell]:
    """grpcio dynamic, h2 static x4, grpcio static x4, h2 dynamic; dynamic rows short and timed."""
    link = Link.from_rtt(rtt_ms)
    short = Workload(bytes_per_stream=SHORT_TRANSFER_BYTES)
    cells: list[Cell] = []
    for kind in ("grpcio", "h2"):
        dynamic = ClientConfig(kind=kind, window_mode="dynamic")
        label = f"{kind} dynamic"
        cells.append(Cell(f"{kind}-dynamic-8MiB", fixed_trial(link, dynamic, short, timing, label)))
        cells.append(Cell(f"{kind}-dynamic-timed", timed_trial(link, dynamic, timing, label)))
        for window in WINDOWS_BYTES:
            static = ClientConfig(kind=kind, window_mode="static", window_bytes=window)
            name = f"{kind} static {size_spec(window)}"
            cells.append(Cell(name.replace(" ", "-"), static_trial(link, static, timing, name)))
    return cells


def static_trial(link: Link, client: ClientConfig, timing: CellTiming, label: str) -> Trial:
    """h2 static rows with an RTT: a fixed transfer sized to last the timed duration at
    window/RTT, so throughput = bytes / time to the last byte, the reference's own measure
    (it also starts at the request, so the first RTT is in it, as there).

    Above 200 MiB/s the processes, not the window, set the pace (a transfer sized by theory
    would run long), so those rows stay timed; grpcio rows are timed because C-core's extra
    credit makes window/RTT a poor size estimate for them.
    """
    theory = theory_mib_s(Trial(link=link, client=client))
    if client.kind != "h2" or theory is None or theory > SIZED_MAX_THEORY_MIB_S:
        return timed_trial(link, client, timing, label)
    duration = timed_duration_s(link.rtt_ms, theory, timing)
    workload = Workload(bytes_per_stream=sized_transfer_bytes(theory, duration))
    return fixed_trial(link, client, workload, timing, label)


def sized_transfer_bytes(
    expected_mib_s: float, duration_s: float, message_bytes: int = DEFAULT_MESSAGE_BYTES
) -> int:
    """Whole messages carrying ``duration_s`` at the expected rate (at least 4 messages)."""
    messages = max(MIN_SIZED_MESSAGES, round(expected_mib_s * MIB * duration_s / message_bytes))
    return messages * message_bytes


TABLE1_CONTROL = "h2-static-1MiB"


def _campaign(
    name: str,
    cells: list[Cell],
    control_key: str,
    settings: TablesSettings,
    tables: tuple[str, ...],
) -> TableCampaign:
    spec = CampaignSpec(name, tuple(cells), control_key, settings.rounds, settings.seed)
    return TableCampaign(spec, tables)


def table1_campaign(rtt_ms: float, settings: TablesSettings) -> TableCampaign:
    cells = table1_cells(rtt_ms, settings.timing)
    tables = ("windows", "wire") if rtt_ms == 20.0 else ("windows",)
    return _campaign(f"{TABLE1_PREFIX}{rtt_name(rtt_ms)}", cells, TABLE1_CONTROL, settings, tables)


def starvation_cells(timing: CellTiming) -> list[Cell]:
    """4 streams x 4 MiB on one connection, stream windows 1 MiB, conn window 64 KiB vs 4 MiB."""
    link = Link.from_rtt(STARVATION_RTT_MS)
    workload = Workload(streams=STARVATION_STREAMS, bytes_per_stream=STARVATION_BYTES_PER_STREAM)
    cells = []
    for conn_window in STARVATION_CONN_WINDOWS:
        client = ClientConfig(
            kind="h2",
            window_mode="static",
            window_bytes=STARVATION_STREAM_WINDOW,
            conn_window_bytes=conn_window,
        )
        label = f"h2 conn window {size_spec(conn_window)}"
        cells.append(
            Cell(
                f"h2-conn-{size_spec(conn_window)}",
                fixed_trial(link, client, workload, timing, label),
            )
        )
    return cells


STARVATION_CONTROL = "h2-conn-64KiB"  # the window-bound cell: a 40 ms cell's spread says little


def starvation_campaign(settings: TablesSettings) -> TableCampaign:
    cells = starvation_cells(settings.timing)
    return _campaign(STARVATION_CAMPAIGN, cells, STARVATION_CONTROL, settings, ("starvation",))


def unary_cells(timing: CellTiming) -> list[Cell]:
    """grpcio dynamic (the baseline) vs static 64 KiB, and the same pair on the h2 client.

    Comparing grpcio dynamic with h2 static 64 KiB alone would mix two stacks; the h2 dynamic
    row lets each client's window effect be judged on its own stack.
    """
    link = Link.from_rtt(UNARY_RTT_MS)
    workload = Workload(
        kind="unary",
        calls=timing.unary_calls,
        timeout_s=_timeout_s(timing.unary_calls * UNARY_RTT_MS / 1000, timing),
    )
    clients = {
        "grpcio-dynamic": ClientConfig(kind="grpcio", window_mode="dynamic"),
        "grpcio-static-64KiB": ClientConfig(
            kind="grpcio", window_mode="static", window_bytes=64 * KIB
        ),
        "h2-dynamic": ClientConfig(kind="h2", window_mode="dynamic"),
        "h2-static-64KiB": ClientConfig(kind="h2", window_mode="static", window_bytes=64 * KIB),
    }
    return [
        Cell(key, Trial(link=link, client=c, workload=workload, label=key.replace("-", " ")))
        for key, c in clients.items()
    ]


UNARY_BASELINE = "grpcio-dynamic"


def unary_campaign(settings: TablesSettings) -> TableCampaign:
    return _campaign(
        UNARY_CAMPAIGN, unary_cells(settings.timing), UNARY_BASELINE, settings, ("unary",)
    )


def uploads_campaign(rtt_ms: float, settings: TablesSettings) -> TableCampaign:
    """Table 5 at one RTT (``kit.plan.upload_table``), with its own control and floor."""
    cells = upload_cells(rtt_ms, settings.quick)
    return _campaign(campaign_name(rtt_ms), cells, UPLOAD_CONTROL, settings, ("uploads",))


def links_campaign(settings: TablesSettings) -> TableCampaign:
    """The estimator table: dynamic windows judged against each link's BDP."""
    cells = link_cells(settings.quick)
    return _campaign(LINKS_CAMPAIGN, cells, LINKS_CONTROL, settings, ("links",))


def plan_tables(settings: TablesSettings) -> list[TableCampaign]:
    """The campaigns the selected tables need (table 2 reads table 1's 20 ms campaign)."""
    wanted = set(settings.only)
    campaigns = [table1_campaign(rtt, settings) for rtt in TABLE1_RTTS_MS]
    campaigns += [starvation_campaign(settings), unary_campaign(settings)]
    campaigns += [uploads_campaign(rtt, settings) for rtt in UPLOAD_RTTS_MS]
    campaigns.append(links_campaign(settings))
    campaigns.append(
        _campaign(
            SHARING_CAMPAIGN,
            sharing_cells(settings.quick),
            SHARING_CONTROL,
            settings,
            ("sharing",),
        )
    )
    return [c for c in campaigns if wanted & set(c.tables)]


# --- the sharing table: one slow reader beside a fast stream; the pool's shares ---------------

SHARING_RTT_MS = 20.0
SHARING_READ_RATE_BITS_S = 20e6
SHARING_WINDOW = 4 * MIB
SHARING_POOL_STREAMS: tuple[int, ...] = (1, 2, 8)
SHARING_CONTROL = "receipt-4MiB-beside-fast"
# Receive policies of the first part: key -> (label, client).
SHARING_POLICIES: tuple[tuple[str, str, ClientConfig], ...] = (
    (
        "read-4MiB",
        "h2 static 4 MiB, conn credit on read",
        ClientConfig(
            kind="h2",
            window_mode="static",
            window_bytes=SHARING_WINDOW,
            conn_window_bytes=SHARING_WINDOW,
            conn_credit="read",
        ),
    ),
    (
        "receipt-4MiB",
        "h2 static 4 MiB, conn credit on receipt",
        ClientConfig(
            kind="h2",
            window_mode="static",
            window_bytes=SHARING_WINDOW,
            conn_window_bytes=SHARING_WINDOW,
        ),
    ),
    ("h2-dynamic", "h2 dynamic (grpc-go's receiver)", ClientConfig(kind="h2")),
    ("pool", "h2 pool 1.6 MB", ClientConfig(kind="h2", window_mode="pool")),
    ("grpcio", "grpcio (C-core)", ClientConfig(kind="grpcio")),
)


def sharing_cells(quick: bool = False) -> list[Cell]:
    """Two streams on one connection at 20 ms, the first read at 20 Mbit/s or at full speed,
    under each policy (fixed transfers: the fast stream's finish time is the measure); then
    1, 2 and 8 streams under the pool, timed (each stream's window is its share)."""
    link = Link.from_rtt(SHARING_RTT_MS)
    size = 8 * MIB  # long enough for a slow reader to fill a 4 MiB connection window
    cells = []
    for key, label, client in SHARING_POLICIES:
        for slow in (1, 0):
            workload = Workload(
                streams=2,
                bytes_per_stream=size,
                slow_streams=slow,
                read_rate_bits_s=SHARING_READ_RATE_BITS_S if slow else None,
                timeout_s=60.0,
            )
            beside = "slow" if slow else "fast"
            trial = Trial(link=link, client=client, workload=workload, label=f"{label}, {beside}")
            cells.append(Cell(f"{key}-beside-{beside}", trial))
    pool = ClientConfig(kind="h2", window_mode="pool")
    for streams in SHARING_POOL_STREAMS:
        workload = Workload(streams=streams, duration_s=0.3 if quick else 0.6, timeout_s=30.0)
        label = f"h2 pool, {streams} receiving"
        trial = Trial(link=link, client=pool, workload=workload, label=label)
        cells.append(Cell(f"pool-{streams}-streams", trial))
    return cells
