"""What ``H2GrpcConnection.receive`` reports: small, frozen, past-tense events.

Only things a caller may act on become events; DATA frames do not (they are counted into
their ``Call``, so the hot path allocates nothing per frame). Server failures (a bad
grpc-status, a reset, a GOAWAY with calls open) are raised as ``MeasurementError`` instead,
as h2 raises ``ProtocolError``: they end the measurement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PingKind = Literal["probe", "bdp"]


@dataclass(frozen=True, slots=True)
class SettingsAcknowledged:
    """The server applied our SETTINGS: from now on it sends within our windows."""


@dataclass(frozen=True, slots=True)
class CallEnded:
    """A call's trailers arrived with an acceptable grpc-status (OK, or CANCELLED after
    our own cancel)."""

    stream_id: int
    path: str
    status: int
    ended_ns: int


@dataclass(frozen=True, slots=True)
class RttMeasured:
    """One of our PINGs came back (an RTT probe, or a BDP PING); the sample was kept."""

    rtt_ns: int
    kind: PingKind


@dataclass(frozen=True, slots=True)
class WindowsGrew:
    """The BDP estimate rose: the stream and connection windows were raised to
    ``window_bytes`` (the SETTINGS and WINDOW_UPDATE are queued in ``data_to_send``)."""

    window_bytes: int
    at_ns: int


@dataclass(frozen=True, slots=True)
class ServerWentAway:
    """A graceful GOAWAY (no error, no call of ours left open): the server is closing."""

    additional_data: bytes


Event = SettingsAcknowledged | CallEnded | RttMeasured | WindowsGrew | ServerWentAway
