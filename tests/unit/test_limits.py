"""What limited a run (``kit.analysis.limits``) and how the table says it: the theory names
the window that binds, the efficiency carries the stack's credit rule, and the verdict is
decided only where the record supports it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kit.analysis.limits import limit_of, window_bound
from kit.analysis.link import largest_window_bytes
from kit.plan.trial import ClientConfig, Link, ServerConfig, Trial, Workload, theory_mib_s
from kit.plan.units import KIB, MIB
from kit.report.limits import limit_sentence, theory_rule
from kit.report.run import run_table
from kit.results.client import ClientResult
from kit.results.records import (
    FrameSummary,
    MachineLoad,
    Measurement,
    ProcessCpu,
    RunMeta,
    StreamWindowPoint,
)

QUIET = RunMeta(machine=MachineLoad(busy_cores=0.4, path_cores=0.3, other_cores=0.1, cpus=2))


def run(trial: Trial, mib_s: float, cpu: float = 0.2, **result: object) -> Measurement:
    """A finished one-second run of ``trial`` at ``mib_s`` on a quiet machine."""
    streams = trial.workload.streams
    per = int(mib_s * MIB / streams)
    base = ClientResult(
        client=trial.client.kind,
        bytes=per * streams,
        elapsed_s=1.0,
        stream_bytes=(per,) * streams,
        stream_finish_s=(1.0,) * streams,
    )
    return Measurement(
        trial=trial,
        status="ok",
        result=replace(base, **result),  # type: ignore[arg-type]
        theory_mib_s=theory_mib_s(trial),
        cpu=(ProcessCpu("client", cpu), ProcessCpu("server", 0.1)),
        meta=QUIET,
    )


def static(
    kind: str = "h2", window: int = MIB, conn: int | None = None, streams: int = 1, **link: float
) -> Trial:
    return Trial(
        link=Link(delay_up_ms=10.0, delay_down_ms=10.0, **link),  # type: ignore[arg-type]
        client=ClientConfig(
            kind=kind,  # type: ignore[arg-type]
            window_mode="static",
            window_bytes=window,
            conn_window_bytes=conn,
        ),
        workload=Workload(streams=streams),
    )


def test_the_theory_names_the_connection_window_when_it_binds() -> None:
    trial = static(window=MIB, conn=64 * KIB, streams=4)
    assert window_bound(trial).layer == "connection"  # type: ignore[union-attr]
    assert theory_rule(trial) == (
        "connection window / RTT (64 KiB / 20 ms, shared by 4 streams; their stream windows "
        "allow 4 x 1 MiB)"
    )
    assert theory_rule(static(window=MIB)) == "stream window / RTT (1 MiB / 20 ms)"
    wide = static(window=MIB, conn=16 * MIB, streams=4)
    assert theory_rule(wide).startswith("streams x stream window / RTT (4 x 1 MiB / 20 ms")
    rated = static(window=4 * MIB, rate_up_bits_s=50e6, rate_down_bits_s=50e6)
    assert theory_rule(rated).startswith("the link rate (50 Mbit/s); stream window / RTT")


def test_a_connection_bound_run_says_so_with_its_streams() -> None:
    trial = static(window=MIB, conn=64 * KIB, streams=4)
    text = limit_sentence(limit_of(run(trial, 0.92 * 3.125)))
    assert text.startswith("Limited by the connection window (64 KiB shared by 4 streams): it")
    assert "the h2 client moves 0.88-1.00 of it" in text


def test_a_path_slower_than_the_link_scales_the_rules_band_where_it_is_said() -> None:
    """At 5 ms the processes' turnaround is a tenth of the RTT: the band the h2 client's
    rule expects is scaled to the RTT its PINGs measured (5.5 ms), in the efficiency row and
    the verdict, and a run inside that band is the window's."""
    trial = replace(static(window=MIB), link=Link(delay_up_ms=2.5, delay_down_ms=2.5))
    m = run(trial, 0.80 * 200, ping_rtt_ms=(5.5, 5.5, 5.5))
    table = " ".join(run_table(m).split())
    band = f"{0.88 * 5 / 5.5:.2f}-{1.0 * 5 / 5.5:.2f}"  # 0.80-0.91
    assert (
        f"the h2 client moves 0.88-1.00 of it (returns credit as each frame is read); {band} at the 5.5 ms RTT the PINGs measured"
        in table
    )
    assert limit_of(m).kind == "stream window" and limit_of(m).path is not None
    assert table.count(f"{band} at the 5.5 ms RTT") == 2  # the efficiency row and the verdict


@pytest.mark.parametrize("ping", [5.05, 8.0, None])
def test_the_rules_own_band_stands_where_the_pings_took_the_links_rtt_or_queued(
    ping: float | None,
) -> None:
    trial = replace(static(window=MIB), link=Link(delay_up_ms=2.5, delay_down_ms=2.5))
    pings = () if ping is None else (ping,)
    m = run(trial, 0.80 * 200, ping_rtt_ms=pings)
    assert limit_of(m).path is None
    assert "RTT the PINGs measured" not in run_table(m)


def test_a_run_short_even_of_its_path_band_is_not_decided_and_says_both_bands() -> None:
    trial = replace(static(window=MIB), link=Link(delay_up_ms=2.5, delay_down_ms=2.5))
    limit = limit_of(run(trial, 0.50 * 200, ping_rtt_ms=(5.5,)))
    assert limit.kind == "not decided"
    assert (
        "(the h2 client moves 0.88-1.00; 0.80-0.91 at the 5.5 ms RTT the PINGs measured)"
        in limit.why
    )


def test_a_stacks_credit_rule_is_the_expectation_beside_its_efficiency() -> None:
    trial = static(kind="grpc-go", window=4 * MIB)
    table = " ".join(run_table(run(trial, 0.70 * 200)).split())
    assert "efficiency 0.700 = throughput / theory; grpc-go moves 0.70-0.81 of it" in table
    assert "Limited by the stream window (4 MiB): it moved 0.700 of the 200 MiB/s" in table


def test_a_run_far_below_its_window_is_not_decided() -> None:
    limit = limit_of(run(static(window=MIB), 0.3 * 50))
    assert limit.kind == "not decided" and "it moved 0.30 of its window / RTT" in limit.why


def test_a_process_near_a_full_core_is_the_limit() -> None:
    limit = limit_of(run(static(window=MIB), 10.0, cpu=0.97))
    assert limit_sentence(limit).startswith("Limited by the CPU: the client used 97% of a core")


def test_the_rate_binds_when_the_run_fills_it() -> None:
    trial = static(window=4 * MIB, rate_up_bits_s=50e6, rate_down_bits_s=50e6)
    text = limit_sentence(limit_of(run(trial, 0.95 * 50e6 / 8 / MIB)))
    assert text.startswith("Limited by the link's rate: 47.5 Mbit/s of 50 Mbit/s")


def test_a_dynamic_window_on_an_unlimited_link_is_not_decided() -> None:
    trial = Trial(link=Link.from_rtt(20.0))
    limit = limit_of(run(trial, 100.0))
    assert limit.kind == "not decided" and "no bound to compare with" in limit.why


def test_a_server_window_bounds_an_upload_with_c_cores_extra_credit() -> None:
    trial = Trial(
        link=Link.from_rtt(100.0),
        server=ServerConfig(window_mode="static", window_bytes=64 * KIB),
        workload=Workload(kind="upload"),
    )
    text = limit_sentence(limit_of(run(trial, 3.0 * 0.625)))
    assert text.startswith("Limited by the server's receive window (64 KiB): it moved 3.00x")
    assert "more than the window because grpcio (C-core) grants extra credit" in text


RECEIPT = "it did not hold the others (connection credit goes back on receipt: a stream read slowly holds only its own window)"


@pytest.mark.parametrize(
    ("credit", "fast", "said"),
    [
        ("read", 0.95, "it did not hold the others: streams 2..3 moved 0.950 of"),
        ("read", 0.3, "it held the others: streams 2..3 moved only 0.300 of"),
        ("receipt", 0.95, f"{RECEIPT}: streams 2..3 moved 0.950 of their share of the theory."),
        (
            "receipt",
            0.3,
            f"{RECEIPT}: streams 2..3 moved 0.300 of their share of the theory, short of the "
            "client's rule for another reason.",
        ),
    ],
)
def test_a_slow_reader_says_whether_it_held_the_others(credit: str, fast: float, said: str) -> None:
    """With connection credit on reads a slow stream's unread bytes hold the connection
    window, so a shortfall is its doing; on receipt they cannot: a shortfall is not."""
    base = static(window=MIB, streams=3)
    trial = replace(
        base,
        client=replace(base.client, conn_credit=credit),
        workload=Workload(streams=3, slow_streams=1, read_rate_bits_s=8e6),
    )
    share = 50.0  # each stream's: theory 150 / 3
    m = run(
        trial,
        1.0,
        stream_bytes=(int(0.95 * MIB), int(fast * share * MIB), int(fast * share * MIB)),
        slow_streams=1,
    )
    text = " ".join(limit_sentence(limit_of(m)).split())
    assert text.startswith("Limited by a slow reader (stream 1 read at 8 Mbit/s);")
    assert said in text, text


def test_the_final_window_is_the_largest_a_sender_had() -> None:
    trial = Trial(client=ClientConfig(kind="h2", window_mode="dotnet"))
    m = run(trial, 10.0, stream_window_bytes=(1_048_560,))
    frames = FrameSummary(
        window_final_bytes=65535, stream_windows=(StreamWindowPoint(1, 3, 900_000),)
    )
    assert largest_window_bytes(replace(m, frames=frames)) == 1_048_560
    assert largest_window_bytes(replace(m, result=replace(m.result, stream_window_bytes=()),
                                        frames=frames)) == 900_000  # fmt: skip
