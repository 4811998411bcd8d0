"""kit.plan.tables: the reference tables as campaigns - cells, sizing, selection, schedule."""

from __future__ import annotations

from collections import Counter

import pytest

from kit.errors import UsageError
from kit.plan.tables import TABLE_NUMBERS, TablesSettings, parse_only, plan_tables
from kit.plan.tables.sizing import DEFAULT_TIMING, QUICK_TIMING, timed_duration_s
from kit.plan.tables.stacks import (
    CLIENT_STACKS,
    SERVER_STACKS,
    links_cells,
    upload_cells,
    windows_cells,
)
from kit.plan.tables.starvation import starvation_cells
from kit.plan.tables.unary import unary_cells
from kit.plan.tables.windows import SHORT_TRANSFER_BYTES, sized_transfer_bytes, table1_cells
from kit.plan.trial import Link, theory_mib_s
from kit.plan.units import MIB
from kit.results.store import decode_record, encode_record


def test_parse_only() -> None:
    assert parse_only(None) == (
        "windows",
        "wire",
        "starvation",
        "unary",
        "uploads",
        "links",
        "sharing",
        "stacks",
        "policies",
        "loss",
        "pairs",
    )
    assert parse_only("pairs") == parse_only("11") == ("pairs",)
    assert parse_only("policies") == parse_only("9") == ("policies",)
    assert parse_only("loss") == parse_only("10") == ("loss",)
    assert parse_only("stacks") == parse_only("8") == ("stacks",)
    assert parse_only("uploads") == parse_only("5") == ("uploads",)
    assert parse_only("links,6") == ("links",)
    assert parse_only("3,1") == ("windows", "starvation")
    assert parse_only(" 2 ") == ("wire",)
    assert parse_only("Unary,windows") == ("windows", "unary")
    assert parse_only("unary,4") == ("unary",)
    for bad in ("", ",", "12", "1,x", "0", "tables", "stack"):
        with pytest.raises(UsageError, match="--only"):
            parse_only(bad)


def test_settings_validate_and_round_trip() -> None:
    with pytest.raises(UsageError, match="--rounds"):
        TablesSettings(rounds=0)
    with pytest.raises(UsageError, match="--only"):
        TablesSettings(only=("seven",))
    settings = TablesSettings(quick=True, rounds=2, seed=9, only=("windows", "unary"))
    assert decode_record(encode_record(settings)) == settings
    assert settings.timing == QUICK_TIMING
    # Earlier releases stored table numbers; they read back as names.
    old = {
        "schema": 2,
        "kind": "tables-plan",
        "quick": True,
        "rounds": 2,
        "seed": 9,
        "only": [1, 4],
    }
    assert decode_record(old) == settings


def test_timed_duration_is_at_least_20_rtts_and_capped() -> None:
    assert timed_duration_s(0.0, None, DEFAULT_TIMING) == DEFAULT_TIMING.base_s
    # A slow cell runs longer to carry min_bytes, but never past the cap...
    assert timed_duration_s(20.0, 3.125, DEFAULT_TIMING) == pytest.approx(4 / 3.125)
    assert timed_duration_s(20.0, 0.5, DEFAULT_TIMING) == DEFAULT_TIMING.max_s
    # ...except that 20 RTTs always fit.
    assert timed_duration_s(100.0, None, QUICK_TIMING) == pytest.approx(2.0)


def test_sized_transfer_is_whole_messages() -> None:
    assert sized_transfer_bytes(3.125, 1.28) == 16 * 256 * 1024
    assert sized_transfer_bytes(0.01, 1.0) == 4 * 256 * 1024  # never fewer than 4 messages


def test_table1_rows_per_rtt() -> None:
    cells = {c.key: c.trial for c in table1_cells(20.0, DEFAULT_TIMING)}
    assert len(cells) == 12
    for kind in ("grpcio", "h2"):
        assert cells[f"{kind}-dynamic-8MiB"].workload.bytes_per_stream == SHORT_TRANSFER_BYTES
        assert cells[f"{kind}-dynamic-timed"].workload.bytes_per_stream is None
        for window in ("64KiB", "256KiB", "1MiB", "4MiB"):
            trial = cells[f"{kind}-static-{window}"]
            assert trial.client.kind == kind and trial.client.window_mode == "static"
    assert all(t.link == Link.from_rtt(20.0) for t in cells.values())
    # h2 static rows up to 200 MiB/s carry a sized fixed transfer; grpcio rows are timed.
    assert cells["h2-static-64KiB"].workload.bytes_per_stream == 16 * 256 * 1024
    assert cells["h2-static-4MiB"].workload.bytes_per_stream == 200 * MIB
    assert cells["grpcio-static-64KiB"].workload.duration_s == pytest.approx(1.28)
    loopback = {c.key: c.trial for c in table1_cells(0.0, DEFAULT_TIMING)}
    assert loopback["h2-static-64KiB"].workload.bytes_per_stream is None  # no theory at RTT 0


def test_every_cell_has_a_hard_timeout_above_its_expected_time() -> None:
    settings = TablesSettings()
    for campaign in plan_tables(settings):
        for cell in campaign.spec.cells:
            workload = cell.trial.workload
            assert workload.timeout_s >= DEFAULT_TIMING.timeout_floor_s
            if workload.duration_s is not None:
                assert workload.timeout_s > workload.duration_s


def test_starvation_and_unary_cells() -> None:
    starving = {c.key: c.trial for c in starvation_cells(DEFAULT_TIMING)}
    assert sorted(starving) == ["h2-conn-4MiB", "h2-conn-64KiB"]
    slow = starving["h2-conn-64KiB"]
    assert (slow.workload.streams, slow.workload.bytes_per_stream) == (4, 4 * MIB)
    assert (slow.client.window_bytes, slow.client.conn_window_bytes) == (MIB, 65536)
    assert theory_mib_s(slow) == pytest.approx(12.5)
    unary = {c.key: c.trial for c in unary_cells(QUICK_TIMING)}
    assert set(unary) == {"grpcio-dynamic", "grpcio-static-64KiB", "h2-dynamic", "h2-static-64KiB"}
    assert all(t.workload.kind == "unary" and t.link.rtt_ms == 5.0 for t in unary.values())


@pytest.mark.parametrize(
    ("only", "names"),
    [
        (
            ("windows", "wire", "starvation", "unary"),
            [
                "table1-loopback",
                "table1-rtt5ms",
                "table1-rtt20ms",
                "table3-starvation",
                "table4-unary",
            ],
        ),
        (("wire",), ["table1-rtt20ms"]),
        (("windows",), ["table1-loopback", "table1-rtt5ms", "table1-rtt20ms"]),
        (("starvation", "unary"), ["table3-starvation", "table4-unary"]),
    ],
)
def test_selection_runs_only_the_campaigns_needed(only: tuple[str, ...], names: list[str]) -> None:
    assert [c.name for c in plan_tables(TablesSettings(only=only))] == names


def test_campaign_names_carry_their_tables_numbers() -> None:
    campaigns = plan_tables(TablesSettings())
    assert {c.name: c.tables for c in campaigns} == {
        "table1-loopback": ("windows",),
        "table1-rtt5ms": ("windows",),
        "table1-rtt20ms": ("windows", "wire"),  # table 2 reads table 1's 20 ms campaign
        "table3-starvation": ("starvation",),
        "table4-unary": ("unary",),
        "table5-rtt20ms": ("uploads",),
        "table5-rtt103ms": ("uploads",),
        "table6-links": ("links",),
        "table7-sharing": ("sharing",),
        "table8-windows": ("stacks",),
        "table8-links": ("stacks",),
        "table8-uploads": ("stacks",),
        "table9-links": ("policies",),
        "table9-sharing": ("policies",),
        "table10-loss": ("loss",),
        "table11-pairs": ("pairs",),
    }
    for campaign in campaigns:
        assert campaign.name.startswith(f"table{TABLE_NUMBERS[campaign.tables[0]]}-")


def test_schedule_has_the_control_twice_per_round_in_a_seeded_reshuffled_order() -> None:
    campaign = plan_tables(TablesSettings(rounds=3, seed=4, only=("unary",)))[0]
    schedule = campaign.spec.schedule()
    by_round: dict[int, list[str]] = {}
    for run in schedule:
        by_round.setdefault(run.round_index, []).append(run.key)
    assert len(by_round) == 3
    for keys in by_round.values():
        assert Counter(keys)["grpcio-dynamic"] == 2
        assert Counter(keys) - Counter({"grpcio-dynamic": 2}) == Counter(
            {"grpcio-static-64KiB": 1, "h2-dynamic": 1, "h2-static-64KiB": 1}
        )
    assert [r.run_id for r in schedule] == [r.run_id for r in campaign.spec.schedule()]
    assert len({tuple(keys) for keys in by_round.values()}) > 1  # reshuffled


def test_stacks_cells_cover_every_stack_with_its_own_knobs() -> None:
    windows = {c.key: c.trial for c in windows_cells(quick=False)}
    # stacks x (defaults + 3 static windows) x 2 RTTs, and tonic's adaptive window too
    assert len(windows) == (6 * 4 + 1) * 2
    assert {t.client.kind for t in windows.values()} == set(CLIENT_STACKS)
    assert {t.link.rtt_ms for t in windows.values()} == {5.0, 20.0}
    go = windows["rtt20ms-grpc-go-static-64KiB"]
    assert (go.client.window_mode, go.client.window_bytes) == ("static", 65536)
    assert windows["rtt5ms-grpc-js-dynamic"].client.window_mode == "dynamic"
    assert all(t.server.kind == "grpcio" for t in windows.values())
    assert all(
        t.workload.duration_s and t.workload.duration_s >= 20 * t.link.rtt_ms / 1000
        for t in windows.values()
    )
    links = {c.key: c.trial for c in links_cells(quick=False)}
    assert len(links) == (6 + 1) * 4 and all(not t.workload.warmup for t in links.values())
    assert {t.link.rate_down_bits_s for t in links.values()} == {100e6, 1e9}
    assert "100Mbit-20ms-grpc-go-dynamic" in links and "100Mbit-20ms-h2-dynamic" in links
    uploads = {c.key: c.trial for c in upload_cells(quick=False)}
    assert {t.server.kind for t in uploads.values()} == set(SERVER_STACKS)
    assert {t.client.kind for t in uploads.values()} == {"grpcio"}
    assert uploads["server-grpc-java-64KiB"].server.window_bytes == 65536
    assert uploads["server-grpc-java-default"].server.window_mode == "dynamic"
    assert all(t.link.rtt_ms == 103.0 and t.workload.kind == "upload" for t in uploads.values())
    quick = [c.spec for c in plan_tables(TablesSettings(quick=True, rounds=1, only=("stacks",)))]
    assert [len(s.cells) for s in quick] == [13, 7, 5]
    assert links["100Mbit-20ms-tonic-adaptive"].client.channel_options == (
        ("http2_adaptive_window", 1),
    )
    assert uploads["server-tonic-adaptive"].server.channel_options == (
        ("http2_adaptive_window", 1),
    )
    for spec in quick + [c.spec for c in plan_tables(TablesSettings(only=("stacks",)))]:
        control = next(c for c in spec.cells if c.key == spec.control_key)
        assert control.trial.client.kind in ("grpcio", "h2")  # always there: never skipped
        assert control.trial.server.kind == "grpcio"


def test_the_stacks_table_runs_one_round_fewer() -> None:
    by_table = {c.name: c.spec.rounds for c in plan_tables(TablesSettings(rounds=3))}
    assert by_table["table8-windows"] == by_table["table8-uploads"] == 2
    assert by_table["table1-rtt20ms"] == by_table["table7-sharing"] == 3
    quick = plan_tables(TablesSettings(quick=True, rounds=1, only=("stacks",)))
    assert {c.spec.rounds for c in quick} == {1}


def test_the_pairs_table_runs_once_its_cells_together() -> None:
    """Table 11 is qualitative (who hangs up on whom): one round whatever --rounds says, its
    cells at once; every client against every server, keepalive where the client has it."""
    (pairs,) = plan_tables(TablesSettings(only=("pairs",), rounds=5))
    assert pairs.spec.rounds == 1 and pairs.spec.together
    keys = {c.key for c in pairs.spec.cells}
    assert len(keys) == 6 * 5 + 5 * 5  # shipped: every pair; keepalive: h2 has none
    assert "keepalive-grpc-java-grpc-go" in keys and "keepalive-h2-grpcio" not in keys
