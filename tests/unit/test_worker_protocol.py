"""The client worker's side of the process protocol, without processes: its lines, their
parsing, and the loop that runs one trial per line (``kit.protocol``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kit import protocol
from kit._proto import worker_pb2 as pb
from kit.errors import MeasurementError, UsageError
from kit.plan.processes import ClientProcess
from kit.protocol import (
    Ready,
    Result,
    config_line,
    parse_line,
    ready_line,
    result_line,
    worker_main,
)
from kit.results.client import ClientResult


def test_a_ready_line_says_worker_only_for_a_worker() -> None:
    plain = json.loads(ready_line(Ready(pid=7, stack="h2", version="4")))
    assert "worker" not in plain  # the line every process printed before workers
    worker = ready_line(Ready(pid=7, stack="h2", version="4", worker=True))
    assert json.loads(worker)["worker"] is True
    assert parse_line(worker) == Ready(pid=7, stack="h2", version="4", worker=True)
    assert parse_line(json.dumps(plain)) == Ready(pid=7, stack="h2", version="4")


def test_a_result_line_carries_its_trial_number_when_it_has_one() -> None:
    assert json.loads(result_line(ClientResult(client="h2"))).keys() == {"result"}
    line = result_line(ClientResult(client="h2"), client_trial=3)
    parsed = parse_line(line)
    assert isinstance(parsed, Result) and parsed.client_trial == 3
    assert parse_line('{"result": {}}') == Result({}, 0)


@pytest.mark.parametrize("trial", ["-1", '"2"', "1.5", "null"])
def test_a_result_line_with_a_bad_trial_number_is_no_protocol_line(trial: str) -> None:
    with pytest.raises(UsageError, match="client_trial"):
        parse_line(f'{{"result": {{}}, "client_trial": {trial}}}')


def test_a_result_line_with_another_key_is_no_protocol_line() -> None:
    with pytest.raises(UsageError, match="not a protocol line"):
        parse_line('{"result": {}, "trial": 1}')


def _run_worker(
    lines: list[str | bytes], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, list[dict[str, Any]], list[int]]:
    monkeypatch.setattr(protocol, "interrupt_on_signals", lambda: None)  # pytest keeps its own
    ran: list[int] = []

    def run(job: pb.ClientJob) -> ClientResult:
        if job.target_port == 9:
            raise MeasurementError("h2 client: connection to 127.0.0.1:9 refused")
        ran.append(job.target_port)
        return ClientResult(client="h2", bytes=job.target_port)

    raw = [line.encode() if isinstance(line, str) else line for line in lines]
    code = worker_main(pb.ClientJob, run, "h2", "4.4.1", raw, "h2 client")
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return code, out, ran


def test_a_worker_answers_each_line_with_its_numbered_result_and_ends_at_eof(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [config_line(ClientProcess(target_port=p)) + "\n" for p in (101, 102)]
    code, out, ran = _run_worker([lines[0], "\n", lines[1]], capsys, monkeypatch)
    assert code == 0 and ran == [101, 102]  # a blank line is no trial
    assert out[0]["ready"] is True and out[0]["worker"] is True and out[0]["port"] == 0
    trials = [(o["client_trial"], int(o["result"]["bytes"])) for o in out[1:]]
    assert trials == [(1, 101), (2, 102)]


@pytest.mark.parametrize(
    ("bad", "code", "says"),
    [
        ("{not json\n", 2, "h2 client: worker line: bad job"),
        ('{"target_port": 1, "nonsense": 1}\n', 2, "nonsense"),
        (b'{"target_host": "\xff", "target_port": 1}\n', 2, "h2 client: worker line: not UTF-8"),
        (config_line(ClientProcess(target_port=9)) + "\n", 4, "refused"),
    ],
)
def test_a_worker_ends_at_its_first_error_with_one_error_line(
    bad: str | bytes,
    code: int,
    says: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = config_line(ClientProcess(target_port=101)) + "\n"
    exit_code, out, ran = _run_worker([good, bad, good], capsys, monkeypatch)
    assert exit_code == code and ran == [101]  # the line after the error is not run
    assert out[1]["client_trial"] == 1
    assert out[2].keys() == {"error", "exit_code"} and out[2]["exit_code"] == code
    assert says in out[2]["error"] and len(out) == 3
