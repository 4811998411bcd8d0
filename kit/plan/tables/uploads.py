"""Table 5, uploads, as cells: one upload stream, the server's receive window swept.

At 20 ms and at 103 ms (HAProxy's measured case): server windows 64 KiB, 1.4 MB (about
HAProxy's automatic buffer), 4 MiB and dynamic (C-core's BDP probe), with our h2 client and
grpcio. The h2 rows use a 64 KiB client receive window; one more row at 103 ms raises it to
16 MiB against the 4 MiB server, to show that the write path does not care about the
client's own receive window. Pure planning; ``kit.plan.tables`` makes the campaigns.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.plan.campaign import Cell
from kit.plan.trial import ClientConfig, Link, ServerConfig, Trial, Workload
from kit.plan.units import KIB, MIB, size_spec

UPLOAD_RTTS_MS: tuple[float, ...] = (20.0, 103.0)
UPLOAD_PREFIX = "table5-"
HAPROXY_RTT_MS = 103.0
HAPROXY_AUTO_BYTES = 1_400_000  # "about 1.4 MB by default"
SERVER_WINDOWS: tuple[int | None, ...] = (64 * KIB, HAPROXY_AUTO_BYTES, 4 * MIB, None)
CLIENT_SMALL_WINDOW = 64 * KIB
CLIENT_LARGE_WINDOW = 16 * MIB
UPLOAD_CONTROL = "h2-server-4MiB"
CLIENT_WINDOW_KEY = "h2-server-4MiB-client-16MiB"
SMALL_SERVER_KEY = "h2-server-64KiB"


@dataclass(frozen=True)
class UploadTiming:
    """Timed phase per cell: ``rtts`` round trips, at least ``min_s``. Each cell also pays
    about one RTT at its end (the last message, then the server's summary), which is part
    of the measure: throughput = bytes the server confirmed / time to its confirmation."""

    min_s: float
    rtts: int

    def duration_s(self, rtt_ms: float) -> float:
        return max(self.min_s, self.rtts * rtt_ms / 1000.0)


UPLOAD_TIMING = UploadTiming(min_s=0.5, rtts=10)
QUICK_UPLOAD_TIMING = UploadTiming(min_s=0.3, rtts=5)
UPLOAD_TIMEOUT_S = 30.0


def upload_campaign_name(rtt_ms: float) -> str:
    """``table5-rtt20ms``, ``table5-rtt103ms``: one campaign per RTT, as table 1's."""
    return f"{UPLOAD_PREFIX}rtt{rtt_ms:g}ms"


def server_key(window: int | None) -> str:
    """``64KiB``, ``1.4MB`` (decimal sizes in MB, as HAProxy states them), ``dynamic``."""
    if window is None:
        return "dynamic"
    if window % 100_000 == 0 and window % KIB:
        return f"{window / 1e6:g}MB"
    return size_spec(window)


def server_config(window: int | None) -> ServerConfig:
    if window is None:
        return ServerConfig()
    return ServerConfig(window_mode="static", window_bytes=window)


def upload_cells(rtt_ms: float, quick: bool) -> list[Cell]:
    """Both clients x every server window, plus (at 103 ms) the large client window row."""
    link = Link.from_rtt(rtt_ms)
    timing = QUICK_UPLOAD_TIMING if quick else UPLOAD_TIMING
    workload = Workload(
        kind="upload", duration_s=timing.duration_s(rtt_ms), timeout_s=UPLOAD_TIMEOUT_S
    )
    h2_small = ClientConfig(kind="h2", window_mode="static", window_bytes=CLIENT_SMALL_WINDOW)
    clients = {"h2": h2_small, "grpcio": ClientConfig(kind="grpcio")}
    cells = []
    for kind, client in clients.items():
        for window in SERVER_WINDOWS:
            key = f"{kind}-server-{server_key(window)}"
            trial = Trial(link, client, server_config(window), workload, key.replace("-", " "))
            cells.append(Cell(key, trial))
    if rtt_ms == HAPROXY_RTT_MS:
        large = ClientConfig(kind="h2", window_mode="static", window_bytes=CLIENT_LARGE_WINDOW)
        trial = Trial(link, large, server_config(4 * MIB), workload, "h2 client window 16MiB")
        cells.append(Cell(CLIENT_WINDOW_KEY, trial))
    return cells
