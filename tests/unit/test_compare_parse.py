"""kit.plan.builder, compare and presets: candidate specs, plan files, plans, presets - pure."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.analysis.knee import knee_windows
from kit.errors import UsageError
from kit.plan.builder import parse_candidate
from kit.plan.campaign import RUN_SETUP_S, expected_campaign_s
from kit.plan.compare import (
    BASELINE_KEY,
    ComparePlan,
    load_plan_file,
    plan_file_from_dict,
    plan_from_settings,
)
from kit.plan.options import PlanOptions, Raw
from kit.plan.presets import (
    BOTH,
    CONN_ONLY,
    DEFAULTS,
    STREAM_ONLY,
    knee_from,
    knee_plans,
    preset_plans,
    window_ladder,
    window_matrix,
)
from kit.plan.trial import Link, Workload, theory_mib_s
from kit.plan.units import KIB, MIB

REPO = Path(__file__).resolve().parents[2]


# --- candidate specs ----------------------------------------------------------------------


def test_bare_grpcio_is_the_cores_defaults() -> None:
    c = parse_candidate("grpcio")
    assert (c.name, c.spec) == ("grpcio", "grpcio")
    assert c.client.kind == "grpcio" and c.client.window_mode == "dynamic"
    assert c.client.channel_options == ()


def test_grpcio_channel_args_parse_ints_and_keep_strings() -> None:
    c = parse_candidate(
        "grpcio:grpc.http2.bdp_probe=0, grpc.http2.lookahead_bytes=0x400000,grpc.primary_user_agent=abc"
    )
    assert c.client.channel_options == (
        ("grpc.http2.bdp_probe", 0),
        ("grpc.http2.lookahead_bytes", 4 * MIB),
        ("grpc.primary_user_agent", "abc"),
    )


def test_a_value_may_hold_commas() -> None:
    c = parse_candidate('grpcio:grpc.service_config={"a": [1, 2]},grpc.http2.bdp_probe=0')
    assert c.client.channel_options == (
        ("grpc.service_config", '{"a": [1, 2]}'),
        ("grpc.http2.bdp_probe", 0),
    )


def test_grpcio_kit_keys() -> None:
    c = parse_candidate("grpcio:window=4MiB,connections=2")
    assert c.client.window_mode == "static" and c.client.window_bytes == 4 * MIB
    assert c.client.connections == 2 and c.client.channel_options == ()
    assert parse_candidate("grpcio:mode=bdp-off").client.window_mode == "bdp-off"


def test_h2_spec_sets_every_field() -> None:
    c = parse_candidate(
        "h2:window=4MiB,conn-window=16MiB,credit=half,max-frame=64KiB,connections=8"
    )
    cfg = c.client
    assert (cfg.kind, cfg.window_mode, cfg.window_bytes, cfg.conn_window_bytes) == (
        "h2",
        "static",
        4 * MIB,
        16 * MIB,
    )
    assert (cfg.credit_policy, cfg.max_frame_bytes, cfg.connections) == ("half", 64 * KIB, 8)


def test_bare_h2_is_dynamic_and_underscores_are_accepted() -> None:
    assert parse_candidate("h2").client.window_mode == "dynamic"
    assert parse_candidate("h2:window=1MiB,conn_window=2MiB").client.conn_window_bytes == 2 * MIB


def test_name_overrides_the_spec_as_label() -> None:
    c = parse_candidate("h2:window=4MiB", "big")
    assert (c.name, c.spec) == ("big", "h2:window=4MiB")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("curl", "client 'curl' is not one of grpcio, h2"),
        ("h2:", "nothing after ':'"),
        ("h2:window", "'window' is not key=value"),
        ("h2:window=", "'window=' is not key=value"),
        ("h2:windw=4MiB", "unknown h2 setting windw"),
        ("h2:window=4MiB,window=8MiB", "window given twice"),
        ("h2:conn-window=16MiB", "dynamic h2 client grows its connection window"),
        ("h2:window=3GiB", "outside HTTP/2's window range"),
        ("h2:window=4MiB,credit=lazy", "credit policy: 'lazy'"),
        ("h2:window=4MiB,connections=many", "connections: 'many' is not a whole number"),
        ("h2:window=4MiB,connections=0", "connections: 0 is outside"),
        ("h2:window=4MiB,max-frame=1KiB", "max frame size"),
        ("grpcio:conn-window=1MiB", "cannot set the connection window"),
        ("grpcio:bdp_probe=0", "not a grpcio channel argument"),
    ],
)
def test_bad_specs_are_one_line_usage_errors(text: str, match: str) -> None:
    with pytest.raises(UsageError, match=match) as info:
        parse_candidate(text)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("candidate ")


# --- plan files ---------------------------------------------------------------------------


def test_example_plan_file_loads() -> None:
    plan_file = load_plan_file(REPO / "examples" / "compare.toml")
    assert plan_file.baseline is not None and plan_file.baseline.spec == "grpcio"
    names = [c.name for c in plan_file.candidates]
    assert names == [
        "no BDP probe",
        "static 4 MiB",
        "h2 small defaults",
        "h2 raised",
        "h2 raised, half credit",
    ]
    static = plan_file.candidates[1].client
    assert static.channel_options == (
        ("grpc.http2.bdp_probe", 0),
        ("grpc.http2.lookahead_bytes", 4 * MIB),
    )
    assert plan_file.candidates[4].client.credit_policy == "half"
    plan = plan_from_settings(plan_file.settings, plan_file.baseline, plan_file.candidates)
    assert plan.link.rtt_ms == 20 and plan.workload.streams == 4 and plan.rounds == 5


def test_file_candidate_table_spec_reproduces_it() -> None:
    pf = plan_file_from_dict(
        {"candidate": [{"client": "h2", "window": "1MiB", "conn-window": "4MiB"}]}
    )
    cand = pf.candidates[0]
    assert cand.spec == "h2:window=1MiB,conn-window=4MiB"
    assert parse_candidate(cand.spec).client == cand.client


def test_file_sizes_without_a_unit_are_refused() -> None:
    """A TOML integer is no size: `conn-window = 4194304` would read as bytes silently."""
    with pytest.raises(UsageError, match=r"conn-window 4194304 needs a unit, e\.g\. 4MiB"):
        plan_file_from_dict({"candidate": [{"client": "h2", "conn-window": 4194304}]})


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"rttt": "20ms"}, "unknown setting rttt"),
        ({"candidate": {"spec": "h2"}}, "array of tables"),
        ({"candidate": [{"spec": "h2", "client": "h2"}]}, "either spec"),
        ({"candidate": [{"client": "nope"}]}, "candidate 1: client 'nope'"),
        ({"candidate": [{"client": "grpcio", "options": [1]}]}, "options must be a table"),
        (
            {"candidate": [{"client": "grpcio", "options": {"grpc.x": 1.5}}]},
            "must be an integer or a string",
        ),
        ({"candidate": [7]}, "spec string or a table"),
    ],
)
def test_bad_plan_files(data: dict[str, object], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        plan_file_from_dict(data)


def test_plan_file_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_plan_file(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("rtt = ", encoding="utf-8")
    with pytest.raises(UsageError, match="not valid TOML"):
        load_plan_file(bad)


# --- plans --------------------------------------------------------------------------------


def _plan(**settings: Raw | None) -> ComparePlan:
    return plan_from_settings(
        PlanOptions(**settings), parse_candidate("grpcio"), [parse_candidate("h2:window=1MiB")]
    )


def test_settings_build_link_and_workload() -> None:
    plan = _plan(rtt="10ms", delay_down="8ms", streams=3, duration="500ms", rounds=4, seed=9)
    assert plan.link == Link(delay_up_ms=5.0, delay_down_ms=8.0)
    assert (plan.workload.streams, plan.workload.duration_s, plan.rounds, plan.seed) == (
        3,
        0.5,
        4,
        9,
    )
    assert "up 5 + down 8" in plan.setup


def test_none_settings_fall_back_to_defaults() -> None:
    plan = _plan(rtt=None, streams=None)
    assert plan.link.rtt_ms == 20 and plan.workload.streams == 1 and plan.rounds == 5


def test_campaign_runs_the_baseline_as_control() -> None:
    spec = _plan(rounds=3).campaign()
    assert spec.control_key == BASELINE_KEY
    assert [c.key for c in spec.cells] == [BASELINE_KEY, "h2:window=1MiB"]
    schedule = spec.schedule()
    assert sum(r.key == BASELINE_KEY for r in schedule) == 2 * 3  # two copies per round
    assert all(r.cell.trial.link.rtt_ms == 20 for r in schedule)


def test_campaign_name_ignores_rounds_and_seed_but_not_cells() -> None:
    a, b = _plan(rounds=3, seed=1), _plan(rounds=7, seed=5)
    assert a.campaign_name == b.campaign_name
    assert a.campaign_name != _plan(streams=2).campaign_name
    assert ":" not in a.campaign_name


@pytest.mark.parametrize(
    ("settings", "match"),
    [({"workload": "bogus"}, "not one of download, unary, upload"), ({"rounds": 0}, "--rounds: 0")],
)
def test_plan_validation(settings: dict[str, Raw], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        _plan(**settings)


def test_candidates_need_distinct_names_and_not_baseline() -> None:
    base, h2 = parse_candidate("grpcio"), parse_candidate("h2")
    with pytest.raises(UsageError, match="given twice"):
        plan_from_settings(PlanOptions(), base, [h2, h2])
    with pytest.raises(UsageError, match="reserved"):
        plan_from_settings(PlanOptions(), base, [parse_candidate("h2", "baseline")])
    with pytest.raises(UsageError, match="at least one --candidate"):
        plan_from_settings(PlanOptions(), base, [])


def test_identical_candidate_is_allowed_as_its_own_cell() -> None:
    plan = plan_from_settings(PlanOptions(), parse_candidate("grpcio"), [parse_candidate("grpcio")])
    cells = plan.cells()
    assert cells[0].trial.client == cells[1].trial.client and cells[0].key != cells[1].key


# --- presets ------------------------------------------------------------------------------


def test_window_matrix_cells() -> None:
    plans = window_matrix()
    assert [p.workload.streams for p in plans] == [1, 4, 32]
    for plan in plans:
        assert plan.link.rtt_ms == 10 and plan.baseline.name == DEFAULTS
        assert plan.baseline.client.window_bytes == 256 * KIB
        assert plan.baseline.client.conn_window_bytes == 512 * KIB
    names = [[c.name for c in p.candidates] for p in plans]
    assert names[0] == [STREAM_ONLY, CONN_ONLY, BOTH]
    assert names[1][-1] == "defaults x4 conns" and names[2][-1] == "defaults x8 conns"
    both = plans[0].candidates[2].client
    assert (both.window_bytes, both.conn_window_bytes) == (4 * MIB, 16 * MIB)
    assert len({p.campaign_name for p in plans}) == 3


def test_window_matrix_theory_shows_which_window_binds() -> None:
    """window/RTT: the shape the matrix must reproduce, before measuring anything."""
    one, four, many = ({c.key: theory_mib_s(c.trial) for c in p.cells()} for p in window_matrix())
    assert one[BASELINE_KEY] == pytest.approx(25.0)  # 256 KiB / 10 ms
    assert one[BOTH] == pytest.approx(400.0)
    assert four[BASELINE_KEY] == pytest.approx(50.0)  # 512 KiB connection window binds
    assert many[STREAM_ONLY] == many[BASELINE_KEY]  # the connection window still binds
    assert many["defaults x8 conns"] == pytest.approx(8 * many[BASELINE_KEY])


def test_preset_settings_and_errors() -> None:
    plans = preset_plans("windows", rtt="20ms", rounds=2, seed=3, workload=Workload(duration_s=1.0))
    assert all(
        p.link.rtt_ms == 20 and p.rounds == 2 and p.workload.duration_s == 1.0 for p in plans
    )
    with pytest.raises(UsageError, match="not one of windows"):
        preset_plans("speed")


def test_window_ladder() -> None:
    assert window_ladder(64 * KIB, 512 * KIB) == (64 * KIB, 128 * KIB, 256 * KIB, 512 * KIB)
    assert window_ladder(64 * KIB, 100 * KIB) == (64 * KIB, 100 * KIB)
    with pytest.raises(UsageError, match="--min-window"):
        window_ladder(2 * MIB, 1 * MIB)
    with pytest.raises(UsageError, match="at most 16"):
        window_ladder(1, 2**31 - 1)


def test_knee_plans_sweep_one_window_layer_each() -> None:
    one, many = knee_plans(rtt="20ms", streams=8, min_window=64 * KIB, max_window=1 * MIB)
    assert (one.workload.streams, many.workload.streams) == (1, 8)
    assert one.baseline.client.window_bytes == 1 * MIB  # the largest window is the control
    windows = knee_windows(many)
    assert sorted(windows.values()) == [64 * KIB, 128 * KIB, 256 * KIB, 512 * KIB, 1 * MIB]
    for cand in many.candidates:  # stream window = connection window: only the shared one binds
        assert cand.client.window_bytes == cand.client.conn_window_bytes
    assert len(knee_plans(streams=1)) == 1
    with pytest.raises(UsageError, match="at least two windows"):
        knee_plans(min_window=1 * MIB, max_window=1 * MIB)


def test_knee_takes_the_link_and_its_time_is_every_scheduled_run() -> None:
    options = PlanOptions(rtt="20ms", rate_down="100Mbit", jitter="1ms", duration="0.5s")
    (plan,) = knee_from(options, streams=1, min_window=64 * KIB, max_window=256 * KIB)
    assert plan.link.rate_down_bits_s == 100e6 and plan.link.jitter_ms == 1.0
    runs = len(plan.campaign().schedule())
    assert runs == 3 * (3 + 1)  # 3 rounds of 3 windows, the control twice
    assert expected_campaign_s(plan.campaign()) == pytest.approx(runs * (0.5 + RUN_SETUP_S))
