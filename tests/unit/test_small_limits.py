"""Smaller limits: sub-nanosecond durations, transfers under one message, records paths
that do not exist, integer channel arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.errors import RecordsError, UsageError
from kit.plan.grpc_args import parse_option, takes_integer
from kit.plan.trial import Workload
from kit.plan.units import parse_duration_ms, split_host_port
from kit.results.store import read_records


@pytest.mark.parametrize("text", ["1e-9ms", "0.5ns", "1e-7us"])
def test_sub_nanosecond_durations_are_refused(text: str) -> None:
    with pytest.raises(UsageError, match="below one nanosecond"):
        parse_duration_ms(text, option="--rtt")


def test_zero_and_one_nanosecond_are_fine() -> None:
    assert parse_duration_ms("0") == 0.0
    assert parse_duration_ms("1ns") == pytest.approx(1e-6)


def test_a_transfer_smaller_than_one_message_is_refused() -> None:
    with pytest.raises(UsageError, match="less than one message"):
        Workload(bytes_per_stream=1)
    assert Workload(bytes_per_stream=256 * 1024).messages_per_stream() == 1


def test_a_missing_records_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(RecordsError) as missing:
        read_records(tmp_path / "nope.jsonl")
    assert missing.value.exit_code == UsageError.exit_code == 2
    with pytest.raises(RecordsError) as directory:
        read_records(tmp_path)
    assert directory.value.exit_code == 2


def test_integer_channel_arguments_are_checked() -> None:
    assert parse_option("grpc.http2.bdp_probe=0") == ("grpc.http2.bdp_probe", 0)
    assert parse_option("grpc.primary_user_agent=kit/1") == ("grpc.primary_user_agent", "kit/1")
    for key in (
        "grpc.http2.bdp_probe",
        "grpc.keepalive_time_ms",
        "grpc.max_receive_message_length",
    ):
        assert takes_integer(key)
        with pytest.raises(UsageError, match="takes an integer"):
            parse_option(f"{key}=notanint")


def test_a_listen_address_without_a_host_says_so() -> None:
    with pytest.raises(UsageError, match=r"has no host: use 127\.0\.0\.1:0"):
        split_host_port(":0", "--listen")


@pytest.mark.parametrize("text", ["=1+2:80", "@SUM(A1):80", "a b:80", "-x:80", "a..b:80"])
def test_a_host_that_is_neither_an_address_nor_a_name_is_refused(text: str) -> None:
    with pytest.raises(UsageError, match="neither an IP address nor a host name"):
        split_host_port(text, "--target")


@pytest.mark.parametrize(
    ("text", "host"),
    [("127.0.0.1:1", "127.0.0.1"), ("[::1]:1", "::1"), ("my-host.example:1", "my-host.example")],
)
def test_addresses_and_names_are_hosts(text: str, host: str) -> None:
    assert split_host_port(text, "--target") == (host, 1)
