from __future__ import annotations

import pytest

from kit.errors import UsageError
from kit.plan.grpc_args import merge_options, parse_option, window_options
from kit.plan.trial import ClientConfig, Link, ServerConfig, Trial, Workload, theory_mib_s
from kit.results.codec import from_json, to_json


def test_link_rtt_is_the_sum_of_both_directions() -> None:
    assert Link.from_rtt(20).rtt_ms == 20
    assert Link(delay_up_ms=3, delay_down_ms=7).rtt_ms == 10
    with pytest.raises(UsageError, match="delay_up_ms"):
        Link(delay_up_ms=-1)


def test_theory_is_window_over_rtt() -> None:
    trial = Trial(
        link=Link.from_rtt(20),
        client=ClientConfig(kind="h2", window_mode="static", window_bytes=65536),
    )
    assert theory_mib_s(trial) == pytest.approx(65536 / 0.020 / 2**20)


def test_theory_takes_the_binding_layer() -> None:
    # 4 streams x 1 MiB stream window, but a 64 KiB connection window binds.
    client = ClientConfig(
        kind="h2", window_mode="static", window_bytes=2**20, conn_window_bytes=65536
    )
    trial = Trial(link=Link.from_rtt(5), client=client, workload=Workload(streams=4))
    assert theory_mib_s(trial) == pytest.approx(65536 / 0.005 / 2**20)
    # Default connection window = stream window x streams: the stream layer binds.
    wide = Trial(
        link=Link.from_rtt(5),
        client=ClientConfig(kind="h2", window_mode="static", window_bytes=2**20),
        workload=Workload(streams=4),
    )
    assert theory_mib_s(wide) == pytest.approx(4 * 2**20 / 0.005 / 2**20)


def test_theory_counts_separate_connections() -> None:
    client = ClientConfig(kind="h2", window_mode="static", window_bytes=65536, connections=4)
    trial = Trial(link=Link.from_rtt(10), client=client, workload=Workload(streams=4))
    assert theory_mib_s(trial) == pytest.approx(4 * 65536 / 0.010 / 2**20)


def test_no_theory_for_dynamic_or_loopback() -> None:
    assert theory_mib_s(Trial(link=Link.from_rtt(20))) is None
    static = ClientConfig(kind="h2", window_mode="static", window_bytes=65536)
    assert theory_mib_s(Trial(link=Link.from_rtt(0), client=static)) is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"kind": "curl"}, "client"),
        ({"window_mode": "static"}, "window_bytes"),
        ({"window_mode": "static", "window_bytes": 2**31}, "window_bytes"),
        ({"conn_window_bytes": 65536}, "conn_window_bytes"),
        ({"kind": "h2", "channel_options": (("a", 1),)}, "channel_options"),
        ({"kind": "h2", "window_mode": "bdp-off"}, "bdp-off"),
        ({"max_frame_bytes": 100}, "max frame"),
    ],
)
def test_client_config_rejects_with_the_field_named(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(UsageError, match=field):
        ClientConfig(**kwargs)  # type: ignore[arg-type]


def test_trial_round_trips_through_json_dict() -> None:
    trial = Trial(
        link=Link(1.0, 2.5),
        client=ClientConfig(channel_options=(("grpc.http2.bdp_probe", 0),)),
        server=ServerConfig(window_mode="static", window_bytes=1 << 20),
        workload=Workload(kind="unary", calls=10),
        label="x",
    )
    assert from_json(Trial, to_json(trial), "trial") == trial


def test_timed_duration_is_at_least_20_rtts() -> None:
    assert Workload().timed_duration_s(20) == 2.0
    assert Workload().timed_duration_s(200) == pytest.approx(4.0)
    assert Workload(duration_s=0.5).timed_duration_s(200) == 0.5


def test_grpcio_window_options() -> None:
    assert window_options("dynamic", None) == []
    assert window_options("bdp-off", None) == [("grpc.http2.bdp_probe", 0)]
    assert window_options("static", 65536) == [
        ("grpc.http2.bdp_probe", 0),
        ("grpc.http2.lookahead_bytes", 65536),
    ]


def test_parse_option_and_merge() -> None:
    assert parse_option("grpc.http2.bdp_probe=0") == ("grpc.http2.bdp_probe", 0)
    assert parse_option("grpc.primary_user_agent=kit") == ("grpc.primary_user_agent", "kit")
    assert parse_option("x=0x10") == ("x", 16)
    for bad in ("novalue", "=1", "k=", "a b=1"):
        with pytest.raises(UsageError, match="--option"):
            parse_option(bad)
    assert merge_options([("a", 1), ("b", 2)], [("a", 3)]) == [("a", 3), ("b", 2)]


def test_both_clients_take_uploads_and_the_server_window_is_the_theory() -> None:
    server = ServerConfig(window_mode="static", window_bytes=64 * 1024)
    for kind in ("h2", "grpcio"):
        trial = Trial(
            link=Link.from_rtt(100.0),
            client=ClientConfig(kind=kind),  # type: ignore[arg-type]
            server=server,
            workload=Workload(kind="upload"),
        )
        assert theory_mib_s(trial) == pytest.approx(64 / 1024 / 0.1)
    assert theory_mib_s(Trial(link=Link.from_rtt(100.0), workload=Workload(kind="upload"))) is None
