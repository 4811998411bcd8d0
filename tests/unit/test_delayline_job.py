"""The delay line's job: built from the kit's checked ``ProxyConfig`` (``kit.plan.jobs``),
read back by the Python line unchanged; which line runs (``kit.plan.programs``); a line's
answer to a link change (``kit.protocol``); the control API's refusals, checked in the kit."""

from __future__ import annotations

import json

import pytest

from kit._proto import worker_pb2 as pb
from kit.delayline.control import changed_link
from kit.errors import UsageError
from kit.plan.jobs import TAP_DECODER, job_link, link_job, parse_job, proxy_config, proxy_job
from kit.plan.processes import ProxyConfig
from kit.plan.programs import proxy_choice
from kit.plan.trial import Link, RateStep
from kit.protocol import Changed, changed_line, config_text, parse_line

LINKS = [
    Link(),
    Link(2.5, 7.25, rate_up_bits_s=1e6, jitter_ms=0.3, seed=2**63 - 1),
    Link(10.0, 10.0, rate_steps=(RateStep(8e6, 200.0), RateStep(0.0, 0.5))),
]


@pytest.mark.parametrize("link", LINKS)
def test_a_config_travels_as_its_job_and_comes_back_unchanged(link: Link) -> None:
    config = ProxyConfig(
        upstream_port=50051, link=link, tap_path="/tmp/tap", counter_path="/tmp/c", read_bytes=4096
    )
    job = parse_job(config_text(config), pb.ProxyJob(), "test")
    assert isinstance(job, pb.ProxyJob)
    assert proxy_config(job) == config


def test_every_time_is_whole_nanoseconds_rounded_once() -> None:
    job = link_job(Link(2.5, 0.0000015, jitter_ms=1.0000004))
    assert (job.delay_up_ns, job.delay_down_ns, job.jitter_ns) == (2_500_000, 2, 1_000_000)
    assert not job.HasField("rate_up_bits_s")  # unlimited: unset, not 0
    assert job_link(link_job(Link(rate_down_bits_s=5e6))).rate_down_bits_s == 5e6


def test_the_tap_decoder_is_named_only_for_a_tapped_line() -> None:
    assert list(proxy_job(ProxyConfig(upstream_port=1, tap_path="/t")).tap_decoder) == list(
        TAP_DECODER
    )
    assert not proxy_job(ProxyConfig(upstream_port=1)).tap_decoder


def test_the_compiled_line_runs_where_built_and_the_python_line_says_why_otherwise() -> None:
    assert proxy_choice("", built=True) == ("compiled", None)
    kind, note = proxy_choice("", built=False)
    assert kind == "python" and note is not None and "not built" in note
    assert proxy_choice("python", built=True) == ("python", None)
    assert proxy_choice("compiled", built=False)[0] == "compiled"  # asked for: its refusal


def test_a_change_is_answered_with_one_protocol_line() -> None:
    assert parse_line(changed_line(3)) == Changed(3)
    assert json.loads(changed_line(3)) == {"changed": 3}
    with pytest.raises(UsageError):
        parse_line('{"changed": "3"}')


def test_the_control_api_refuses_a_rate_the_line_did_not_start_with() -> None:
    started = Link(5.0, 5.0, rate_down_bits_s=1e6)
    assert changed_link(started, started, {"rate_down_bits_s": 2e6}).rate_down_bits_s == 2e6
    with pytest.raises(UsageError, match="without a rate up"):
        changed_link(started, started, {"rate_bits_s": 2e6})
    stepped = Link(rate_steps=(RateStep(1e6, 10.0),))
    with pytest.raises(UsageError, match="rate steps"):
        changed_link(stepped, stepped, {"rate_down_bits_s": 2e6})
    with pytest.raises(UsageError, match="loses nothing"):
        changed_link(started, started, {"loss": 0.1})
