"""Receive-window policies of the h2 client, one small pure module each.

``base`` is the interface (what a policy is told, what it answers); ``create`` builds one
by its ``--window-policy`` name. grpc-go's is ``dynamic`` in plans and records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kit.clients.h2.policies import dotnet, grpc_java, hyper, linux, quic_go, quiche
from kit.clients.h2.policies.base import NOTHING, Answer, WindowPolicy
from kit.clients.h2.policies.grpc_go import GrpcGoPolicy
from kit.clients.h2.policies.pool import PoolPolicy
from kit.clients.h2.policies.static import StaticPolicy
from kit.errors import UsageError
from kit.plan.trial import ConnCredit, CreditPolicy

__all__ = ["NOTHING", "Answer", "PolicySettings", "WindowPolicy", "create", "initial_windows"]


@dataclass(frozen=True)
class PolicySettings:
    """What a policy is built from (``kit.clients.h2.connection.ConnOptions`` says it)."""

    stream_window_bytes: int
    conn_window_bytes: int
    credit_policy: CreditPolicy = "immediate"
    conn_credit: ConnCredit = "receipt"
    pool_bytes: int | None = None


def _static(s: PolicySettings) -> WindowPolicy:
    return StaticPolicy(s.stream_window_bytes, s.conn_window_bytes, s.credit_policy, s.conn_credit)


def _grpc_go(s: PolicySettings) -> WindowPolicy:
    return GrpcGoPolicy(s.stream_window_bytes, s.conn_window_bytes, s.credit_policy, s.conn_credit)


def _pool(s: PolicySettings) -> WindowPolicy:
    return PoolPolicy(s.pool_bytes or 0, s.conn_window_bytes, s.credit_policy, s.conn_credit)


def _grpc_java(s: PolicySettings) -> WindowPolicy:
    return grpc_java.GrpcJavaPolicy(s.stream_window_bytes, s.conn_window_bytes)


def _hyper(s: PolicySettings) -> WindowPolicy:
    return hyper.HyperPolicy(s.stream_window_bytes, s.conn_window_bytes)


def _dotnet(s: PolicySettings) -> WindowPolicy:
    return dotnet.DotnetPolicy(s.stream_window_bytes, s.conn_window_bytes)


def _quic_go(s: PolicySettings) -> WindowPolicy:
    return quic_go.QuicGoPolicy(s.stream_window_bytes, s.conn_window_bytes)


def _quiche(s: PolicySettings) -> WindowPolicy:
    return quiche.QuichePolicy(s.stream_window_bytes, s.conn_window_bytes)


def _linux(s: PolicySettings) -> WindowPolicy:
    return linux.LinuxPolicy(s.stream_window_bytes, s.conn_window_bytes)


BUILDERS: dict[str, Callable[[PolicySettings], WindowPolicy]] = {
    "static": _static,
    "grpc-go": _grpc_go,
    "pool": _pool,
    "grpc-java": _grpc_java,
    "hyper": _hyper,
    "dotnet": _dotnet,
    "quic-go": _quic_go,
    "quiche": _quiche,
    "linux": _linux,
}


# A model's windows before it grows them: (stream, connection), from its source.
INITIAL_WINDOWS: dict[str, tuple[int, int]] = {
    "grpc-java": (grpc_java.INITIAL_WINDOW_BYTES, grpc_java.INITIAL_WINDOW_BYTES),
    "hyper": (hyper.SPEC_WINDOW_BYTES, hyper.SPEC_WINDOW_BYTES),
    "dotnet": (dotnet.INITIAL_STREAM_WINDOW_BYTES, dotnet.CONNECTION_WINDOW_BYTES),
    "quic-go": (quic_go.INITIAL_STREAM_WINDOW_BYTES, quic_go.INITIAL_CONN_WINDOW_BYTES),
    "quiche": (quiche.DEFAULT_WINDOW_BYTES, quiche.HTTP2_MIN_CONN_WINDOW),
    "linux": (linux.INITIAL_WINDOW_BYTES, linux.INITIAL_WINDOW_BYTES),
}


def initial_windows(name: str) -> tuple[int, int]:
    """The stream and connection windows the model called ``name`` starts with."""
    if name not in INITIAL_WINDOWS:
        raise UsageError(f"window policy: {name!r} is not one of the h2 client's models yet")
    return INITIAL_WINDOWS[name]


def create(name: str, settings: PolicySettings) -> WindowPolicy:
    """The policy called ``name``, built from ``settings``."""
    builder = BUILDERS.get(name)
    if builder is None:
        raise UsageError(
            f"window policy: {name!r} is not one of the h2 client's ({', '.join(BUILDERS)})"
        )
    return builder(settings)
