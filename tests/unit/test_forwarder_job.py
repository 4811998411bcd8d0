"""The packet link's forwarder job and which forwarder runs: the compiled one where built,
the Python one otherwise (said in one line) or when KIT_DELAYLINE asks for it."""

from __future__ import annotations

from kit._proto import worker_pb2 as pb
from kit.delayline.schedule import link_bottleneck
from kit.plan.jobs import forwarder_config, forwarder_job, parse_job
from kit.plan.packet import ForwarderConfig, direction_rate
from kit.plan.programs import forwarder_choice
from kit.plan.trial import Link, RateStep
from kit.protocol import config_text


def test_the_compiled_forwarder_runs_where_built_and_the_python_one_is_said() -> None:
    assert forwarder_choice("", built=True) == ("compiled", None)
    assert forwarder_choice("python", built=True) == ("python", None)
    kind, note = forwarder_choice("", built=False)
    assert kind == "python" and note is not None and "Python forwarder" in note
    assert len(note.splitlines()) == 1


def test_the_job_round_trips_to_the_python_forwarders_config() -> None:
    link = Link(
        7.5, 2.5, 50e6, None, 0.25, seed=9, kind="packet", loss=0.02, loss_burst_len=3.0,
        mtu=9000, congestion="reno", rate_steps=(RateStep(10e6, 100.0), RateStep(0.0, 50.0)),
    )  # fmt: skip
    job = parse_job(config_text(ForwarderConfig(link=link)), pb.ForwarderJob(), "test")
    config, queues = forwarder_config(job)
    assert config == ForwarderConfig(link=link)
    assert queues == (job.queue_up_bytes, job.queue_down_bytes)
    assert not job.tap_decoder


def test_a_set_queue_is_each_directions_and_the_tap_brings_its_decoder() -> None:
    link = Link(5.0, 5.0, 1e9, 1e8, kind="packet", queue_bytes=300_000)
    job = forwarder_job(ForwarderConfig(link=link, tap_path="/tmp/tap.jsonl"))
    assert (job.queue_up_bytes, job.queue_down_bytes) == (300_000, 300_000)
    assert job.tap_path == "/tmp/tap.jsonl" and job.tap_decoder[-2:] == [
        "-m",
        "kit.capture.decoder",
    ]


def test_each_directions_rate_is_the_schedules() -> None:
    """The queue of one BDP uses the rate the forwarder's bottleneck has (rate steps: their
    mean), computed in the plan as the schedule computes it."""
    steps = (RateStep(12.5e6, 33.3), RateStep(0.0, 7.1), RateStep(97e6, 0.9))
    links = [
        Link(5.0, 5.0, 1e9, 3e8, kind="packet"),
        Link(25.0, 25.0, None, None, kind="packet", rate_steps=steps),
    ]
    for link in links:
        for direction in ("up", "down"):
            bottleneck = link_bottleneck(link, direction)
            want = None if bottleneck is None else bottleneck.rate_bits_s
            assert direction_rate(link, direction) == want
