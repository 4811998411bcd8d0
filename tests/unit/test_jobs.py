"""The worker contract's jobs and results (``protos/worker.proto``): built from the kit's
validated plans (``kit.plan.jobs``), sent as canonical JSON, decoded by the protobuf library,
and the results read back into the kit's records (``kit.results.wire``). Pure."""

from __future__ import annotations

import json
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kit._proto import worker_pb2 as pb
from kit.errors import UsageError
from kit.plan import programs
from kit.plan.jobs import (
    MAX_ECHO_BYTES,
    MESSAGE_CACHE_BYTES,
    READ_JITTER,
    READ_SEED,
    SERVER_MAX_CONCURRENT_STREAMS,
    client_job,
    job_text,
    parse_job,
    server_job,
)
from kit.plan.processes import ClientProcess, ServerProcess
from kit.plan.trial import (
    SERVER_HELD_MAX_BYTES,
    SERVER_SHARED_MESSAGE_MAX_BYTES,
    ClientConfig,
    Link,
    ServerConfig,
    Trial,
    Workload,
    upload_call_timeout_s,
)
from kit.plan.units import KIB, MIB
from kit.results.client import ClientResult
from kit.results.server import ServerResult
from kit.results.wire import result_json, result_record


def _job(client: ClientConfig, workload: Workload, rtt_ms: float = 20.0) -> pb.ClientJob:
    trial = Trial(link=Link.from_rtt(rtt_ms), client=client, workload=workload)
    return client_job(ClientProcess(target_host="127.0.0.1", target_port=7000, trial=trial))


def test_the_kinds_types_are_the_programs_tables() -> None:
    assert get_args(programs.ClientKind) == programs.CLIENT_KINDS == tuple(programs.CLIENT_PROGRAMS)
    assert get_args(programs.ServerKind) == programs.SERVER_KINDS
    assert programs.STACK_KINDS == ("grpc-go", "grpc-java", "grpc-js", "tonic")
    assert "tonic" in programs.kinds_text(programs.CLIENT_KINDS)


def test_a_static_download_job_carries_its_resolved_windows_and_timed_phase() -> None:
    client = ClientConfig(kind="grpc-go", window_mode="static", window_bytes=MIB)
    job = _job(client, Workload(streams=4))
    assert job.windows.static and job.windows.stream_bytes == MIB
    assert job.windows.conn_bytes == 4 * MIB  # window x the streams sharing the connection
    assert job.WhichOneof("work") == "download"
    assert job.download.streams == 4 and job.download.messages_per_stream == 0
    assert job.download.timed_s == pytest.approx(2.0)  # max(2 s, 20 RTTs of 20 ms)
    assert not job.HasField("h2")  # only the kit's h2 client reads that


def test_a_dynamic_job_has_no_windows_and_a_long_rtt_stretches_the_timed_phase() -> None:
    job = _job(ClientConfig(kind="tonic"), Workload(), rtt_ms=200.0)
    assert not job.windows.static and job.windows.stream_bytes == 0
    assert job.download.timed_s == pytest.approx(4.0)  # 20 RTTs


def test_a_fixed_size_download_with_slow_readers_carries_the_pacing() -> None:
    workload = Workload(streams=3, bytes_per_stream=MIB, slow_streams=1, read_rate_bits_s=8e6)
    job = _job(ClientConfig(kind="grpc-js"), workload)
    assert job.download.messages_per_stream == 4  # 1 MiB of 256 KiB messages
    assert job.download.slow_streams == 1
    pacing = job.download.pacing
    assert (pacing.rate_bytes_s, pacing.jitter, pacing.seed) == (1e6, READ_JITTER, READ_SEED)


def test_an_upload_job_carries_its_call_deadline() -> None:
    trial = Trial(link=Link.from_rtt(300), workload=Workload(kind="upload", duration_s=3))
    job = client_job(ClientProcess(target_port=1, trial=trial))
    assert job.upload.timed_s == 3 and job.upload.messages == 0
    assert job.upload.call_timeout_s == upload_call_timeout_s(trial) == pytest.approx(9.0)


def test_unary_calls_and_the_idle_gap() -> None:
    job = _job(ClientConfig(kind="grpc-java"), Workload(kind="unary", calls=50, idle_s=12))
    assert job.unary.calls == 50 and job.idle_s == 12


def test_the_h2_client_gets_its_receiver_resolved() -> None:
    job = _job(ClientConfig(kind="h2"), Workload(prime_bytes=4 * MIB, idle_s=1))
    assert (job.h2.policy, job.h2.credit, job.h2.conn_credit) == ("grpc-go", "quarter", "receipt")
    assert job.h2.max_frame_bytes == 16 * KIB and job.h2.prime_bytes == 4 * MIB
    pool = _job(ClientConfig(kind="h2", window_mode="pool"), Workload())
    assert pool.h2.policy == "pool" and pool.h2.pool_bytes == 1_600_000
    model = _job(ClientConfig(kind="h2", window_mode="dotnet"), Workload())
    assert model.h2.policy == "dotnet" and not model.windows.static


def test_options_go_as_the_type_their_knob_takes() -> None:
    options = (("windowUpdateRatio", "0.25"), ("useNioTransport", 1), ("keepAliveWithoutCalls", 1))
    job = _job(ClientConfig(kind="grpc-java", channel_options=options), Workload())
    sent = [(o.name, o.WhichOneof("value")) for o in job.options]
    assert sent == [
        ("windowUpdateRatio", "ratio"),
        ("useNioTransport", "int"),
        ("keepAliveWithoutCalls", "flag"),
    ]
    assert job.options[0].ratio == 0.25 and job.options[2].flag is True


def test_grpcio_bdp_off_is_its_channel_argument() -> None:
    job = _job(ClientConfig(kind="grpcio", window_mode="bdp-off"), Workload())
    assert [(o.name, o.int) for o in job.options] == [("grpc.http2.bdp_probe", 0)]
    assert not job.windows.static


def test_a_server_job_carries_the_limits_every_server_keeps() -> None:
    config = ServerConfig(kind="grpc-go", window_mode="static", window_bytes=512 * KIB)
    job = server_job(ServerProcess(config=config, listen_port=5000))
    assert (job.listen_host, job.listen_port) == ("127.0.0.1", 5000)
    assert job.windows.static and job.windows.stream_bytes == job.windows.conn_bytes == 512 * KIB
    assert job.download_budget_bytes == SERVER_HELD_MAX_BYTES
    assert job.shared_message_max_bytes == SERVER_SHARED_MESSAGE_MAX_BYTES
    assert job.message_cache_bytes == MESSAGE_CACHE_BYTES and job.max_echo_bytes == MAX_ECHO_BYTES
    assert job.max_concurrent_streams == SERVER_MAX_CONCURRENT_STREAMS


def test_a_job_is_one_line_of_canonical_json_with_the_protos_names() -> None:
    text = job_text(_job(ClientConfig(kind="grpc-go", connections=2), Workload(streams=2)))
    assert "\n" not in text
    data = json.loads(text)
    assert data["target_port"] == 7000 and data["connections"] == 2  # snake_case, as written
    camel = parse_job('{"targetPort": 7, "messageBytes": 9}', pb.ClientJob(), "test")
    snake = parse_job('{"target_port": 7, "message_bytes": 9}', pb.ClientJob(), "test")
    assert camel == snake  # the camelCase names decode too


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "bad job"),
        ('{"nonsense": 1}', "nonsense"),
        ('{"target_port": "eighty"}', "bad job"),
        ('{"connections": -1}', "bad job"),
        ('{"target_host": "\udcff"}', "not UTF-8"),
    ],
)
def test_a_bad_job_is_one_usage_error_naming_its_source(text: str, says: str) -> None:
    with pytest.raises(UsageError, match=says) as refused:
        parse_job(text, pb.ClientJob(), "h2 client: --config")
    assert str(refused.value).startswith("h2 client: --config: ")


_windows = st.one_of(st.none(), st.integers(65_535, 64 * MIB))
_kinds = st.sampled_from(["grpcio", "h2", "grpc-go", "grpc-java", "tonic"])


@settings(max_examples=60, deadline=None)
@given(
    kind=_kinds,
    window=_windows,
    streams=st.integers(1, 16),
    connections=st.integers(1, 4),
    rtt_ms=st.floats(0, 500),
    fixed=st.booleans(),
)
def test_every_job_round_trips_through_its_json(
    kind: str, window: int | None, streams: int, connections: int, rtt_ms: float, fixed: bool
) -> None:
    client = ClientConfig(
        kind=kind,  # type: ignore[arg-type]
        window_mode="static" if window is not None else "dynamic",
        window_bytes=window,
        connections=min(connections, streams),
    )
    workload = Workload(streams=streams, bytes_per_stream=MIB if fixed else None)
    trial = Trial(link=Link.from_rtt(rtt_ms), client=client, workload=workload)
    job = client_job(ClientProcess(target_port=9, trial=trial))
    assert parse_job(job_text(job), pb.ClientJob(), "test") == job
    assert job.download.timed_s == pytest.approx(workload.timed_duration_s(rtt_ms))
    assert job.windows.conn_bytes == (trial.conn_window_bytes or 0)


_counts = st.integers(0, 2**40)
_times = st.floats(0, 1e6, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    counts=st.tuples(_counts, _counts, _counts),
    streams=st.lists(st.tuples(_counts, _times), max_size=5),
    trace=st.lists(st.tuples(_times, _counts), max_size=5),
    optional=st.tuples(st.none() | _times, st.none() | _counts),
    notes=st.lists(st.text(max_size=20), max_size=3),
)
def test_a_client_result_round_trips_through_its_message(
    counts: tuple[int, int, int],
    streams: list[tuple[int, float]],
    trace: list[tuple[float, int]],
    optional: tuple[float | None, int | None],
    notes: list[str],
) -> None:
    result = ClientResult(
        client="grpc-go",
        bytes=counts[0],
        messages=counts[1],
        sent_bytes=counts[2],
        elapsed_s=1.5,
        t_start_ns=123,
        t_end_ns=456,
        stream_bytes=tuple(b for b, _ in streams),
        stream_finish_s=tuple(t for _, t in streams),
        window_trace=tuple(trace),
        notes=tuple(notes),
        credit_wait_s=optional[0],
        peak_unread_bytes=optional[1],
    )
    data = json.loads(json.dumps(result_json(result)))  # as a line carries it
    assert result_record(ClientResult, data, "result") == result


def test_a_server_result_round_trips_and_a_malformed_one_is_refused() -> None:
    result = ServerResult(rpcs=41, refused=38)
    assert result_record(ServerResult, result_json(result), "result") == result
    assert result_record(ServerResult, {"rpcs": "41", "refused": 38}, "r") == result
    with pytest.raises(UsageError, match="server result"):
        result_record(ServerResult, {"rpcs": 1, "calls": 2}, "server result")
    with pytest.raises(UsageError, match="negative"):
        result_record(ClientResult, {"client": "x", "elapsed_s": -1}, "client result")
