"""Pure: what limited one measurement, as one verdict (``kit run``'s last line, a cell's in
``kit compare`` and ``kit report``).

A measurement has up to three bounds on its throughput: the windows the receiver grants per
RTT (``WindowBound``: a stream's window, the streams' windows together, or the connection
window they share, whichever is smaller; the pool's shares; the server's window on an
upload), the link's rate, and on the packet link with loss the Mathis bound of loss-based
TCP (``bounds``). The smallest binds, and the verdict names it only when the measured
figure is where that bound puts it:

- a window: throughput / (window / RTT) no lower than the stack's credit rule lets a static
  window move (``credit_rule``: grpc-go returns credit a quarter window at a time, Netty and
  nghttp2 half a window) less ``TOLERANCE``, and no higher than ``ABOVE_BOUND`` (C-core
  grants extra credit beyond its window, so grpcio may go higher). The rules' figures were
  measured at 20 ms; where the PINGs of the run took longer than the link's RTT (the
  processes' turnaround, a larger share of a short RTT), the rule's band is scaled to that
  RTT (``path_band``) and said beside it;
- the rate: ``AT_RATE`` of it, over the whole timed phase or its second half (steady state:
  a ramp from a cold window is not the rate's doing);
- loss: within ``LOSS_WITHIN`` of the Mathis bound, for loss-based congestion control only
  (BBR does not back off on random loss as the model says).

Before the bounds: a failed run has no verdict; a process near a full core limited it (the
CPU); unary calls wait a round trip each; streams read slowly on purpose limit the
aggregate, and the verdict says whether they held the others (the full-speed streams'
throughput against their share of the same run's theory). Anything else is "not decided",
with the reason: a verdict the record cannot support is never given.
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass
from typing import Literal

from kit.analysis.cells import cpu_limit, efficiency, latency_stats, ping_rtt_ms
from kit.analysis.link import mbit_s, ramp_of, steady_fraction, steady_mib_s
from kit.analysis.sharing import stream_sharing
from kit.plan.packet import mathis_bits_s
from kit.plan.trial import (
    ClientConfig,
    Link,
    Trial,
    rate_mib_s,
    window_theory_mib_s,
)
from kit.plan.units import MIB, format_rate
from kit.results.records import Measurement

LimitKind = Literal[
    "cpu",
    "round trip",
    "slow reader",
    "stream window",
    "connection window",
    "pool",
    "server window",
    "link rate",
    "loss",
    "not decided",
]
Layer = Literal["stream", "streams", "connection", "pool", "server"]

TOLERANCE = 0.15  # below a credit rule's measured efficiency, still its window (absolute)
ABOVE_BOUND = 1.05  # a window carries no more than this x window / RTT (C-core excepted)
AT_RATE = 0.9  # of the link's rate: the rate binds
LOSS_WITHIN = (0.5, 2.0)  # x the Mathis bound: loss binds
FEW_LOSSES = 10  # retransmits: too few loss events for the Mathis model's steady state
INFLATED_RTT = 1.5  # PINGs slower than this x the RTT: data queued in the processes
PATH_RTT_SLACK = 1.02  # PINGs within 2% of the link's RTT: the rule's own band stands
# Congestion control that does not back off on random loss as the Mathis model assumes.
NOT_LOSS_BASED = ("bbr", "bbr2", "bbr3")


# --- what a stack's credit rule lets a static window move ---------------------------------


@dataclass(frozen=True)
class CreditRule:
    """How a receiver returns credit, and the efficiency (throughput / window / RTT) a static
    window moved with it here (one stream, 20 ms: ``low`` at 1 MiB, ``high`` at 64 KiB).
    ``beyond``: it grants credit beyond its window (C-core's per-message extra credit), so
    it may exceed window / RTT."""

    who: str
    text: str
    low: float
    high: float
    beyond: bool = False

    def expects(self) -> str:
        """ "0.70-0.81", or "1 or more" for a receiver that grants beyond its window."""
        if self.beyond:
            return f"{self.low:.2f} or more"
        return f"{self.low:.2f}" if self.low == self.high else f"{self.low:.2f}-{self.high:.2f}"


# Measured here (README, "How each returns credit" and the stacks table): one stream at 20 ms,
# 1 MiB and 64 KiB windows.
QUARTER = "returns credit a quarter window at a time"
HALF = "returns credit once half a window is consumed"
CREDIT_RULES: dict[str, CreditRule] = {
    "grpc-go": CreditRule("grpc-go", QUARTER, 0.70, 0.81),
    "grpc-java": CreditRule("grpc-java (Netty)", HALF, 0.43, 0.50),
    "grpc-js": CreditRule("grpc-js (nghttp2)", HALF, 0.44, 0.54),
    "tonic": CreditRule("tonic (h2)", "returns credit at half the window left", 0.85, 0.89),
    "grpcio": CreditRule(
        "grpcio (C-core)", "grants extra credit of up to 1 MiB per message", 0.85, 1.0, beyond=True
    ),
}
H2_RULES: dict[str, CreditRule] = {
    "immediate": CreditRule("the h2 client", "returns credit as each frame is read", 0.88, 1.0),
    "quarter": CreditRule("the h2 client", QUARTER + " (as grpc-go)", 0.70, 0.81),
    "half": CreditRule("the h2 client", HALF + " (as h2's default)", 0.43, 0.54),
}


def credit_rule(client: ClientConfig) -> CreditRule | None:
    """The credit rule of a static-window client (None: a dynamic window or a model)."""
    if client.window_mode != "static":
        return None
    if client.kind == "h2":
        return H2_RULES.get(client.threshold_policy)
    return CREDIT_RULES.get(client.kind)


@dataclass(frozen=True)
class PathBand:
    """What a credit rule moves of window / (the link's) RTT when each credit's round trip
    takes the RTT the PINGs measured during the transfer (``ping_ms``: the link's RTT plus
    the processes' turnaround): the rule's figures x link RTT / PING RTT."""

    low: float
    high: float
    ping_ms: float

    def expects(self) -> str:
        return f"{self.low:.2f}-{self.high:.2f}"


def path_band(rule: CreditRule | None, rtt_ms: float, ping_ms: float | None) -> PathBand | None:
    """The rule's band at the RTT the PINGs took; None where they took the link's RTT
    (within ``PATH_RTT_SLACK``), where they queued behind data (beyond ``INFLATED_RTT``: the
    RTT is then the queue's, not the path's), or for a receiver granting beyond its window."""
    if rule is None or rule.beyond or ping_ms is None or rtt_ms <= 0:
        return None
    if not PATH_RTT_SLACK * rtt_ms < ping_ms <= INFLATED_RTT * rtt_ms:
        return None
    scale = rtt_ms / ping_ms
    return PathBand(rule.low * scale, min(1.0, rule.high) * scale, ping_ms)


def server_credit_rule(trial: Trial) -> CreditRule | None:
    """The credit rule of an upload's receiver: the server's static window."""
    if trial.server.window_bytes is None:
        return None
    return CREDIT_RULES.get(trial.server.kind)


def at_path(path: PathBand | None) -> str:
    """ "; 0.80-0.91 at the 5.48 ms RTT the PINGs measured", or "" without a band."""
    if path is None:
        return ""
    return f"; {path.expects()} at the {path.ping_ms:.3g} ms RTT the PINGs measured"


# --- the bounds ----------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowBound:
    """The window that bounds a trial (per connection, summed over ``connections``):
    ``layer`` "stream" (one stream), "streams" (each stream's window, the connection's
    larger), "connection" (shared by ``streams``), "pool" (its shares) or "server" (an
    upload); ``window_bytes`` the binding one, per connection."""

    layer: Layer
    window_bytes: int
    stream_window_bytes: int | None
    conn_window_bytes: int | None
    streams: int  # per connection
    connections: int
    rtt_ms: float
    mib_s: float


def window_bound(trial: Trial) -> WindowBound | None:
    """The binding window of a trial (None: a dynamic window, or RTT 0)."""
    mib_s = window_theory_mib_s(trial)
    if mib_s is None:
        return None
    client, workload, rtt = trial.client, trial.workload, trial.link.rtt_ms
    connections = min(client.connections, workload.streams)
    per_conn = max(1, round(mib_s * MIB * rtt / 1000 / connections))
    if workload.kind == "upload":
        window = trial.server.window_bytes
        return WindowBound("server", per_conn, window, None, 1, 1, rtt, mib_s)
    spc, stream, conn = trial.streams_per_connection, client.window_bytes, trial.conn_window_bytes
    if client.window_mode == "pool":
        layer: Layer = "pool"
    elif conn is not None and stream is not None and conn < stream * spc:
        layer = "connection"
    else:
        layer = "stream" if spc == 1 else "streams"
    return WindowBound(layer, per_conn, stream, conn, spc, connections, rtt, mib_s)


def loss_events(link: Link) -> float:
    """Loss events per packet: a burst of mean length L is one event (Mathis's p)."""
    return link.loss / link.loss_burst_len if link.loss_burst_len else link.loss


@dataclass(frozen=True)
class Bounds:
    """A trial's three bounds on goodput, bits/s (``loss`` None without loss)."""

    window: float | None
    loss: float | None
    rate: float | None

    def limit(self) -> tuple[str, float]:
        """The bound that binds: ("window" | "loss" | "rate", bits/s)."""
        named = [("window", self.window), ("loss", self.loss), ("rate", self.rate)]
        return min(((n, v) for n, v in named if v is not None), key=lambda nv: nv[1])


def bounds(trial: Trial) -> Bounds:
    """Window / RTT (summed over connections), the Mathis bound per connection (summed; p
    the rate of loss events) and the rate, in bits/s."""
    link = trial.link
    connections = min(trial.client.connections, trial.workload.streams)
    window = window_theory_mib_s(trial) if trial.client.window_mode == "static" else None
    events = dataclasses.replace(link, loss=loss_events(link), loss_burst_len=0.0)
    mathis = mathis_bits_s(events)
    return Bounds(
        window=None if window is None else window * MIB * 8,
        loss=None if mathis is None else mathis * connections,
        rate=link.rate_down_bits_s,
    )


def congestion_used(m: Measurement) -> str:
    """The congestion control the senders' sockets ran (the TCP views: what the kernel
    actually used), else the one the link asked for ("" when neither says)."""
    senders = [v.congestion for v in m.tcp if v.side == "server" and v.congestion]
    if senders:
        return statistics.mode(senders)
    return m.trial.link.congestion


@dataclass(frozen=True)
class LossBound:
    loss: float
    burst_len: float
    congestion: str
    mathis_bits_s: float  # summed over connections
    loss_based: bool  # the Mathis model applies (not BBR)


def loss_bound(m: Measurement) -> LossBound | None:
    link = m.trial.link
    b = bounds(m.trial).loss
    if link.kind != "packet" or b is None:
        return None
    cc = congestion_used(m)
    return LossBound(link.loss, link.loss_burst_len, cc, b, cc not in NOT_LOSS_BASED)


# --- slow readers --------------------------------------------------------------------------


@dataclass(frozen=True)
class SlowReaders:
    """Streams read slowly on purpose, and what the others did beside them.

    ``read_bytes``: what the application read from the slow streams (in ``read_s``);
    ``received_bytes``: what the connection carried for the slow streams (its DATA less
    what the full-speed streams read: known on a fixed-size run whose fast streams ended
    complete; None otherwise) against ``read_bytes``; ``fast_efficiency``: the full-speed
    streams' throughput over their share of the theory (theory x fast / streams); ``held``:
    whether the slow streams held them (None: no theory to judge by)."""

    slow: int
    streams: int
    read_rate_bits_s: float | None
    read_bytes: int
    received_bytes: int | None
    fast_mib_s: tuple[float, ...]
    fast_efficiency: float | None
    rule: CreditRule | None
    held: bool | None
    why: str = ""  # held None: why it is not decided
    cannot_hold: str = ""  # why flow control cannot let a slow stream hold the others
    short: bool = False  # the full-speed streams fell short of their credit rule
    read_s: tuple[float, ...] = ()  # each slow stream's own time
    peak_unread_bytes: int | None = None  # the most a slow stream held unread (h2's)


def slow_readers(m: Measurement) -> SlowReaders | None:
    result, workload = m.result, m.trial.workload
    if result is None or not m.ok or not workload.slow_streams or workload.kind != "download":
        return None
    sharing = stream_sharing(result)
    slow = workload.slow_streams
    fast = sharing.fast_throughput_mib_s
    eff = None
    if fast and m.theory_mib_s and len(fast) == workload.streams - slow:
        eff = efficiency(sum(fast), m.theory_mib_s * len(fast) / workload.streams)
    rule = credit_rule(m.trial.client)
    short = eff is not None and eff < _floor(rule)
    held = None if eff is None else short
    why = "no theory to judge them by (a dynamic window, no rate)" if eff is None else ""
    cannot = cannot_hold(m.trial.client)
    cpu = cpu_limit(m)
    if held and cannot:  # short of their rule, but flow control ties no stream to another
        held = False
    elif held and cpu is not None:  # a busy machine slows the others as well: no blame
        held, why = None, "the machine was busy: a process or every core near full"
    unread = sharing.peak_unread_bytes[:slow]
    return SlowReaders(
        slow=slow,
        streams=workload.streams,
        read_rate_bits_s=workload.read_rate_bits_s,
        read_bytes=sum(result.stream_bytes[:slow]),
        received_bytes=_slow_received(m),
        fast_mib_s=fast,
        fast_efficiency=eff,
        rule=rule,
        held=held,
        why=why,
        read_s=sharing.finish_s[:slow],
        peak_unread_bytes=max(unread) if unread else None,
        cannot_hold=cannot,
        short=short,
    )


def cannot_hold(client: ClientConfig) -> str:
    """Why a stream read slowly cannot hold the others by flow control, or "" where it can
    (or the kit does not know: another stack, a model, a shared pool): the h2 client's own
    windows with connection credit on receipt give the connection's credit back as bytes
    arrive, so a slow stream holds only its own window (the sharing table measures it)."""
    if client.kind != "h2" or client.window_mode not in ("static", "dynamic", "bdp-off"):
        return ""
    if client.conn_credit != "receipt":
        return ""
    return "connection credit goes back on receipt: a stream read slowly holds only its own window"


GRPC_PREFIX_BYTES = 5  # each gRPC message's length prefix, in the DATA it travels in


def _slow_received(m: Measurement) -> int | None:
    """The DATA the tap saw less what the full-speed streams read, on a fixed-size run whose
    full-speed streams each got their whole transfer (else what they had in flight is
    unknown). Counts the warm-up call's few bytes too."""
    result, workload, frames = m.result, m.trial.workload, m.frames
    size = workload.bytes_per_stream
    if (
        result is None
        or frames is None
        or size is None
        or workload.slow_streams >= workload.streams
    ):
        return None
    fast = result.stream_bytes[workload.slow_streams :]
    if any(b < size for b in fast):
        return None
    framing = GRPC_PREFIX_BYTES * (size // workload.message_bytes)
    return max(0, frames.data_down.bytes - sum(fast) - framing * len(fast))


def _floor(rule: CreditRule | None, path: PathBand | None = None) -> float:
    """The lowest efficiency a window's own rule explains (the h2 client's immediate credit
    when the rule is unknown), at the RTT the PINGs took when that is longer."""
    low = path.low if path is not None else (rule or H2_RULES["immediate"]).low
    return low - TOLERANCE


# --- the verdict ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Limit:
    """What limited one measurement: ``kind``, the figures its sentence names, and for
    "not decided" the reason (``why``)."""

    kind: LimitKind
    why: str = ""
    measured_mib_s: float | None = None
    bound_mib_s: float | None = None  # the bound that binds, MiB/s
    window: WindowBound | None = None
    rule: CreditRule | None = None
    path: PathBand | None = None  # the rule's band at the RTT the PINGs took
    rate_bits_s: float | None = None
    steady_fraction: float | None = None  # of the bound, over the timed phase's second half
    loss: LossBound | None = None
    cpu: tuple[tuple[str, float], ...] = ()
    slow: SlowReaders | None = None
    p50_ms: float | None = None
    rtt_ms: float = 0.0

    @property
    def efficiency(self) -> float | None:
        return efficiency(self.measured_mib_s, self.bound_mib_s)


def limit_of(m: Measurement) -> Limit:
    """The verdict of one measurement (see the module's rules)."""
    trial = m.trial
    if not m.ok or m.result is None:
        return Limit("not decided", why=f"the run {m.status}: no result", rtt_ms=trial.link.rtt_ms)
    cpu = cpu_limit(m)
    if cpu is not None and cpu.processes:
        return Limit("cpu", cpu=cpu.processes, measured_mib_s=m.throughput_mib_s)
    if trial.workload.kind == "unary":
        return _unary(m)
    slow = slow_readers(m)
    if slow is not None:
        return Limit("slow reader", slow=slow, measured_mib_s=m.throughput_mib_s)
    found = _bound_limit(m)
    if found.kind == "not decided" and cpu is not None:
        busy = f"{cpu.busy_cores:.2f} of {cpu.cpus:.0f} cores busy, {cpu.other_cores:.2f} by other work"
        return dataclasses.replace(found, why=f"{found.why}; the machine was saturated ({busy})")
    return found


def _unary(m: Measurement) -> Limit:
    stats = latency_stats(m.result.latencies_ms) if m.result is not None else None
    rtt = m.trial.link.rtt_ms
    if stats is None:
        return Limit("not decided", why="no call's latency was recorded", rtt_ms=rtt)
    if rtt > 0 and stats.p50_ms <= INFLATED_RTT * rtt + 1.0:
        return Limit("round trip", p50_ms=stats.p50_ms, rtt_ms=rtt)
    return Limit(
        "not decided",
        why=f"calls took {stats.p50_ms:.3g} ms at the median, beyond one {rtt:g} ms round trip",
        p50_ms=stats.p50_ms,
        rtt_ms=rtt,
    )


def _bound_limit(m: Measurement) -> Limit:
    """The smallest bound, when the measured figure is where it puts it."""
    trial, measured = m.trial, m.throughput_mib_s
    rtt = trial.link.rtt_ms
    window = window_bound(trial)
    rate = rate_mib_s(trial)
    loss = loss_bound(m)
    base = Limit("not decided", measured_mib_s=measured, window=window, loss=loss, rtt_ms=rtt)
    base = dataclasses.replace(base, rate_bits_s=None if rate is None else rate * MIB * 8)
    mathis = loss.mathis_bits_s / 8 / MIB if loss is not None and loss.loss_based else None
    figures = {"window": window.mib_s if window else None, "rate": rate, "loss": mathis}
    # a window is counted at what its credit rule moves when the bounds are compared
    at_best = figures | {"window": _effective(window, _rule_for(trial, window))}
    named = [(n, v) for n, v in at_best.items() if v is not None]
    if not named or measured is None:
        return dataclasses.replace(base, why=_no_bound(trial, loss))
    name = min(named, key=lambda nv: nv[1])[0]
    judged = {"window": _window_limit, "rate": _rate_limit, "loss": _loss_limit}[name]
    return judged(m, dataclasses.replace(base, bound_mib_s=figures[name]))


def _rule_for(trial: Trial, window: WindowBound | None) -> CreditRule | None:
    if window is None:
        return None
    return server_credit_rule(trial) if window.layer == "server" else credit_rule(trial.client)


def _effective(window: WindowBound | None, rule: CreditRule | None) -> float | None:
    """What a window carries at best under its credit rule (window / RTT x the rule's high
    figure; a receiver granting beyond its window, the window / RTT itself): the bound the
    verdict compares with the rate and the loss."""
    if window is None:
        return None
    if rule is None or rule.beyond:
        return window.mib_s
    return window.mib_s * min(1.0, rule.high)


def _no_bound(trial: Trial, loss: LossBound | None) -> str:
    if trial.link.rtt_ms <= 0 and trial.link.rate_down_bits_s is None:
        return "no RTT and no rate: nothing here bounds the throughput but the machine"
    text = "the window is dynamic and the link has no rate: no bound to compare with"
    if loss is not None and not loss.loss_based:
        text += f" ({loss.congestion} does not slow down on random loss as the Mathis bound says)"
    return text


def _window_limit(m: Measurement, base: Limit) -> Limit:
    window = base.window
    assert window is not None  # the window bound is the one that binds
    rule = _rule_for(m.trial, window)
    path = path_band(rule, m.trial.link.rtt_ms, ping_rtt_ms(m))
    base = dataclasses.replace(base, rule=rule, path=path)
    floor = _floor(rule, path)
    eff = base.efficiency or 0.0
    kind: LimitKind = {
        "stream": "stream window",
        "streams": "stream window",
        "connection": "connection window",
        "pool": "pool",
        "server": "server window",
    }[window.layer]  # type: ignore[assignment]
    if eff >= floor and (eff <= ABOVE_BOUND or (rule is not None and rule.beyond)):
        return dataclasses.replace(base, kind=kind)
    steady = steady_mib_s(m)
    later = efficiency(steady, base.bound_mib_s)
    if eff < floor and later is not None and floor <= later <= ABOVE_BOUND:
        return dataclasses.replace(base, kind=kind, steady_fraction=later)  # after a ramp
    if eff > ABOVE_BOUND:
        why = f"it moved {eff:.2f}x its window / RTT, more than a window allows"
        return dataclasses.replace(base, why=why)
    return dataclasses.replace(base, why=_short_of(m, eff, rule, "its window / RTT", path))


def _short_of(
    m: Measurement, eff: float, rule: CreditRule | None, what: str, path: PathBand | None = None
) -> str:
    expected = f" ({rule.who} moves {rule.expects()}{at_path(path)})" if rule is not None else ""
    text = f"it moved {eff:.2f} of {what}{expected}"
    ping, rtt = ping_rtt_ms(m), m.trial.link.rtt_ms
    queued = m.frames.peak_queued_bytes_down if m.frames is not None else 0
    ramp = ramp_of(m)
    if ramp is not None and ramp.to_fraction_ms is not None and ramp.to_fraction_ms > 4 * rtt:
        text += f"; it took {ramp.to_fraction_ms:.3g} ms to reach {AT_RATE:.0%} of the rate"
    if ping is not None and rtt > 0 and ping > INFLATED_RTT * rtt:
        if queued and m.trial.link.limited:  # the PINGs waited behind the bottleneck's queue
            return f"{text}; PINGs took {ping:.3g} ms against {rtt:g} ms, queued at the bottleneck"
        return f"{text}; PINGs took {ping:.3g} ms against {rtt:g} ms: data queued in the processes"
    return f"{text}, and nothing in the record says what held it"


def _rate_limit(m: Measurement, base: Limit) -> Limit:
    rate = base.bound_mib_s or 0.0
    steady = steady_fraction(m)
    base = dataclasses.replace(base, steady_fraction=steady)
    whole = (base.measured_mib_s or 0.0) / rate if rate else 0.0
    if whole >= AT_RATE or (steady is not None and steady >= AT_RATE):
        return dataclasses.replace(base, kind="link rate")
    window = base.window
    rule = _rule_for(m.trial, window)
    effective = _effective(window, rule)
    if window is not None and effective is not None and effective <= rate * (1 + TOLERANCE):
        # the window under its credit rule is as tight as the rate: judge it so
        return _window_limit(m, dataclasses.replace(base, bound_mib_s=window.mib_s))
    why = _short_of(m, whole, None, "the link's rate")
    loss = base.loss
    if loss is not None and not loss.loss_based:
        why += f" ({loss.congestion} does not slow down on random loss as the Mathis bound says)"
    return dataclasses.replace(base, why=why)


def _loss_text(loss: LossBound) -> str:
    if loss.burst_len:
        return f"{loss.loss / loss.burst_len:.2%} loss events: {loss.loss:.2%} in bursts"
    return f"{loss.loss:.2%} loss"


def _loss_limit(m: Measurement, base: Limit) -> Limit:
    loss = base.loss
    assert loss is not None
    measured_bits = (mbit_s(base.measured_mib_s) or 0.0) * 1e6
    ratio = measured_bits / loss.mathis_bits_s
    if LOSS_WITHIN[0] <= ratio <= LOSS_WITHIN[1]:
        return dataclasses.replace(base, kind="loss")
    why = (
        f"it carried {format_rate(measured_bits)}, {ratio:.2f}x the Mathis bound of "
        f"{format_rate(loss.mathis_bits_s)} ({_loss_text(loss)}, {loss.congestion or 'TCP'}), "
        f"outside the {LOSS_WITHIN[0]:g}-{LOSS_WITHIN[1]:g}x where loss binds"
    )
    resent = sum(v.retransmits for v in m.tcp if v.side == "server")
    if ratio > LOSS_WITHIN[1] and m.tcp and resent < FEW_LOSSES:
        why += f" (the senders resent {resent} segments: too few losses for its steady state)"
    return dataclasses.replace(base, why=why)
