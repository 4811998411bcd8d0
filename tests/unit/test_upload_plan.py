"""Uploads, pure parts: server flags and candidates, the table's cells, the tap's server side."""

from __future__ import annotations

import h2.config
import h2.connection
import h2.settings
import pytest

from kit.capture.frametap import FrameTap
from kit.capture.summary import summarize
from kit.errors import UsageError
from kit.plan.builder import parse_candidate, server_from
from kit.plan.compare import plan_file_from_dict, plan_from_settings
from kit.plan.grpc_args import SERVER_EXTRA_CREDIT_NOTE, server_notes
from kit.plan.options import PlanOptions, ServerOptions
from kit.plan.tables import TablesSettings, plan_tables
from kit.plan.tables.uploads import CLIENT_WINDOW_KEY, UPLOAD_CONTROL, server_key
from kit.plan.trial import Link, ServerConfig, Trial, Workload, upload_call_timeout_s
from kit.plan.units import KIB, MIB
from kit.results.records import TapConnection


def test_server_flags() -> None:
    static = server_from(ServerOptions(window="64KiB"))
    assert (static.window_mode, static.window_bytes) == ("static", 64 * KIB)
    assert server_from(ServerOptions()) == ServerConfig()
    off = server_from(ServerOptions(mode="bdp-off", option=("grpc.http2.lookahead_bytes=262144",)))
    assert off.window_mode == "bdp-off"
    assert off.channel_options == (("grpc.http2.lookahead_bytes", 262144),)
    assert static.label == "server static 64 KiB" and ServerConfig().label == "server dynamic"


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (ServerOptions(window="3GiB"), "--server-window"),
        (
            ServerOptions(mode="static"),
            "--server-mode: a static server window needs --server-window",
        ),
        (ServerOptions(mode="bdp-off", window="1MiB"), "does not take a window"),
        (ServerOptions(mode="fast"), "server window mode: 'fast' is not one of"),
        (ServerOptions(option=("bdp_probe=0",)), "--server-option: 'bdp_probe'"),
        (ServerOptions(option=("grpc.x=1", "grpc.x=2")), "given twice"),
    ],
)
def test_server_flags_refuse_bad_input(options: ServerOptions, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        server_from(options)


def test_server_candidates() -> None:
    small = parse_candidate("server:window=64KiB")
    assert small.client.kind == "grpcio" and small.server.window_bytes == 64 * KIB
    off = parse_candidate("server:mode=bdp-off,option=grpc.http2.max_frame_size=1048576")
    assert off.server.channel_options == (("grpc.http2.max_frame_size", MIB),)
    dotted = parse_candidate("server:grpc.http2.bdp_probe=0")
    assert dotted.server.channel_options == (("grpc.http2.bdp_probe", 0),)
    both = parse_candidate("h2:window=1MiB,server-window=4MiB")
    assert both.client.window_bytes == MIB and both.server.window_bytes == 4 * MIB
    for bad, match in (
        ("server:windw=1MiB", "unknown server setting windw"),
        ("server:mode=static", "needs window"),
        ("h2:server-foo=1", "unknown server setting server-foo"),
        (
            "servr:window=1MiB",
            "is not one of grpcio, h2, grpc-go, grpc-java, grpc-js, tonic, server",
        ),
    ):
        with pytest.raises(UsageError, match=match):
            parse_candidate(bad)


def test_compare_plan_carries_the_server_into_each_trial() -> None:
    plan = plan_from_settings(
        PlanOptions(workload="upload", rtt="50ms"),
        parse_candidate("server:window=64KiB"),
        [parse_candidate("server:window=4MiB")],
    )
    servers = {c.key: c.trial.server.window_bytes for c in plan.cells()}
    assert servers == {"baseline": 64 * KIB, "server:window=4MiB": 4 * MIB}
    assert "upload" in plan.setup


def test_upload_deadline_is_the_timed_phase_plus_a_drain() -> None:
    timed = Trial(link=Link.from_rtt(20), workload=Workload(kind="upload", duration_s=1.0))
    assert upload_call_timeout_s(timed) == pytest.approx(6.0)
    far = Trial(link=Link.from_rtt(500), workload=Workload(kind="upload", duration_s=1.0))
    assert upload_call_timeout_s(far) == pytest.approx(11.0)  # 20 RTTs of drain
    fixed = Trial(workload=Workload(kind="upload", bytes_per_stream=MIB, timeout_s=42))
    assert upload_call_timeout_s(fixed) == 42


def test_server_note_only_for_non_dynamic_windows() -> None:
    assert server_notes(ServerConfig()) == ()
    assert server_notes(ServerConfig("static", 64 * KIB)) == (SERVER_EXTRA_CREDIT_NOTE,)
    assert server_notes(ServerConfig("bdp-off")) == (SERVER_EXTRA_CREDIT_NOTE,)


def test_uploads_table_cells() -> None:
    campaigns = plan_tables(TablesSettings(only=("uploads",)))
    assert [c.name for c in campaigns] == ["table5-rtt20ms", "table5-rtt103ms"]
    at20, at103 = (c.spec.cells for c in campaigns)
    assert len(at20) == 8 and len(at103) == 9
    assert all(c.trial.workload.kind == "upload" for c in (*at20, *at103))
    assert {c.key for c in at103} >= {UPLOAD_CONTROL, CLIENT_WINDOW_KEY, "grpcio-server-1.4MB"}
    assert all(c.spec.control_key == UPLOAD_CONTROL for c in campaigns)
    by_key = {c.key: c.trial for c in at103}
    assert by_key[CLIENT_WINDOW_KEY].client.window_bytes == 16 * MIB
    assert by_key[CLIENT_WINDOW_KEY].server == by_key[UPLOAD_CONTROL].server
    assert by_key["h2-server-1.4MB"].server.window_bytes == 1_400_000
    assert by_key["h2-server-64KiB"].workload.duration_s == pytest.approx(1.03)  # 10 RTTs
    quick = plan_tables(TablesSettings(quick=True, only=("uploads",)))[1].spec.cells[0]
    assert quick.trial.workload.duration_s == pytest.approx(0.515)
    assert server_key(None) == "dynamic" and server_key(4 * MIB) == "4MiB"


def _server_bytes(window: int) -> bytes:
    config = h2.config.H2Configuration(client_side=False)
    conn = h2.connection.H2Connection(config=config)
    conn.local_settings = h2.settings.Settings(
        client=False, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window}
    )
    conn.initiate_connection()
    conn.increment_flow_control_window(1000)
    conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 2 * window})
    return bytes(conn.data_to_send())


def test_the_tap_summary_has_the_servers_settings_and_credit() -> None:
    down = FrameTap("down")
    down.feed(_server_bytes(64 * KIB), 5)
    conn = TapConnection(conn=1, opened_ns=0, closed_ns=10, down=down.summary())
    summary = summarize([conn], delay_down_ms=10.0)
    assert summary.server.settings["INITIAL_WINDOW_SIZE"] == 64 * KIB
    assert summary.server.conn_window_updates.first == (1000,)
    assert summary.server.settings_changes == 1
    assert [s.window_bytes for s in summary.server.window_growth] == [64 * KIB, 128 * KIB]
    assert summary.client.settings == {}


def test_the_tap_marks_data_bytes_per_chunk() -> None:
    tap = FrameTap("down")
    tap.feed(_server_bytes(64 * KIB), 1)
    data_frame = (100).to_bytes(3, "big") + b"\x00\x00" + (1).to_bytes(4, "big") + b"x" * 100
    tap.feed(data_frame[:50], 2)  # the header announces 100 DATA bytes
    tap.feed(data_frame[50:], 3)  # the rest of the payload: no new DATA frame, no mark
    tap.feed(data_frame + data_frame, 4)
    assert tap.summary().data_marks == ((2, 100), (4, 300))


def test_plan_file_candidates_can_change_the_server() -> None:
    plan = plan_file_from_dict(
        {
            "workload": "upload",
            "candidate": [
                {"client": "h2", "window": "64KiB", "server-window": "4MiB"},
                "server:window=1MiB",
            ],
        }
    )
    assert [c.server.window_bytes for c in plan.candidates] == [4 * MIB, MIB]
