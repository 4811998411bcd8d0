"""Pure rendering of what limited a measurement (``kit.analysis.limits``): the theory's
rule naming the window that binds, the efficiency with what the stack's credit rule lets a
window move, and the one-sentence verdict every ``kit run`` table ends with."""

from __future__ import annotations

from kit.analysis.limits import (
    CreditRule,
    Limit,
    PathBand,
    SlowReaders,
    WindowBound,
    at_path,
    window_bound,
)
from kit.analysis.link import BITS_PER_MIB, mbit_s
from kit.clients.pacing import slow_streams_text
from kit.plan.trial import Trial, pool_granted_bytes, rate_mib_s
from kit.plan.units import format_rate
from kit.report.format import fmt_rate, fmt_size, sig3


def _rtt(ms: float) -> str:
    return f"{ms:g} ms"


def window_rule(bound: WindowBound, trial: Trial) -> str:
    """ "connection window / RTT (64 KiB shared by 4 streams; their stream windows allow 4 x
    1 MiB)": which window binds, and its size."""
    size, rtt = fmt_size(bound.window_bytes), _rtt(bound.rtt_ms)
    stream = fmt_size(bound.stream_window_bytes or 0)
    if bound.layer == "server":
        text = f"server window / RTT ({size} / {rtt})"
    elif bound.layer == "pool":
        text = f"granted / RTT ({_pool_shares(trial)})"
    elif bound.layer == "connection":
        text = (
            f"connection window / RTT ({size} / {rtt}, shared by {bound.streams} streams; "
            f"their stream windows allow {bound.streams} x {stream})"
        )
    elif bound.layer == "streams":
        conn = bound.conn_window_bytes
        wider = "" if conn is None else f"; the connection window {fmt_size(conn)} allows that"
        text = f"streams x stream window / RTT ({bound.streams} x {stream} / {rtt}{wider})"
    else:
        text = f"stream window / RTT ({size} / {rtt})"
    if bound.connections > 1:
        text += f", x {bound.connections} connections"
    return text


def _pool_shares(trial: Trial) -> str:
    granted, pool = pool_granted_bytes(trial), trial.client.pool_size_bytes
    connections = min(trial.client.connections, trial.workload.streams)
    if granted > pool * connections:
        return f"{trial.workload.streams} streams x 16 KiB, above the {fmt_size(pool)} pool"
    pools = f"{connections} x {fmt_size(pool)}" if connections > 1 else f"the {fmt_size(pool)}"
    return f"shares: {fmt_size(granted)} of {pools} pool"


def theory_rule(trial: Trial, unit: str = "MiB/s") -> str:
    """The theory's rule: the binding window (``window_rule``), or the link's rate, and what
    the other bound allows."""
    bound, rate = window_bound(trial), rate_mib_s(trial)
    rate_text = "-" if rate is None else format_rate(rate * 8 * 2**20)
    if bound is None:
        return f"the link rate ({rate_text})" if rate is not None else "-"
    rule = window_rule(bound, trial)
    if rate is None:
        return rule
    if rate < bound.mib_s:
        return f"the link rate ({rate_text}); {rule} allows {fmt_rate(bound.mib_s, unit)} {unit}"
    return f"{rule}; the link rate ({rate_text}) allows more"


def expectation(rule: CreditRule | None, path: PathBand | None = None) -> str:
    """ "grpc-go moves 0.70-0.81 of it (returns credit a quarter window at a time)", and
    with ``path`` what that is at the RTT the PINGs measured ("; 0.64-0.74 at the 5.48 ms
    RTT the PINGs measured")."""
    if rule is None:
        return ""
    return f"{rule.who} moves {rule.expects()} of it ({rule.text}){at_path(path)}"


def efficiency_text(
    eff: float | None, rule: CreditRule | None, path: PathBand | None = None
) -> str:
    """The efficiency row: its value, its definition, and what the credit rule expects."""
    if eff is None:
        return "- (throughput / theory: no theory)"
    expected = expectation(rule, path)
    return f"{sig3(eff)} = throughput / theory" + (f"; {expected}" if expected else "")


def limit_sentence(limit: Limit, unit: str = "MiB/s") -> str:
    """The verdict, one plain sentence: "Limited by the connection window: ..."."""
    text = {
        "cpu": _cpu,
        "round trip": _round_trip,
        "slow reader": _slow,
        "link rate": _rate,
        "loss": _loss,
        "not decided": _not_decided,
    }.get(limit.kind, _window)(limit, unit)
    return text if text.endswith(".") else text + "."


def _cpu(limit: Limit, unit: str) -> str:
    shares = ", ".join(f"the {role} used {share:.0%} of a core" for role, share in limit.cpu)
    return f"Limited by the CPU: {shares} (not the window)"


def _round_trip(limit: Limit, unit: str) -> str:
    return (
        f"Limited by the round trip: each call waits for it (p50 {sig3(limit.p50_ms or 0)} ms "
        f"at a {_rtt(limit.rtt_ms)} RTT); a small call's bytes fit any window"
    )


WINDOW_NAMES = {
    "stream window": "the stream window",
    "connection window": "the connection window",
    "pool": "the receive pool's shares",
    "server window": "the server's receive window",
}


def _window(limit: Limit, unit: str) -> str:
    bound = limit.window
    eff = limit.efficiency or 0.0
    what = WINDOW_NAMES.get(limit.kind, limit.kind)
    if bound is not None and limit.kind == "connection window":
        what += f" ({fmt_size(bound.window_bytes)} shared by {bound.streams} streams)"
    elif bound is not None:
        what += f" ({fmt_size(bound.window_bytes)} per connection)" * (bound.layer == "streams")
        what += f" ({fmt_size(bound.window_bytes)})" * (bound.layer in ("stream", "server"))
    allows = f"{fmt_rate(limit.bound_mib_s, unit)} {unit}"
    share = f"{sig3(eff)}x" if eff > 1 else f"{sig3(eff)} of"
    text = f"Limited by {what}: it moved {share} the {allows} it allows per RTT"
    if limit.steady_fraction is not None:
        text += f", {sig3(limit.steady_fraction)} in the timed phase's second half (after the ramp)"
    rule = limit.rule
    if rule is not None and rule.beyond and eff > 1:
        return f"{text}, more than the window because {rule.who} {rule.text}"
    if rule is not None:
        return f"{text}; {expectation(rule, limit.path)}"
    return text


def _rate(limit: Limit, unit: str) -> str:
    rate = limit.rate_bits_s or 0.0
    carried = (mbit_s(limit.measured_mib_s) or 0.0) * 1e6
    text = f"Limited by the link's rate: {format_rate(carried)} of {format_rate(rate)}"
    steady = limit.steady_fraction
    if carried < 0.9 * rate and steady is not None:
        text += f" over the timed phase, {steady:.2f} of it in its second half (after the ramp)"
    if limit.window is not None:
        text += f"; the window allows {format_rate(limit.window.mib_s * BITS_PER_MIB)}"
    loss = limit.loss
    if loss is not None and not loss.loss_based:
        text += (
            f"; {loss.loss:.2%} loss does not hold {loss.congestion} to its Mathis bound "
            f"({format_rate(loss.mathis_bits_s)}, a model of Reno/CUBIC)"
        )
    return text


def _loss(limit: Limit, unit: str) -> str:
    loss = limit.loss
    assert loss is not None
    carried = (mbit_s(limit.measured_mib_s) or 0.0) * 1e6
    burst = f" in bursts of {loss.burst_len:g}" if loss.burst_len else ""
    return (
        f"Limited by loss: {loss.loss * 100:g}% of packets{burst} with {loss.congestion or 'TCP'}, "
        f"whose Mathis bound is {format_rate(loss.mathis_bits_s)}; it carried "
        f"{format_rate(carried)} ({carried / loss.mathis_bits_s:.2f}x)"
    )


def _not_decided(limit: Limit, unit: str) -> str:
    return f"What limited it: not decided: {limit.why}"


def _slow(limit: Limit, unit: str) -> str:
    slow = limit.slow
    assert slow is not None
    return f"Limited by {slow_sentence(slow, unit)}"


def slow_sentence(slow: SlowReaders, unit: str = "MiB/s") -> str:
    """ "a slow reader (stream 1 read at 8 Mbit/s); it did not hold the others: ..."."""
    who = slow_streams_text(slow.slow)
    rate = "" if slow.read_rate_bits_s is None else f" read at {format_rate(slow.read_rate_bits_s)}"
    head = f"{'a slow reader' if slow.slow == 1 else 'slow readers'} ({who}{rate})"
    if slow.slow >= slow.streams:
        return head
    one = slow.streams - slow.slow == 1
    others = f"stream {slow.slow + 1}" if one else f"streams {slow.slow + 1}..{slow.streams}"
    their = "its" if one else "their"
    if slow.held is None:
        return f"{head}; whether it held {others}: not decided, {slow.why}"
    share = f"{sig3(slow.fast_efficiency or 0)} of {their} share of the theory"
    if slow.held:
        return f"{head}; it held the others: {others} moved only {share}"
    if slow.cannot_hold:
        text = f"{head}; it did not hold the others ({slow.cannot_hold}): {others} moved {share}"
        return text + (", short of the client's rule for another reason" if slow.short else "")
    return f"{head}; it did not hold the others: {others} moved {share}"


def read_received(slow: SlowReaders, client: str) -> str:
    """What the application read from the slow streams against what arrived for them."""
    read = fmt_size(slow.read_bytes)
    took = max(slow.read_s, default=0.0)
    text = f"read {read} in {sig3(took)} s"
    if client == "grpcio":
        text += " (whole messages, the first on arrival)"
        if slow.received_bytes is not None and slow.received_bytes > slow.read_bytes:
            return (
                f"{text}; received about {fmt_size(slow.received_bytes)} (the tap's DATA less "
                "the full-speed streams'): C-core buffered the rest unread"
            )
        return f"{text}; C-core received more and buffered it unread (not in the record)"
    if slow.peak_unread_bytes:
        return f"{text}; up to {fmt_size(slow.peak_unread_bytes)} more received, held unread"
    return text


def limit_json(limit: Limit, unit: str = "MiB/s") -> dict[str, object]:
    """The verdict in JSON: its kind, its sentence, and the efficiency against the bound."""
    return {
        "kind": limit.kind,
        "sentence": limit_sentence(limit, unit),
        "bound_mib_s": limit.bound_mib_s,
        "efficiency": limit.efficiency,
        "why": limit.why or None,
    }
