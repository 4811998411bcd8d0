"""The link's plan: rate, jitter and seed from options, validation, theory and BDP."""

from __future__ import annotations

import pytest

from kit.errors import UsageError
from kit.plan.builder import link_from, parse_candidate, trial_from
from kit.plan.compare import plan_file_from_dict, plan_from_settings
from kit.plan.options import ClientOptions, LinkOptions, PlanOptions, ServerOptions, WorkloadOptions
from kit.plan.processes import ProxyConfig
from kit.plan.trial import ClientConfig, Link, Trial, Workload, bdp_bytes, link_text, theory_mib_s
from kit.plan.units import KIB, MIB


def test_rate_sets_both_directions_and_the_direction_flags_override() -> None:
    link = link_from(LinkOptions(rtt="20ms", rate="100Mbit", rate_up="10Mbit"))
    assert (link.rate_up_bits_s, link.rate_down_bits_s) == (10e6, 100e6)
    assert link.limited and link.jitter_ms == 0.0 and link.seed == 1
    plain = link_from(LinkOptions(rtt="20ms"))
    assert plain == Link.from_rtt(20) and not plain.limited  # today's unlimited link


def test_jitter_and_its_seed() -> None:
    link = link_from(LinkOptions(jitter="2ms", jitter_seed=7))
    assert link.jitter_ms == 2.0 and link.seed == 7
    assert link_text(link) == ", jitter +-2 ms (seed 7)"
    assert ProxyConfig(upstream_port=1, link=link).link.jitter_ms == 2.0


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        (LinkOptions(rate="0Mbit"), "--rate"),
        (LinkOptions(rate="-1Gbit"), "--rate: '-1Gbit' is negative"),
        (LinkOptions(rate_down="100"), "--rate-down: '100' needs a unit"),
        (LinkOptions(jitter="-1ms"), "--jitter: '-1ms' is negative"),
        (LinkOptions(jitter_seed="-2"), "--seed: -2 is negative"),
    ],
)
def test_bad_link_options_name_the_option(options: LinkOptions, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        link_from(options)


def _run(link: LinkOptions, workload: WorkloadOptions | None = None) -> Trial:
    return trial_from(link, ClientOptions(), ServerOptions(), workload or WorkloadOptions())


def test_a_rate_too_low_for_one_frame_within_the_timeout_is_refused() -> None:
    with pytest.raises(UsageError, match=r"^--rate: at 2 kbit/s one 16 KiB frame takes 66 s"):
        _run(LinkOptions(rate="2kbit"))
    _run(LinkOptions(rate="2kbit"), WorkloadOptions(timeout="70s"))  # a longer timeout will do
    with pytest.raises(UsageError, match=r"^--rate-up: .* 60 s timeout .*or --timeout"):
        _run(LinkOptions(rate_up="2kbit"))
    # The trial refuses it on its own, naming its fields (it cannot know the options).
    slow_up = Link(10, 10, rate_up_bits_s=2000.0)
    with pytest.raises(UsageError, match=r"^rate_up_bits_s: at 2 kbit/s"):
        Trial(link=slow_up)
    Trial(link=slow_up, workload=Workload(timeout_s=70))


def test_a_plan_file_names_the_frame_time_option_as_it_does() -> None:
    plan = plan_file_from_dict({"rate-up": "2kbit", "candidate": ["h2"]})
    with pytest.raises(UsageError, match=r"^rate-up: at 2 kbit/s .*or timeout\)$"):
        plan_from_settings(plan.settings, parse_candidate("grpcio"), plan.candidates)


def test_theory_is_the_smaller_of_rate_and_window_over_rtt() -> None:
    link = Link(10, 10, rate_up_bits_s=100e6, rate_down_bits_s=100e6)
    small = ClientConfig(kind="h2", window_mode="static", window_bytes=64 * KIB)
    large = ClientConfig(kind="h2", window_mode="static", window_bytes=16 * MIB)
    assert theory_mib_s(Trial(link=link, client=small)) == pytest.approx(64 / 1024 / 0.02)
    assert theory_mib_s(Trial(link=link, client=large)) == pytest.approx(100e6 / 8 / MIB)
    assert theory_mib_s(Trial(link=link)) == pytest.approx(100e6 / 8 / MIB)  # dynamic: the rate
    assert theory_mib_s(Trial(link=Link.from_rtt(20))) is None  # as before: dynamic, unlimited
    assert bdp_bytes(Trial(link=link)) == 250_000
    assert bdp_bytes(Trial(link=Link.from_rtt(20))) is None


def test_proxy_config_holds_a_checked_link() -> None:
    with pytest.raises(UsageError, match="rate_down_bits_s"):
        ProxyConfig(upstream_port=1, link=Link(rate_down_bits_s=0.0))
    with pytest.raises(UsageError, match="jitter_ms"):
        ProxyConfig(upstream_port=1, link=Link(jitter_ms=-1.0))
    assert ProxyConfig(upstream_port=1).link == Link()  # no delay, no rate: loopback's


def test_plan_files_take_the_link_keys_and_old_campaign_names_stay() -> None:
    plan_file = plan_file_from_dict({"rate": "50Mbit", "jitter": "1ms", "jitter-seed": 3})
    plan = plan_from_settings(
        plan_file.settings, parse_candidate("grpcio"), [parse_candidate("h2")]
    )
    assert plan.link.rate_down_bits_s == 50e6 and plan.link.seed == 3
    unlimited = plan_from_settings(
        PlanOptions(), parse_candidate("grpcio"), [parse_candidate("h2")]
    )
    limited = plan_from_settings(
        PlanOptions(rate="1Gbit"), parse_candidate("grpcio"), [parse_candidate("h2")]
    )
    assert unlimited.campaign_name != limited.campaign_name
    assert "rate 1 Gbit/s" in limited.setup
