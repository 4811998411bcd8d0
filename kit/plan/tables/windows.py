"""Table 1, window vs RTT, as cells: one stream of 256 KiB messages, windows 64 KiB-4 MiB.

One campaign per RTT (loopback, 5 ms, 20 ms), so each RTT gets its own duplicate control and
noise floor. Dynamic windows depend on the transfer length, so every dynamic row is measured
twice: a short fixed transfer of 8 MiB (the reference's shape) and a timed one.
"""

from __future__ import annotations

from kit.plan.campaign import Cell
from kit.plan.tables.sizing import CellTiming, fixed_trial, timed_duration_s, timed_trial
from kit.plan.trial import (
    DEFAULT_MESSAGE_BYTES,
    ClientConfig,
    Link,
    Trial,
    Workload,
    theory_mib_s,
)
from kit.plan.units import KIB, MIB, size_spec

WINDOWS_BYTES: tuple[int, ...] = (64 * KIB, 256 * KIB, MIB, 4 * MIB)
TABLE1_RTTS_MS: tuple[float, ...] = (0.0, 5.0, 20.0)
SHORT_TRANSFER_BYTES = 8 * MIB  # the reference's transfer (grpc-go: ~23 MiB/s at 20 ms)
MIN_SIZED_MESSAGES = 4
SIZED_MAX_THEORY_MIB_S = 200.0
TABLE1_PREFIX = "table1-"
TABLE1_CONTROL = "h2-static-1MiB"


def table1_campaign_name(rtt_ms: float) -> str:
    """``table1-loopback``, ``table1-rtt5ms``, ``table1-rtt20ms``."""
    return TABLE1_PREFIX + ("loopback" if rtt_ms == 0 else f"rtt{rtt_ms:g}ms")


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
