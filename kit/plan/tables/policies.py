"""Table 9, the receive-window policies, as cells: every policy on the same links, cold.

Two parts, each its own campaign (own control, own noise floor):

- A (``table9-links``): every window policy of the h2 client (grpc-go's, the models of
  grpc-java's, hyper's, .NET's, quic-go's, QUICHE's and Linux's, the pool and a static
  64 KiB) and the real stacks whose policies are modelled (grpcio, grpc-go, grpc-java, tonic
  with its adaptive window on) on 100 Mbit/s x 20, 50 and 100 ms and 1 Gbit/s x 20 ms, one
  stream and four streams on one connection, each cell cold (only the one-Ping warm-up).
- B (``table9-sharing``): the sharing table's slow-reader case under every policy: two
  streams on one connection at 20 ms, the first read at 20 Mbit/s or at full speed.

QUIC's rules (quic-go, QUICHE) are applied to HTTP/2 here: a QUIC stream maps to a stream,
MAX_DATA to the connection window. ``--quick`` keeps 100 Mbit/s x 20 ms and smaller slow-
reader transfers. Pure planning; ``kit.plan.tables`` makes campaigns.
"""

from __future__ import annotations

from kit.plan.campaign import Cell
from kit.plan.tables.links import LinkCase
from kit.plan.tables.sharing import SHARING_READ_RATE_BITS_S, SHARING_RTT_MS
from kit.plan.tables.stacks import ADAPTIVE_OPTIONS, STACK_LINK_CASES
from kit.plan.trial import ClientConfig, Link, Trial, WindowMode, Workload
from kit.plan.units import KIB, MIB

POLICIES_PREFIX = "table9-"
POLICIES_LINKS_CAMPAIGN = "table9-links"
POLICIES_SHARING_CAMPAIGN = "table9-sharing"

# Every policy by its --window-policy name -> the h2 client's window mode ("dynamic" is
# grpc-go's in plans and records).
POLICIES: tuple[tuple[str, WindowMode], ...] = (
    ("grpc-go", "dynamic"),
    ("grpc-java", "grpc-java"),
    ("hyper", "hyper"),
    ("dotnet", "dotnet"),
    ("quic-go", "quic-go"),
    ("quiche", "quiche"),
    ("linux", "linux"),
    ("pool", "pool"),
    ("static", "static"),
)
POLICY_NAMES: tuple[str, ...] = tuple(name for name, _ in POLICIES)
QUIC_POLICIES: tuple[str, ...] = ("quic-go", "quiche")
STATIC_WINDOW = 64 * KIB  # HTTP/2's default window: what an untuned receiver grants
# The real stacks beside their models: stack -> (its client, the policy modelling it; None:
# no model). tonic's adaptive window is hyper's BDP estimator (tonic ships it off).
REAL_STACKS: tuple[tuple[str, ClientConfig, str | None], ...] = (
    ("grpcio", ClientConfig(kind="grpcio"), None),
    ("grpc-go", ClientConfig(kind="grpc-go"), "grpc-go"),
    ("grpc-java", ClientConfig(kind="grpc-java"), "grpc-java"),
    ("tonic", ClientConfig(kind="tonic", channel_options=ADAPTIVE_OPTIONS), "hyper"),
)
REAL_NAMES: tuple[str, ...] = tuple(name for name, _, _ in REAL_STACKS)
MODEL_OF: dict[str, str] = {real: model for real, _, model in REAL_STACKS if model is not None}

POLICY_LINK_CASES: tuple[LinkCase, ...] = STACK_LINK_CASES
QUICK_POLICY_LINK_CASES: tuple[LinkCase, ...] = (STACK_LINK_CASES[0],)
STREAM_COUNTS: tuple[int, ...] = (1, 4)
LINKS_CONTROL = f"{STACK_LINK_CASES[0].name}-1x-grpc-go"

SHARING_BYTES = 8 * MIB  # as the sharing table: a slow reader can fill a 4 MiB window
QUICK_SHARING_BYTES = 2 * MIB
SHARING_CONTROL = "grpc-go-beside-fast"


def policy_client(name: str) -> ClientConfig:
    """The h2 client under the policy ``name`` (static: HTTP/2's 64 KiB)."""
    mode = dict(POLICIES)[name]
    if mode == "static":
        return ClientConfig(kind="h2", window_mode="static", window_bytes=STATIC_WINDOW)
    return ClientConfig(kind="h2", window_mode=mode)


def link_key(case: LinkCase, streams: int, who: str) -> str:
    """``100Mbit-20ms-4x-quic-go``; a real stack's is ``...-1x-real-grpc-java``."""
    return f"{case.name}-{streams}x-{who}"


def real_key(case: LinkCase, streams: int, stack: str) -> str:
    return link_key(case, streams, f"real-{stack}")


def _rows() -> list[tuple[str, ClientConfig]]:
    """(key suffix, client) of every row: the policies, then the real stacks."""
    rows = [(name, policy_client(name)) for name in POLICY_NAMES]
    return rows + [(f"real-{name}", client) for name, client, _ in REAL_STACKS]


def links_cells(quick: bool) -> list[Cell]:
    """Part A: every policy and real stack x link x (1, 4 streams), cold, timed."""
    cells = []
    for case in QUICK_POLICY_LINK_CASES if quick else POLICY_LINK_CASES:
        seconds = case.quick_s if quick else case.duration_s
        for streams in STREAM_COUNTS:
            workload = Workload(
                streams=streams, duration_s=seconds, warmup=False, timeout_s=max(10.0, 10 * seconds)
            )
            for who, client in _rows():
                label = f"{who} on {case.name}, {streams} stream(s)"
                trial = Trial(link=case.link(), client=client, workload=workload, label=label)
                cells.append(Cell(link_key(case, streams, who), trial))
    return cells


def sharing_key(name: str, slow: bool) -> str:
    return f"{name}-beside-{'slow' if slow else 'fast'}"


def sharing_cells(quick: bool) -> list[Cell]:
    """Part B: two streams on one connection at 20 ms, the first read at 20 Mbit/s or at
    full speed, under every policy (fixed transfers: the fast stream's finish time)."""
    link = Link.from_rtt(SHARING_RTT_MS)
    size = QUICK_SHARING_BYTES if quick else SHARING_BYTES
    cells = []
    for name in POLICY_NAMES:
        for slow in (True, False):
            workload = Workload(
                streams=2,
                bytes_per_stream=size,
                slow_streams=1 if slow else 0,
                read_rate_bits_s=SHARING_READ_RATE_BITS_S if slow else None,
                timeout_s=60.0,
            )
            beside = "slow" if slow else "fast"
            label = f"{name}, fast stream beside a {beside} one"
            trial = Trial(link=link, client=policy_client(name), workload=workload, label=label)
            cells.append(Cell(sharing_key(name, slow), trial))
    return cells
