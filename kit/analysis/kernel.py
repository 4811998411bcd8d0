"""Pure: the real kernel's receive window beside the ``linux`` model's, over time.

``kit.tools.kernelcheck`` samples a TCP receiver on the packet link (``TCP_INFO`` of the
client's socket after its reads: the window it advertises, ``rcv_wnd``, and its
``rcv_space``, what DRS measured the application to copy per RTT) and runs the h2 client
with the ``linux`` window policy on the same link, rate, RTT and reader. Here: decoding
``TCP_INFO`` (the layout of ``include/uapi/linux/tcp.h``, checked on 6.18 against
``ss -ti``), the samples' JSON, and the table rows: at each step the last real sample
and the model's window at that time, and their ratio.

The two windows compared are the same quantity: what the sender may have sent beyond what
the application has read. The kernel's is the window it advertises plus what waits unread
in its receive queue (``rcv_wnd`` + received - copied); the model's is its window size
(``limit - consumed`` once its credit went out), which is what its trace records.
"""

from __future__ import annotations

import statistics
import struct
from dataclasses import dataclass

# struct tcp_info offsets (bytes); tcpi_rcv_wnd exists since Linux 6.2.
_U32 = {"rcv_ssthresh": 64, "advmss": 84, "rcv_rtt_us": 92, "rcv_space": 96, "snd_wnd": 228,
        "rcv_wnd": 232}  # fmt: skip
_BYTES_RECEIVED = 128  # u64
TCP_INFO_MIN_BYTES = 236
FIELDS = ("t_ms", "copied", "received", "rcv_wnd", "rcv_space", "rcv_ssthresh", "rcv_rtt_us")


@dataclass(frozen=True)
class TcpInfo:
    """The receive side of one socket's ``TCP_INFO``."""

    rcv_wnd: int  # the window this socket advertises now
    rcv_space: int  # DRS: bytes copied in the last measured RTT (tp->rcvq_space.space)
    rcv_ssthresh: int
    rcv_rtt_us: int
    bytes_received: int
    snd_wnd: int
    advmss: int


def parse_tcp_info(raw: bytes) -> TcpInfo:
    """``getsockopt(IPPROTO_TCP, TCP_INFO)`` bytes -> the fields the check reads."""
    if len(raw) < TCP_INFO_MIN_BYTES:
        raise ValueError(f"TCP_INFO: {len(raw)} bytes, the kernel has no tcpi_rcv_wnd (< 6.2)")
    u32 = {name: struct.unpack_from("<I", raw, at)[0] for name, at in _U32.items()}
    (received,) = struct.unpack_from("<Q", raw, _BYTES_RECEIVED)
    return TcpInfo(
        rcv_wnd=u32["rcv_wnd"],
        rcv_space=u32["rcv_space"],
        rcv_ssthresh=u32["rcv_ssthresh"],
        rcv_rtt_us=u32["rcv_rtt_us"],
        bytes_received=received,
        snd_wnd=u32["snd_wnd"],
        advmss=u32["advmss"],
    )


@dataclass(frozen=True)
class Sample:
    """The receiver at ``t_ms`` after it sent its request: what it read and its socket."""

    t_ms: float
    copied: int
    received: int
    rcv_wnd: int
    rcv_space: int
    rcv_ssthresh: int
    rcv_rtt_us: int

    def row(self) -> list[float]:
        return [getattr(self, name) for name in FIELDS]


def sample_from_row(row: list[float]) -> Sample:
    values = dict(zip(FIELDS, row, strict=True))
    return Sample(
        t_ms=float(values["t_ms"]),
        **{k: int(v) for k, v in values.items() if k != "t_ms"},
    )


def window_at(trace: tuple[tuple[float, int], ...], t_ms: float, start: int) -> int:
    """The model's window at ``t_ms`` from its growth steps (``start`` before the first)."""
    window = start
    for at_ms, bytes_ in trace:  # sorted by time; bounded by the trace's length
        if at_ms > t_ms:
            break
        window = bytes_
    return window


@dataclass(frozen=True)
class Row:
    t_ms: float
    advertised: int  # rcv_wnd: what the kernel advertises now
    unread: int  # received, not yet read by the application
    rcv_space: int
    copied: int
    model_window: int

    @property
    def real_window(self) -> int:
        """What the sender may have sent beyond what was read: advertised + unread."""
        return self.advertised + self.unread

    @property
    def ratio(self) -> float | None:
        """Model window / real window (None while the kernel advertises nothing)."""
        return self.model_window / self.real_window if self.real_window > 0 else None


def rows(
    samples: list[Sample],
    trace: tuple[tuple[float, int], ...],
    model_start: int,
    step_ms: float,
) -> list[Row]:
    """One row per ``step_ms``: the last real sample at or before it, the model then."""
    if not samples or step_ms <= 0:
        return []
    out, i = [], 0
    end = samples[-1].t_ms
    steps = int(end // step_ms) + 1
    for k in range(1, steps + 1):  # bounded by the run's length
        t = min(k * step_ms, end)
        while i + 1 < len(samples) and samples[i + 1].t_ms <= t:
            i += 1
        s = samples[i]
        model = window_at(trace, t, model_start)
        out.append(Row(t, s.rcv_wnd, s.received - s.copied, s.rcv_space, s.copied, model))
    return out


@dataclass(frozen=True)
class Summary:
    """The second half of the run (past the ramp): the model's window over the real one."""

    median_ratio: float | None
    low: float | None
    high: float | None
    final_real: int
    final_model: int
    real_copied_mib_s: float


def summarize(table: list[Row]) -> Summary:
    ratios = [r.ratio for r in table[len(table) // 2 :] if r.ratio is not None]
    last = table[-1] if table else Row(0.0, 0, 0, 0, 0, 0)
    rate = last.copied / (1 << 20) / (last.t_ms / 1000) if last.t_ms > 0 else 0.0
    return Summary(
        median_ratio=statistics.median(ratios) if ratios else None,
        low=min(ratios) if ratios else None,
        high=max(ratios) if ratios else None,
        final_real=last.real_window,
        final_model=last.model_window,
        real_copied_mib_s=rate,
    )
