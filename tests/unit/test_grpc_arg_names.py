"""grpcio channel arguments are checked by name against C-core's keys and by range against a
C int, wherever they come from (--option, --server-option, a spec, a plan file) - pure."""

from __future__ import annotations

import re
from pathlib import Path

import grpc
import pytest

from kit.errors import UsageError
from kit.plan.builder import client_from, parse_candidate, server_from
from kit.plan.compare import plan_file_from_dict
from kit.plan.grpc_arg_names import CHANNEL_ARG_NAMES
from kit.plan.options import ClientOptions, ServerOptions


def test_every_key_is_one_the_installed_grpcio_is_built_with() -> None:
    library = next((Path(grpc.__file__).parent / "_cython").glob("cygrpc*.so")).read_bytes()
    missing = sorted(k for k in CHANNEL_ARG_NAMES if k.encode() + b"\0" not in library)
    assert not missing, f"the installed grpcio does not hold {missing}: update the list"


@pytest.mark.parametrize(
    ("key", "match"),
    [
        ("grpc.htp2.bdp_probe", "did you mean grpc.http2.bdp_probe"),
        ("grpc.http2.lookahead_byte", "did you mean grpc.http2.lookahead_bytes"),
        ("grpc.http2.\U0001f600", "is unknown to grpcio"),
        ("zzz.qqq", "is unknown to grpcio"),
    ],
)
def test_a_mistyped_key_is_refused_with_the_closest_one(key: str, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        client_from(ClientOptions(option=(f"{key}=1",)))
    with pytest.raises(UsageError, match=match):
        server_from(ServerOptions(option=(f"{key}=1",)))
    with pytest.raises(UsageError, match=match):
        parse_candidate(f"grpcio:{key}=1")


@pytest.mark.parametrize("value", [2**31, -(2**31) - 1, 99999999999])
def test_an_integer_beyond_a_c_int_is_refused(value: int) -> None:
    for key in ("grpc.max_concurrent_streams", "grpc.http2.lookahead_bytes"):
        with pytest.raises(UsageError, match="outside the range of a C int"):
            client_from(ClientOptions(option=(f"{key}={value}",)))
        with pytest.raises(UsageError, match="outside the range of a C int"):
            server_from(ServerOptions(option=(f"{key}={value}",)))
        with pytest.raises(UsageError, match="outside the range of a C int"):
            plan_file_from_dict({"candidate": [{"client": "grpcio", "options": {key: value}}]})


def test_the_edges_of_a_c_int_and_known_keys_pass() -> None:
    config = client_from(
        ClientOptions(option=("grpc.max_concurrent_streams=2147483647", "grpc.dscp=0"))
    )
    assert config.channel_options == (("grpc.max_concurrent_streams", 2**31 - 1), ("grpc.dscp", 0))


def test_a_toml_plan_refuses_a_mistyped_key() -> None:
    with pytest.raises(UsageError, match=re.escape("did you mean grpc.http2.bdp_probe")):
        plan_file_from_dict(
            {"candidate": [{"client": "grpcio", "options": {"grpc.htp2.bdp_probe": 0}}]}
        )
