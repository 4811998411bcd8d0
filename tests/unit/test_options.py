"""Raw options records (kit.plan.options): spellings, the one items reader, and errors that
name each option as the user wrote it where it came from - pure, no sockets."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kit.cli.compare import FILE_ONLY
from kit.errors import FieldError, UsageError, named
from kit.plan.builder import (
    client_from,
    link_from,
    parse_candidate,
    server_from,
    trial_from,
    workload_from,
)
from kit.plan.compare import plan_file_from_dict, plan_from_settings
from kit.plan.options import (
    ClientOptions,
    LinkOptions,
    Options,
    PlanOptions,
    ServerOptions,
    WorkloadOptions,
    item_keys,
    options_from_items,
    overlay,
    spellings,
)
from kit.plan.presets import knee_from, presets_from
from kit.plan.trial import Workload
from kit.plan.units import MIB

RECORDS: tuple[type[Options], ...] = (
    LinkOptions,
    WorkloadOptions,
    ClientOptions,
    ServerOptions,
    PlanOptions,
)
GRPCIO, H2 = parse_candidate("grpcio"), parse_candidate("h2")
REPO = Path(__file__).resolve().parents[2]


def _plan(settings: PlanOptions) -> None:
    plan_from_settings(settings, GRPCIO, [H2])


def _file(**settings: object) -> PlanOptions:
    """The settings of a plan file giving these fields (by their keys)."""
    keys = {f: s.key for f, s in spellings(PlanOptions).items()}
    return plan_file_from_dict({keys[f]: v for f, v in settings.items()}).settings


# --- the records --------------------------------------------------------------------------


@pytest.mark.parametrize("record", RECORDS)
def test_every_option_is_spelled_once_per_place(record: type[Options]) -> None:
    fields = [f.name for f in dataclasses.fields(record) if f.name != "source"]
    assert list(spellings(record)) == fields  # every field is an option
    keys = [k for s in spellings(record).values() if s.item for k in (s.key, *s.aliases)]
    assert len(keys) == len(set(keys))
    assert all(s.flag.startswith("--") for s in spellings(record).values())
    assert all(record().name(f) == s.flag for f, s in spellings(record).items())
    sets = [s.sets for s in spellings(record).values()]
    assert len(sets) == len(set(sets))  # one option per placeholder of the configs' errors


def test_every_option_the_builder_names_is_a_field() -> None:
    """``o.name("rate_up")`` takes a field's name as a string: a typo must fail here."""
    fields = {f for record in RECORDS for f in spellings(record)}
    for path in [*(REPO / "kit" / "plan").glob("*.py"), *(REPO / "kit" / "cli").glob("*.py")]:
        used = set(re.findall(r"""\.name\(["']([a-z_]+)["']""", path.read_text(encoding="utf-8")))
        assert used <= fields, f"{path.name}: {sorted(used - fields)}"


def test_spellings_that_differ_between_the_command_line_and_a_file() -> None:
    cli, spec = ClientOptions(), options_from_items(ClientOptions, [])
    assert (cli.name("max_frame"), spec.name("max_frame")) == ("--max-frame-size", "max-frame")
    link, workload = LinkOptions(), WorkloadOptions()
    assert (link.name("jitter_seed"), _file().name("jitter_seed")) == ("--seed", "jitter-seed")
    assert (workload.name("transfer"), _file().name("transfer")) == ("--bytes", "bytes")
    assert (PlanOptions().name("seed"), _file().name("seed")) == ("--seed", "seed")
    server = options_from_items(ServerOptions, [], prefix="server-")
    assert (ServerOptions().name("window"), server.name("window")) == (
        "--server-window",
        "server-window",
    )
    assert options_from_items(ServerOptions, []).name("mode") == "mode"  # a server: spec


def test_a_plan_file_takes_the_settings_of_the_link_the_workload_and_the_rounds() -> None:
    assert item_keys(PlanOptions) == (
        *item_keys(LinkOptions),
        *item_keys(WorkloadOptions),
        "rounds",
        "seed",
    )
    assert "read-rate" not in item_keys(PlanOptions)  # slow readers are kit run's only


# --- options_from_items -------------------------------------------------------------------


def test_items_set_their_fields_and_dotted_keys_are_channel_arguments() -> None:
    o = options_from_items(
        ClientOptions, [("window", "4MiB"), ("conn_window", 1 << 24), ("grpc.x", "y")]
    )
    assert (o.window, o.conn_window, o.channel_args) == ("4MiB", 1 << 24, (("grpc.x", "y"),))
    assert o.source.spec and o.name("conn_window") == "conn-window"
    server = options_from_items(ServerOptions, [("option", "a.b=1"), ("option", "c.d=2")])
    assert server.option == ("a.b=1", "c.d=2")  # a repeatable key


@given(
    st.dictionaries(
        st.sampled_from(item_keys(PlanOptions)),
        st.text(max_size=8) | st.integers() | st.booleans(),
        max_size=6,
    )
)
def test_any_known_items_round_trip(items: dict[str, object]) -> None:
    o = options_from_items(PlanOptions, items.items())
    by_key = {s.key: f for f, s in spellings(PlanOptions).items()}
    assert {k: getattr(o, by_key[k]) for k in items} == items
    assert all(o.name(by_key[k]) == k for k in items)


@given(st.from_regex(r"[a-z][a-z_\-]{0,12}", fullmatch=True))
def test_an_unknown_key_is_one_line_naming_it_as_written(key: str) -> None:
    for record in RECORDS:
        if key in {k for s in spellings(record).values() if s.item for k in (s.key, *s.aliases)}:
            continue
        with pytest.raises(UsageError) as info:
            options_from_items(record, [(key, "1")], "unknown thing {keys} (use {known})")
        assert str(info.value) == (f"unknown thing {key} (use {', '.join(item_keys(record))})")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("h2:win_dow=1MiB", "unknown h2 setting win_dow (use window, conn-window, credit,"),
        ("h2:server_window=1MiB", "unknown h2 setting server_window"),
        ("h2:server-windw=1MiB", "unknown server setting server-windw (use server-window,"),
        ("server:windw=1", "unknown server setting windw (use window, mode, option, stack, or a"),
        ("grpcio:bdp_probe=0", "bdp_probe: not a grpcio channel argument or kit key"),
        ("h2:window=1MiB,window=2MiB", "window given twice"),
        ("h2:conn-window=1MiB,conn_window=2MiB", "conn-window given twice"),  # an alias too
        ("grpcio:grpc.x=1,grpc.x=2", "grpc.x given twice"),
        ("h2:server-mode=static,server-mode=dynamic", "server-mode given twice"),
    ],
)
def test_spec_keys_are_refused_as_written(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=r"^candidate ") as info:
        parse_candidate(text)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_grpcio_is_told_its_own_kit_keys() -> None:
    with pytest.raises(UsageError) as info:
        parse_candidate("grpcio:bdp_probe=0")
    assert str(info.value).endswith("kit keys: window, connections, mode, window-policy)")


def test_a_plan_file_names_its_unknown_settings_and_refuses_tables() -> None:
    with pytest.raises(UsageError, match=r"^plan: unknown setting rtt_ms, x \(use rtt, delay-up"):
        plan_file_from_dict({"rtt_ms": 1, "x": 2})
    with pytest.raises(UsageError, match=r"^plan: rtt: \[1\] is not a string or a number"):
        plan_file_from_dict({"rtt": [1]})


# --- one check, named where the option came from ------------------------------------------


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("rtt", "30s"),
        ("delay_up", "20s"),
        ("rate_up", "0Mbit"),
        ("rate_down", "-1Mbit"),
        ("jitter", "20s"),
        ("jitter_seed", -2),
        ("streams", 0),
        ("message_size", "100MiB"),
        ("workload", "bogus"),
        ("duration", "0s"),
        ("transfer", "1KiB"),
        ("calls", 0),
        ("timeout", "0.5s"),
        ("rounds", 0),
        ("seed", "x"),
    ],
)
def test_a_bad_setting_is_named_as_on_the_command_line_or_in_the_file(
    field: str, bad: object
) -> None:
    cli, file = PlanOptions(**{field: bad}), _file(**{field: bad})  # type: ignore[arg-type]
    for settings, name in ((cli, cli.name(field)), (file, spellings(PlanOptions)[field].key)):
        with pytest.raises(UsageError) as info:
            _plan(settings)
        assert str(info.value).startswith(f"{name}: "), str(info.value)


@given(st.sampled_from([f for f, s in spellings(PlanOptions).items() if s.item]))
def test_junk_in_any_setting_names_that_setting(field: str) -> None:
    for settings, name in (
        (PlanOptions(**{field: "bogus!"}), spellings(PlanOptions)[field].flag),  # type: ignore[arg-type]
        (_file(**{field: "bogus!"}), spellings(PlanOptions)[field].key),
    ):
        with pytest.raises(UsageError) as info:
            _plan(settings)
        assert str(info.value).startswith(f"{name}: ")


def test_the_same_bad_rate_from_the_command_line_a_plan_file_and_the_proxy() -> None:
    with pytest.raises(UsageError, match=r"^--rate-up: '0Mbit' is outside 1 kbit/s \.\. 1 Tbit/s$"):
        link_from(LinkOptions(rate_up="0Mbit"))
    with pytest.raises(UsageError, match=r"^rate-up: '0Mbit' is outside 1 kbit/s \.\. 1 Tbit/s$"):
        _plan(_file(rate_up="0Mbit"))
    with pytest.raises(UsageError, match=r"^--read-rate: '-1Mbit' is negative; a rate is above 0"):
        workload_from(WorkloadOptions(slow_streams=1, read_rate="-1Mbit"))


def test_a_value_derived_from_another_option_is_named_by_it() -> None:
    slow = pytest.raises(UsageError, match=r"^--rate: at 2 kbit/s one 16 KiB frame takes 66 s")
    with slow:  # both directions came from --rate
        trial_from(LinkOptions(rate="2kbit"), ClientOptions(), ServerOptions(), WorkloadOptions())
    with pytest.raises(UsageError, match=r"^--rtt: 30000\.0 ms is outside 0\.\.20000 ms$"):
        link_from(LinkOptions(rtt="30s"))
    with pytest.raises(UsageError, match=r"^rate: at 2 kbit/s .*\(raise the rate or timeout\)$"):
        _plan(_file(rate="2kbit"))


@pytest.mark.parametrize(
    ("options", "spec", "cli_name", "spec_name"),
    [
        (ClientOptions(client="h2", window="3GiB"), "h2:window=3GiB", "--window", "window"),
        (
            ClientOptions(client="h2", connections=0),
            "h2:connections=0",
            "--connections",
            "connections",
        ),
        (
            ClientOptions(client="h2", conn_credit="x"),
            "h2:conn-credit=x",
            "--conn-credit",
            "conn-credit",
        ),
        (ClientOptions(client="h2", pool="1MB"), "h2:pool=1MB", "--pool", "pool"),
        (ClientOptions(client="h2", mode="static"), "h2:mode=static", "--window", "window"),
        (ClientOptions(client="grpcio", credit="half"), "grpcio:credit=half", "--credit", "credit"),
        (ClientOptions(client="h2", option=("grpc.x=1",)), "h2:grpc.x=1", "--option", "option"),
        (ClientOptions(client="curl"), None, "--client", None),
    ],
)
def test_client_errors_name_the_option_where_it_was_given(
    options: ClientOptions, spec: str | None, cli_name: str, spec_name: str | None
) -> None:
    with pytest.raises(UsageError) as info:
        client_from(options)
    assert str(info.value).startswith(f"{cli_name}: "), str(info.value)
    if spec is not None:
        with pytest.raises(UsageError) as info:
            parse_candidate(spec)
        assert str(info.value).startswith(f"candidate {spec!r}: {spec_name}: "), str(info.value)


@pytest.mark.parametrize(
    ("options", "spec", "name"),
    [
        (ServerOptions(window="3GiB"), "server:window=3GiB", "window"),
        (ServerOptions(window="3GiB"), "h2:server-window=3GiB", "server-window"),
        (ServerOptions(mode="static"), "h2:server-mode=static", "server-mode"),
        (ServerOptions(option=("nope",)), "server:option=nope", "option"),
    ],
)
def test_server_errors_name_the_option_in_each_spec(
    options: ServerOptions, spec: str, name: str
) -> None:
    with pytest.raises(UsageError, match=r"^--server-"):
        server_from(options)
    with pytest.raises(UsageError, match=f"^candidate '{spec}': {name}: "):
        parse_candidate(spec)


# --- over a plan file ---------------------------------------------------------------------


def test_flags_override_a_plan_file_and_each_is_named_where_it_was_given() -> None:
    file = _file(duration="1s", streams=2, rtt="10ms")
    merged = overlay(file, PlanOptions(transfer="1MiB", streams=4))
    assert (merged.duration, merged.transfer, merged.streams, merged.rtt) == (
        "1s",
        "1MiB",
        4,
        "10ms",
    )
    assert [merged.name(f) for f in ("duration", "transfer", "streams", "rtt")] == [
        "duration",
        "--bytes",
        "--streams",
        "rtt",
    ]
    with pytest.raises(UsageError, match=r"^--bytes: a run is timed \(duration\) or a fixed "):
        _plan(merged)
    assert overlay(PlanOptions(), PlanOptions(rtt="5ms")) == PlanOptions(rtt="5ms")


def test_presets_and_the_knee_name_their_rounds_as_given() -> None:
    with pytest.raises(UsageError, match=r"^--rounds: 0 is outside 1\.\.1000$"):
        presets_from("windows", PlanOptions(rounds=0))
    with pytest.raises(UsageError, match=r"^--message-size: 0 is outside 1\.\.64 MiB$"):
        knee_from(PlanOptions(message_size=0), streams=8, min_window=MIB, max_window=4 * MIB)
    plans = presets_from("windows", PlanOptions(rtt="20ms", rounds=2, duration="1s"))
    assert all(p.link.rtt_ms == 20 and p.rounds == 2 for p in plans)


def test_a_plan_file_rtt_of_zero_is_zero() -> None:
    assert link_from(_file(rtt=0)).rtt_ms == 0.0  # not "not given": the default 20 ms


# --- FieldError -----------------------------------------------------------------------------


def test_a_config_names_its_fields_and_the_builder_respells_them() -> None:
    with pytest.raises(FieldError, match=r"^streams: 0 is outside 1\.\.1024$"):
        Workload(streams=0)
    with pytest.raises(UsageError, match=r"^-s: 0 is outside 1\.\.1024$"), named({"streams": "-s"}):
        Workload(streams=0)
    error = FieldError("{a}: {0!r} and {b}", ["{b}"], {"b": "B"})
    assert str(error) == "a: '{b}' and B"  # a value is never read as a template


def test_kit_compare_names_the_settings_it_has_no_flag_for_as_a_plan_file_does() -> None:
    assert FILE_ONLY.spec_fields <= set(spellings(PlanOptions))
    settings = PlanOptions(rate="2kbit", source=FILE_ONLY)  # as `kit compare --rate 2kbit`
    with pytest.raises(UsageError, match=r"^--rate: .*\(raise the rate or timeout\)$"):
        _plan(settings)
