"""The packet link's pure schedule: loss rates, burst lengths, the drop-tail queue, rate,
jitter without reordering; and the TCP reassembly that feeds its frame tap."""

from __future__ import annotations

import random
import struct

import pytest

from kit.capture.tcpstream import TcpStreams, parse_segment
from kit.delayline.packets import PacketDirection
from kit.delayline.schedule import Bottleneck, RateSteps
from kit.errors import UsageError
from kit.plan.packet import mathis_bits_s, queue_bytes_for
from kit.plan.trace import parse_rate_steps, trace_steps
from kit.plan.trial import Link
from kit.topology.packet import parse_ss

N = 100_000


def _losses(direction: PacketDirection, n: int = N) -> list[bool]:
    return [direction.offer(1500, i * 1000) is None for i in range(n)]


def test_independent_loss_rate_is_within_10_percent_over_1e5_packets() -> None:
    lost = _losses(PacketDirection(0, loss=0.01, seed=3))
    assert sum(lost) / N == pytest.approx(0.01, rel=0.10)


def _bursts(lost: list[bool]) -> list[int]:
    bursts, run = [], 0
    for flag in lost:
        if flag:
            run += 1
        elif run:
            bursts.append(run)
            run = 0
    return bursts


def test_gilbert_elliott_keeps_mean_loss_and_mean_burst_length() -> None:
    lost = _losses(PacketDirection(0, loss=0.02, burst_len=4, seed=5), 4 * N)
    bursts = _bursts(lost)
    assert sum(lost) / len(lost) == pytest.approx(0.02, rel=0.10)
    assert sum(bursts) / len(bursts) == pytest.approx(4.0, rel=0.10)


def test_independent_loss_has_bursts_of_about_one() -> None:
    bursts = _bursts(_losses(PacketDirection(0, loss=0.01, seed=9)))
    assert sum(bursts) / len(bursts) < 1.05


def test_same_seed_same_losses_other_seed_other_losses() -> None:
    one = _losses(PacketDirection(0, loss=0.05, seed=1), 2000)
    assert one == _losses(PacketDirection(0, loss=0.05, seed=1), 2000)
    assert one != _losses(PacketDirection(0, loss=0.05, seed=2), 2000)


def test_rate_serialises_packets_back_to_back_then_adds_the_delay() -> None:
    d = PacketDirection(10_000_000, rate_bits_s=12e6, queue_bytes=1_000_000)  # 1 ms / 1500 B
    dues = [d.offer(1500, 0) for _ in range(5)]
    assert dues == [11_000_000, 12_000_000, 13_000_000, 14_000_000, 15_000_000]


def test_drop_tail_queue_drops_what_does_not_fit_and_keeps_the_rest() -> None:
    d = PacketDirection(0, rate_bits_s=12e6, queue_bytes=4500)  # room for 3 packets
    dues = [d.offer(1500, 0) for _ in range(5)]
    assert [x is None for x in dues] == [False, False, False, True, True]
    assert d.counts.queue_drops == 2
    assert d.offer(1500, 3_000_000) is not None  # drained: room again


def test_jitter_never_reorders_and_stays_within_bounds() -> None:
    d = PacketDirection(20_000_000, jitter_ns=5_000_000, seed=7)
    dues = [d.offer(100, i * 100_000) for i in range(5000)]
    assert all(x is not None for x in dues)
    got = [x for x in dues if x is not None]
    assert got == sorted(got)
    assert all(due - i * 100_000 >= 15_000_000 for i, due in enumerate(got))
    assert max(due - i * 100_000 for i, due in enumerate(got)) <= 25_000_000 + 5_000_000


def test_bad_loss_and_burst_are_refused() -> None:
    with pytest.raises(UsageError):
        PacketDirection(0, loss=1.0)
    with pytest.raises(UsageError):
        PacketDirection(0, loss=0.01, burst_len=0.5)


def test_link_refuses_packet_options_on_the_stream_link() -> None:
    with pytest.raises(UsageError, match="only on the packet link"):
        Link(loss=0.01)
    assert Link(kind="packet", loss=0.01).loss == 0.01


def test_default_queue_is_one_bdp_at_least_64_kib() -> None:
    link = Link(kind="packet", delay_up_ms=25, delay_down_ms=25)
    assert queue_bytes_for(link, 100e6) == 625_000
    assert queue_bytes_for(link, 1e6) == 64 * 1024


def test_mathis_bound() -> None:
    link = Link(kind="packet", delay_up_ms=25, delay_down_ms=25, loss=0.001)
    bound = mathis_bits_s(link)
    assert bound == pytest.approx(1448 * 8 / 0.05 * 1.22 / 0.001**0.5)
    assert mathis_bits_s(Link(kind="packet")) is None


# --- TCP reassembly -------------------------------------------------------------------------


def _packet(sport: int, dport: int, seq: int, flags: int, payload: bytes = b"") -> bytes:
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, flags, 65535, 0, 0)
    total = 20 + len(tcp) + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0, 64, 6, 0, bytes(4), bytes(4))
    return ip + tcp + payload


SYN, ACK, FIN = 0x02, 0x10, 0x01


def _stream(events: list[object]) -> bytes:
    return b"".join(getattr(e, "data", b"") for e in events if getattr(e, "direction", 0) == 1)


def test_reassembly_orders_segments_and_cuts_retransmitted_ranges() -> None:
    streams = TcpStreams()
    events: list[object] = []
    events += streams.packet(0, _packet(5000, 80, 100, SYN))
    events += streams.packet(1, _packet(80, 5000, 2**32 - 3, SYN | ACK))  # wraps
    data = bytes(random.Random(1).randrange(256) for _ in range(4000))
    seq0 = (2**32 - 3 + 1) % 2**32
    segs = [(seq0 + i) % 2**32 for i in range(0, 4000, 1000)]
    order = [0, 2, 3, 1, 2, 0]  # a hole, then retransmissions of delivered data
    for i in order:
        events += streams.packet(
            1, _packet(80, 5000, segs[i], ACK, data[i * 1000 : i * 1000 + 1000])
        )
    # an overlapping retransmission straddling what was delivered
    events += streams.packet(1, _packet(80, 5000, segs[3] + 500, ACK | FIN, data[3500:] + b"!"))
    assert _stream(events) == data + b"!"
    kinds = [getattr(e, "kind", "") for e in events]
    assert kinds[0] == "open" and "end" in kinds


def test_reassembly_ignores_connections_it_did_not_see_open_and_non_tcp() -> None:
    streams = TcpStreams()
    assert streams.packet(1, _packet(80, 5000, 1, ACK, b"x")) == []
    assert parse_segment(b"\x60" + bytes(60)) is None  # IPv6
    assert streams.open_connections() == []


def test_ss_output_gives_each_connection_its_kernel_view() -> None:
    text = (
        "0      0      [::ffff:10.203.0.2]:40255 [::ffff:10.203.0.1]:44834\n"
        "\t cubic wscale:7,7 rto:252 rtt:51.9/0.4 ato:40 mss:1448 pmtu:1500 rcvmss:536 "
        "advmss:1448 cwnd:37 ssthresh:20 bytes_sent:3774873 bytes_retrans:5792 "
        "bytes_acked:3769081 segs_out:2610 retrans:0/4 dsack_dups:1\n"
    )
    (view,) = parse_ss(text, "server")
    assert (view.congestion, view.cwnd_packets, view.mss_bytes) == ("cubic", 37, 1448)
    assert (view.srtt_ms, view.retransmits, view.bytes_sent) == (51.9, 4, 3774873)
    assert view.peer == "[::ffff:10.203.0.1]:44834"


# --- rates that change over time (either link) ---------------------------------------------


def test_rate_steps_serialise_at_each_steps_rate_and_loop() -> None:
    # 12 Mbit/s (1 ms per 1500 B) for 3 ms, then an outage of 2 ms, looped.
    b = Bottleneck(0.0, RateSteps([(12e6, 3_000_000), (0.0, 2_000_000)]))
    exits = [b.exit_ns(1500, 0) for _ in range(7)]
    assert exits == [1_000_000, 2_000_000, 3_000_000, 6_000_000, 7_000_000, 8_000_000, 11_000_000]
    assert b.rate_bits_s == pytest.approx(12e6 * 3 / 5)
    assert b.queued_bytes(0) == pytest.approx(7 * 1500, abs=1)


def test_a_trace_becomes_the_rate_it_delivers() -> None:
    # Two 1500-byte opportunities in every ms of the first 10 ms, none in the next 10.
    text = "\n".join(str(t) for t in range(1, 11) for _ in range(2)) + "\n20\n"
    steps = trace_steps(text)
    assert len(steps) == 20 and all(s.duration_ms == 1 for s in steps)
    assert steps[0].rate_bits_s == pytest.approx(2 * 1500 * 8 / 1e-3)
    assert steps[10].rate_bits_s == 0 and steps[19].rate_bits_s > 0


def test_rate_steps_text_and_bad_traces() -> None:
    steps = parse_rate_steps("100Mbit:5s,10Mbit:500ms")
    assert [(s.rate_bits_s, s.duration_ms) for s in steps] == [(100e6, 5000.0), (10e6, 500.0)]
    with pytest.raises(UsageError, match="RATE:DURATION"):
        parse_rate_steps("100Mbit")
    with pytest.raises(UsageError, match="not decrease"):
        trace_steps("5\n3\n")
    with pytest.raises(UsageError, match="line 2"):
        trace_steps("1\nx\n")
    with pytest.raises(UsageError, match="down rate follows"):
        Link(rate_down_bits_s=1e6, rate_steps=steps)
