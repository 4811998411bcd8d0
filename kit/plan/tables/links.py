"""Table 6, the estimators, as cells: each dynamic (BDP) window on links with a bottleneck.

For each link (rate x RTT) the table runs grpcio's C-core BDP estimator, our h2 client's
grpc-go-style estimator and, as the control, a static h2 window of exactly the BDP. Every
cell starts cold (no warm-up transfer on its connection), so the delivery trace shows the
estimator's whole climb. Pure planning; ``kit.plan.tables`` wraps the cells in a campaign.

Links chosen for a 2-core machine: up to 1 Gbit/s (about 120 MiB/s; the delay line, the
server and either client stay well under one core each there), RTTs 20-100 ms. The 100
Mbit/s x 50 ms link runs 3 s: the table's check is that both estimators carry >= 0.8 of
the rate over those 3 s.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.plan.campaign import Cell
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import rate_spec

LINKS_CAMPAIGN = "table6-links"
MIN_RTTS = 20


@dataclass(frozen=True)
class LinkCase:
    """One link of the table and how long its cells run (default, and with --quick)."""

    rate_bits_s: float
    rtt_ms: float
    duration_s: float
    quick_s: float

    @property
    def name(self) -> str:
        return f"{rate_spec(self.rate_bits_s)}-{self.rtt_ms:g}ms"

    @property
    def bdp_bytes(self) -> int:
        return round(self.rate_bits_s / 8 * self.rtt_ms / 1000)

    def link(self) -> Link:
        half = self.rtt_ms / 2
        return Link(
            delay_up_ms=half,
            delay_down_ms=half,
            rate_up_bits_s=self.rate_bits_s,
            rate_down_bits_s=self.rate_bits_s,
        )


LINK_CASES: tuple[LinkCase, ...] = (
    LinkCase(100e6, 20.0, 0.8, 0.4),
    LinkCase(1e9, 20.0, 0.8, 0.4),
    LinkCase(100e6, 50.0, 3.0, 3.0),  # the bar's link: 3 s even with --quick
    LinkCase(100e6, 100.0, 2.0, 2.0),
)
BAR_CASE = LINK_CASES[2]  # 100 Mbit/s x 50 ms, 3 s: estimators >= 0.8 of the rate
ESTIMATORS: tuple[tuple[str, ClientConfig], ...] = (
    ("grpcio-dynamic", ClientConfig(kind="grpcio", window_mode="dynamic")),
    ("h2-dynamic", ClientConfig(kind="h2", window_mode="dynamic")),
)
STATIC_BDP = "h2-static-bdp"
LINKS_CONTROL = f"{LINK_CASES[0].name}-{STATIC_BDP}"


def cell_key(case: LinkCase, client_key: str) -> str:
    return f"{case.name}-{client_key}"


def link_cells(quick: bool) -> list[Cell]:
    """Every link x (both estimators + the static-BDP control), cold, timed."""
    cells = []
    for case in LINK_CASES:
        duration = case.quick_s if quick else case.duration_s
        # The static control has nothing to climb: 20 RTTs (at least 0.4 s) show all it does.
        static_s = min(duration, max(0.4, MIN_RTTS * case.rtt_ms / 1000))
        static = ClientConfig(kind="h2", window_mode="static", window_bytes=case.bdp_bytes)
        runs = [(key, client, duration) for key, client in ESTIMATORS]
        for key, client, seconds in (*runs, (STATIC_BDP, static, static_s)):
            workload = Workload(duration_s=seconds, warmup=False, timeout_s=max(10.0, 10 * seconds))
            label = f"{key.replace('-', ' ')} on {case.name}"
            trial = Trial(link=case.link(), client=client, workload=workload, label=label)
            cells.append(Cell(cell_key(case, key), trial))
    return cells
