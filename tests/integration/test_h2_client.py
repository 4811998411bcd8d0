"""Our h2 client against a real grpcio server process on 127.0.0.1, then through the delay line.

Without a delay line the window cannot bound throughput, so the direct window checks look at
what the server may send: no DATA frame larger than the stream window, and data still
flowing with a 1 KiB window. The last tests go through ``kit.topology`` (server, delay line,
client process) where the window does bind.
"""

from __future__ import annotations

import itertools
import socket
from collections.abc import Iterator

import pytest

from kit.clients.h2 import wire
from kit.clients.h2.client import NS_PER_S, Session, run_h2
from kit.errors import MeasurementError
from kit.plan.jobs import client_job
from kit.plan.processes import ClientProcess, ServerProcess
from kit.plan.programs import SERVER_PROGRAMS
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import KIB, MIB
from kit.results.client import ClientResult, now_ns
from kit.topology.processes import spawn
from kit.topology.topology import Topology

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    server = spawn("server", SERVER_PROGRAMS["grpcio"], ServerProcess())
    try:
        yield server.port
    finally:
        server.close()


def run(port: int, workload: Workload, **client: object) -> ClientResult:
    client.setdefault("window_mode", "static" if "window_bytes" in client else "dynamic")
    config = ClientConfig(kind="h2", **client)  # type: ignore[arg-type]
    trial = Trial(client=config, workload=workload)
    return run_h2(client_job(ClientProcess(target_port=port, trial=trial)))


def largest_frame(result: ClientResult) -> int:
    note = next(n for n in result.notes if n.startswith("largest DATA frame"))
    return int(note.split()[3])


def test_fixed_size_download_counts_exact_bytes(port: int) -> None:
    workload = Workload(message_bytes=64 * KIB, streams=2, bytes_per_stream=2 * MIB, timeout_s=20)
    r = run(port, workload, window_bytes=MIB)
    assert r.stream_bytes == (2 * MIB, 2 * MIB)
    assert r.bytes == 4 * MIB and r.messages == 64
    assert all(0 < t <= r.elapsed_s for t in r.stream_finish_s)
    assert r.t_end_ns - r.t_start_ns == pytest.approx(r.elapsed_s * 1e9, rel=1e-6)
    assert r.cpu_s > 0


def test_size_rounds_up_to_whole_messages(port: int) -> None:
    r = run(port, Workload(message_bytes=100 * KIB, bytes_per_stream=250 * KIB), window_bytes=MIB)
    assert r.messages == 3 and r.bytes == 300 * KIB


def test_static_window_bounds_every_data_frame(port: int) -> None:
    r = run(port, Workload(message_bytes=64 * KIB, bytes_per_stream=MIB), window_bytes=16 * KIB)
    assert r.bytes == MIB
    assert largest_frame(r) <= 16 * KIB


def test_data_still_flows_with_a_1_kib_window(port: int) -> None:
    workload = Workload(message_bytes=16 * KIB, bytes_per_stream=256 * KIB, timeout_s=20)
    r = run(port, workload, window_bytes=KIB)
    assert r.bytes == 256 * KIB
    assert largest_frame(r) <= KIB
    assert any("cannot shrink" in n for n in r.notes)  # a 1 KiB connection window is impossible


def test_four_streams_on_one_connection_all_finish(port: int) -> None:
    workload = Workload(message_bytes=32 * KIB, streams=4, bytes_per_stream=MIB, timeout_s=20)
    r = run(port, workload, window_bytes=256 * KIB, conn_window_bytes=256 * KIB)
    assert r.stream_bytes == (MIB,) * 4
    assert len(r.stream_finish_s) == 4 and max(r.stream_finish_s) <= r.elapsed_s


def test_streams_spread_over_two_connections(port: int) -> None:
    workload = Workload(message_bytes=32 * KIB, streams=3, bytes_per_stream=512 * KIB, timeout_s=20)
    r = run(port, workload, window_bytes=128 * KIB, connections=2)
    assert r.stream_bytes == (512 * KIB,) * 3


def test_timed_download_stops_at_the_deadline_and_measures_rtt(port: int) -> None:
    r = run(port, Workload(duration_s=0.3), window_bytes=MIB)
    assert r.elapsed_s == pytest.approx(0.3, abs=0.05)
    # A timed phase ends mid-message: it counts the DATA bytes received (whole messages
    # plus their 9-byte gRPC/protobuf framing, plus the part of the message in flight).
    whole = r.messages * 256 * KIB
    assert whole <= r.bytes < whole + 256 * KIB + r.messages * 16
    assert len(r.ping_rtt_ms) >= 3 and all(0 < x < 1000 for x in r.ping_rtt_ms)
    assert r.window_trace == ()


def test_half_credit_policy_transfers_everything(port: int) -> None:
    workload = Workload(message_bytes=64 * KIB, bytes_per_stream=2 * MIB)
    r = run(port, workload, window_bytes=128 * KIB, credit_policy="half")
    assert r.bytes == 2 * MIB


def test_dynamic_window_grows_from_64_kib_and_never_shrinks(port: int) -> None:
    r = run(port, Workload(bytes_per_stream=8 * MIB, timeout_s=20))
    assert r.bytes == 8 * MIB
    windows = [w for _, w in r.window_trace]
    times = [t for t, _ in r.window_trace]
    assert r.window_trace[0] == (0.0, 65_535)
    assert len(windows) >= 3 and windows == sorted(windows) and windows[-1] <= 16 * MIB
    assert times == sorted(times)
    assert r.ping_rtt_ms


def test_unary_calls_return_latencies(port: int) -> None:
    r = run(port, Workload(kind="unary", calls=20), window_bytes=64 * KIB)
    assert len(r.latencies_ms) == 20 and r.messages == 20
    assert all(0 < x < 1000 for x in r.latencies_ms)
    assert sum(r.latencies_ms) <= r.elapsed_s * 1000 * 1.01


def test_unknown_method_is_a_measurement_error(port: int) -> None:
    client = ClientConfig(kind="h2", window_mode="static", window_bytes=64 * KIB)
    job = client_job(ClientProcess(target_port=port, trial=Trial(client=client)))
    session = Session(job, now_ns() + 10 * NS_PER_S)
    try:
        session.connect("127.0.0.1", port)
        path = wire.SERVICE_PATH + "/Nope"
        call = session.conns[0].start_call(path, wire.ping_body(), now_ns())
        session.send_pending()
        with pytest.raises(MeasurementError, match="grpc-status 12"):
            session.drive(lambda: call.done)
    finally:
        session.close()


def test_silent_server_hits_the_hard_timeout() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        silent_port = listener.getsockname()[1]
        with pytest.raises(MeasurementError, match="timeout"):
            run(silent_port, Workload(bytes_per_stream=256 * KIB, timeout_s=1.0), window_bytes=MIB)


def test_connection_refused_is_a_failed_measurement() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free_port = s.getsockname()[1]
    with pytest.raises(MeasurementError, match="refused"):
        run(free_port, Workload(bytes_per_stream=256 * KIB), window_bytes=MIB)


# -- through the delay line: the window binds, as the frame tap sees it ----------------------

RTT_MS = 20.0


@pytest.fixture
def topo() -> Iterator[Topology]:
    # Per test: the shared leftover-process check wants each test to stop what it started.
    with Topology() as topology:
        yield topology


def test_static_window_bounds_throughput_through_the_delay_line(topo: Topology) -> None:
    window = 64 * KIB
    client = ClientConfig(kind="h2", window_mode="static", window_bytes=window)
    trial = Trial(link=Link.from_rtt(RTT_MS), client=client, workload=Workload(duration_s=1.0))
    m = topo.measure(trial)
    assert m.ok, m.error
    r, frames = m.result, m.frames
    assert r is not None and frames is not None
    assert frames.client.settings["INITIAL_WINDOW_SIZE"] == window
    assert frames.client.conn_window_updates.first[0] == window - 65_535
    # At most one window per round trip, plus the first window: never faster than physics.
    assert r.bytes <= window * (r.elapsed_s / (RTT_MS / 1000) + 1) * 1.05
    assert r.throughput_mib_s > 0.4 * (m.theory_mib_s or 0)
    assert min(r.ping_rtt_ms) >= RTT_MS * 0.95


def test_dynamic_window_grows_through_the_delay_line(topo: Topology) -> None:
    client = ClientConfig(kind="h2", window_mode="dynamic")
    workload = Workload(bytes_per_stream=8 * MIB)
    m = topo.measure(Trial(link=Link.from_rtt(RTT_MS), client=client, workload=workload))
    assert m.ok, m.error
    r, frames = m.result, m.frames
    assert r is not None and frames is not None and r.bytes == 8 * MIB
    windows = [w for _, w in r.window_trace]
    assert windows[0] == 65_535 and windows == sorted(windows) and windows[-1] >= MIB
    assert frames.client.pings_sent >= len(windows) - 1
    # Growth needs round trips: the window cannot double faster than once per RTT.
    for (t0, w0), (t1, w1) in itertools.pairwise(r.window_trace):
        assert w1 <= 3 * w0 and t1 - t0 >= RTT_MS * 0.9


def test_dynamic_mode_is_grpc_go_s_receiver_on_the_wire(topo: Topology) -> None:
    """What the tap sees: 16 KiB frames advertised, both windows from 65535, connection
    credit in grpc-go's quarter pattern (each update the first frame that takes the unacked
    bytes to limit/4 = 16383, so 16383..32766 B; never one per frame below it), and each
    growth announced by a SETTINGS and a connection update of the same size."""
    client = ClientConfig(kind="h2", window_mode="dynamic")
    workload = Workload(bytes_per_stream=4 * MIB)
    m = topo.measure(Trial(link=Link.from_rtt(RTT_MS), client=client, workload=workload))
    assert m.ok, m.error
    r, frames = m.result, m.frames
    assert r is not None and frames is not None and r.bytes == 4 * MIB
    assert frames.client.settings["MAX_FRAME_SIZE"] == 16_384
    assert frames.client.settings["INITIAL_WINDOW_SIZE"] == 65_535
    assert frames.data_down.max_frame <= 16_384
    first = frames.client.conn_window_updates.first
    assert len(first) == 10
    # As grpc-go's: the estimator runs from the start, so the warm-up reply's bytes are
    # flushed just before its BDP PING; then the quarter pattern until the first growth.
    assert 0 < first[0] < 65_535 // 4, first
    assert all(65_535 // 4 <= inc < 2 * (65_535 // 4) for inc in first[1:4]), first
    # Connection window = 65535 + every growth; the stream window's SETTINGS say the same.
    steps = [s.window_bytes for s in frames.client.window_growth]
    assert steps[0] == 65_535 and steps[-1] == r.window_trace[-1][1]
    assert (
        frames.client.pings_sent <= 40
    )  # no PINGs once the 16 MiB cap is reached (and 4 MiB is short)


def test_immediate_credit_stays_a_named_option_of_the_dynamic_mode(topo: Topology) -> None:
    client = ClientConfig(kind="h2", window_mode="dynamic", credit_policy="immediate")
    workload = Workload(bytes_per_stream=2 * MIB)
    m = topo.measure(Trial(link=Link.from_rtt(RTT_MS), client=client, workload=workload))
    assert m.ok, m.error
    assert m.frames is not None and m.result is not None and m.result.bytes == 2 * MIB
    # Immediate: credit once per read, often below a quarter of the window.
    assert min(m.frames.client.conn_window_updates.first) < 65_535 // 4


@pytest.mark.parametrize(
    ("read_rate_bits_s", "streams", "conn_credit"),
    [(1e3, 1, "receipt"), (1e6, 1, "receipt"), (20e6, 1, "receipt"), (1e3, 4, "read")],
)
def test_a_slow_reader_keeps_to_the_servers_ping_rules(
    topo: Topology, read_rate_bits_s: float, streams: int, conn_credit: str
) -> None:
    """While a slow reader stalls the data, RTT probes wait for the server's next DATA:
    grpcio's server closes a connection (GOAWAY too_many_pings) after two PINGs with nothing
    sent between them."""
    window = 64 * KIB
    client = ClientConfig(
        kind="h2",
        window_mode="static",
        window_bytes=window,
        conn_window_bytes=window,
        conn_credit=conn_credit,  # type: ignore[arg-type]
    )
    slow = max(1, streams - 1)
    workload = Workload(
        streams=streams, duration_s=0.5, slow_streams=slow, read_rate_bits_s=read_rate_bits_s
    )
    m = topo.measure(Trial(link=Link.from_rtt(RTT_MS), client=client, workload=workload))
    assert m.ok, m.error
    assert m.frames is not None and m.result is not None
    if read_rate_bits_s <= 1e3:  # nothing is read, so the window fills once and data stops
        assert m.frames.client.pings_sent <= 2, m.frames.client.pings_sent
    assert m.result.ping_rtt_ms and min(m.result.ping_rtt_ms) >= RTT_MS * 0.95
