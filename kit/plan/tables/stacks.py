"""Table 8, the stacks, as cells: every client and server stack the kit drives, side by side.

Three parts, each its own campaign (own control, own noise floor):

- A (``table8-windows``): every client stack (grpcio, h2, grpc-go, grpc-java, grpc-js, tonic;
  the grpcio server; tonic also with hyper's adaptive window on, which it ships off) with its defaults (dynamic: the stack as shipped) and static 64 KiB, 1 MiB
  and 4 MiB windows, at 5 and 20 ms; timed downloads, one stream of 256 KiB messages.
- B (``table8-links``): every stack's dynamic window on the estimator table's links
  (``kit.plan.tables.links``), each cell cold (only the one-Ping warm-up on its connection).
- C (``table8-uploads``): uploads from the grpcio client into every server stack at 103 ms,
  the server's window static 64 KiB against its default (tonic's: adaptive off and on).

Sized for a 2-core machine: JVM and Node clients cost 0.5-0.8 s of start-up per cell, so the
table runs one round fewer than the others (2 by default; ``kit.plan.tables.table_rounds``),
the timed phases are short (20-25 RTTs at 20 ms) and ``--quick`` keeps only 20 ms with the
defaults and 64 KiB, one link, and the 64 KiB uploads. Pure planning; ``kit.plan.tables`` makes campaigns.
"""

from __future__ import annotations

from kit.plan.campaign import Cell
from kit.plan.programs import ClientKind, ServerKind
from kit.plan.tables.links import LinkCase
from kit.plan.trial import ClientConfig, Link, ServerConfig, Trial, Workload
from kit.plan.units import KIB, MIB, size_spec

STACKS_PREFIX = "table8-"
STACKS_WINDOWS_CAMPAIGN = "table8-windows"
STACKS_LINKS_CAMPAIGN = "table8-links"
STACKS_UPLOADS_CAMPAIGN = "table8-uploads"

CLIENT_STACKS: tuple[ClientKind, ...] = (
    "grpcio",
    "h2",
    "grpc-go",
    "grpc-java",
    "grpc-js",
    "tonic",
)
SERVER_STACKS: tuple[ServerKind, ...] = ("grpcio", "grpc-go", "grpc-java", "grpc-js", "tonic")
# tonic ships hyper's adaptive window (its BDP estimator) off; the option turns it on. Its
# cells run both, so the estimator is measured beside the fixed 2 MiB window users get.
ADAPTIVE_KIND: ClientKind = "tonic"
ADAPTIVE_OPTIONS: tuple[tuple[str, int | str], ...] = (("http2_adaptive_window", 1),)
ADAPTIVE = "adaptive"  # the window argument that stands for "dynamic, adaptive window on"

# --- part A: windows ------------------------------------------------------------------------
STATIC_WINDOWS: tuple[int, ...] = (64 * KIB, MIB, 4 * MIB)
QUICK_STATIC_WINDOWS: tuple[int, ...] = (64 * KIB,)
WINDOW_RTTS_MS: tuple[float, ...] = (5.0, 20.0)
QUICK_WINDOW_RTTS_MS: tuple[float, ...] = (20.0,)
WINDOW_DURATION_S = 0.5  # >= 20 RTTs at 20 ms (0.4 s); the first RTT carries nothing
QUICK_WINDOW_DURATION_S = 0.4
WINDOWS_CONTROL = "rtt20ms-h2-static-1MiB"
QUICK_WINDOWS_CONTROL = "rtt20ms-h2-static-64KiB"

# --- part B: dynamic windows on links with a bottleneck -----------------------------------
STACK_LINK_CASES: tuple[LinkCase, ...] = (
    LinkCase(100e6, 20.0, 0.8, 0.5),
    LinkCase(1e9, 20.0, 0.8, 0.5),
    LinkCase(100e6, 50.0, 1.5, 1.5),
    LinkCase(100e6, 100.0, 2.0, 2.0),
)
QUICK_LINK_CASES = (STACK_LINK_CASES[0],)
MODEL: ClientKind = "h2"  # the kit's model of grpc-go's receiver
REAL: ClientKind = "grpc-go"
LINKS_CONTROL = f"{STACK_LINK_CASES[0].name}-h2-dynamic"

# --- part C: uploads into each server stack --------------------------------------------------
UPLOAD_RTT_MS = 103.0
UPLOAD_SMALL_WINDOW = 64 * KIB
UPLOAD_RTTS = 10
QUICK_UPLOAD_RTTS = 5
UPLOAD_CLIENT = ClientConfig(kind="grpcio")  # C-core's sender for every server
UPLOADS_CONTROL = "server-grpcio-64KiB"


# A cell's window: None (the stack's defaults), ADAPTIVE (tonic's adaptive window on) or a
# static window's size.
Window = int | str | None


def _mode(window: Window) -> str:
    if window is None:
        return "dynamic"
    return ADAPTIVE if isinstance(window, str) else f"static-{size_spec(window)}"


def windows_key(rtt_ms: float, kind: str, window: Window) -> str:
    """``rtt20ms-grpc-go-static-64KiB``, ``rtt5ms-grpc-js-dynamic``, ``rtt20ms-tonic-adaptive``."""
    return f"rtt{rtt_ms:g}ms-{kind}-{_mode(window)}"


def link_key(case: LinkCase, kind: str, window: Window = None) -> str:
    return f"{case.name}-{kind}-{_mode(window)}"


def upload_key(kind: str, window: Window) -> str:
    mode = "default" if window is None else window if isinstance(window, str) else size_spec(window)
    return f"server-{kind}-{mode}"


def dynamic_windows(kind: str) -> tuple[Window, ...]:
    """A stack's dynamic variants: its defaults, and for tonic the adaptive window too."""
    return (None, ADAPTIVE) if kind == ADAPTIVE_KIND else (None,)


def client_config(kind: ClientKind, window: Window) -> ClientConfig:
    """A stack's client: its defaults (dynamic), tonic's adaptive window, or its own
    static-window knob (BDP off)."""
    if window is None:
        return ClientConfig(kind=kind, window_mode="dynamic")
    if isinstance(window, str):
        return ClientConfig(kind=kind, window_mode="dynamic", channel_options=ADAPTIVE_OPTIONS)
    return ClientConfig(kind=kind, window_mode="static", window_bytes=window)


def server_config(kind: ServerKind, window: Window) -> ServerConfig:
    if window is None:
        return ServerConfig(kind=kind)
    if isinstance(window, str):
        return ServerConfig(kind=kind, channel_options=ADAPTIVE_OPTIONS)
    return ServerConfig(kind=kind, window_mode="static", window_bytes=window)


def _timeout_s(duration_s: float) -> float:
    return max(10.0, 10 * duration_s)


def windows_cells(quick: bool) -> list[Cell]:
    """Part A: every client stack x (dynamic + static windows) x RTT, timed."""
    rtts = QUICK_WINDOW_RTTS_MS if quick else WINDOW_RTTS_MS
    windows = QUICK_STATIC_WINDOWS if quick else STATIC_WINDOWS
    duration = QUICK_WINDOW_DURATION_S if quick else WINDOW_DURATION_S
    cells = []
    for rtt in rtts:
        link = Link.from_rtt(rtt)
        seconds = max(duration, 20 * rtt / 1000)
        workload = Workload(duration_s=seconds, timeout_s=_timeout_s(seconds))
        for kind in CLIENT_STACKS:
            for window in (*dynamic_windows(kind), *windows):
                client = client_config(kind, window)
                label = f"{client.label} at {rtt:g} ms"
                trial = Trial(link=link, client=client, workload=workload, label=label)
                cells.append(Cell(windows_key(rtt, kind, window), trial))
    return cells


def links_cells(quick: bool) -> list[Cell]:
    """Part B: every stack's dynamic window on each link, cold (the one-Ping warm-up only)."""
    cells = []
    for case in QUICK_LINK_CASES if quick else STACK_LINK_CASES:
        seconds = case.quick_s if quick else case.duration_s
        workload = Workload(duration_s=seconds, warmup=False, timeout_s=_timeout_s(seconds))
        for kind in CLIENT_STACKS:
            for window in dynamic_windows(kind):
                client = client_config(kind, window)
                label = f"{client.label} on {case.name}"
                trial = Trial(link=case.link(), client=client, workload=workload, label=label)
                cells.append(Cell(link_key(case, kind, window), trial))
    return cells


def upload_cells(quick: bool) -> list[Cell]:
    """Part C: the grpcio client uploads into each server stack, its window 64 KiB or default."""
    link = Link.from_rtt(UPLOAD_RTT_MS)
    seconds = (QUICK_UPLOAD_RTTS if quick else UPLOAD_RTTS) * UPLOAD_RTT_MS / 1000
    workload = Workload(kind="upload", duration_s=seconds, timeout_s=30.0)
    cells = []
    for kind in SERVER_STACKS:
        defaults = () if quick else dynamic_windows(kind)
        for window in (UPLOAD_SMALL_WINDOW, *defaults):
            server = server_config(kind, window)
            label = f"upload into {kind} {server.label}"
            trial = Trial(link, UPLOAD_CLIENT, server, workload, label)
            cells.append(Cell(upload_key(kind, window), trial))
    return cells


def windows_control(quick: bool) -> str:
    return QUICK_WINDOWS_CONTROL if quick else WINDOWS_CONTROL
