"""What each process is started with: frozen, validated, sent as JSON.

``kit.topology`` starts every process (client, server, delay line) with ``--config
'<json>'``, the codec's form (``kit.results.codec``) of one of these records: the process
protocol of ``kit.protocol`` (``docs/process-protocol.md``). ``kit serve`` and
``kit proxy`` build the same configs from their flags and run them in the foreground.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from kit.plan.trial import MAX_STREAMS, Link, ServerConfig, Trial, is_int, require
from kit.plan.units import MIB

LOOPBACK = "127.0.0.1"
DEFAULT_READ_BYTES = MIB
DEFAULT_BUFFER_CAP_BYTES = 64 * MIB
# One thread per concurrent call: every stream a workload may open, plus warm-up pings and
# spares (the pool starts threads only as calls arrive).
DEFAULT_SERVER_WORKERS = MAX_STREAMS + 8
DEFAULT_MAX_CONNECTIONS = 1024
DEFAULT_MAX_BUFFERED_BYTES = 1024 * MIB


def _check_int(name: str, value: object, low: int, high: int) -> None:
    require(is_int(value) and low <= value <= high, f"{name}: {value!r} is outside {low}..{high}")


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, kw_only=True)
class ServerProcess:
    """The grpcio server: its receive-window config and where it listens."""

    config: ServerConfig = field(default_factory=ServerConfig)
    listen_host: str = LOOPBACK
    listen_port: int = 0
    workers: int = DEFAULT_SERVER_WORKERS

    def __post_init__(self) -> None:
        require(bool(self.listen_host), "--listen: the host must not be empty")
        _check_int("listen port", self.listen_port, 0, 65535)
        _check_int("workers", self.workers, 8, 4096)

    @property
    def is_loopback(self) -> bool:
        return is_loopback_host(self.listen_host)


@dataclass(frozen=True, kw_only=True)
class ProxyConfig:
    """One delay line: listen address, upstream address, the link it emulates, tap file.

    The ``link`` (``kit.plan.trial.Link``) gives the per-direction delays and, optionally, a
    bottleneck rate shared by every connection, jitter and its seed.
    """

    listen_host: str = LOOPBACK
    listen_port: int = 0
    upstream_host: str = LOOPBACK
    upstream_port: int
    link: Link = field(default_factory=Link)
    read_bytes: int = DEFAULT_READ_BYTES
    buffer_cap_bytes: int = DEFAULT_BUFFER_CAP_BYTES
    tap_path: str | None = None
    # A file the relay keeps the bytes it delivered downstream in, live (kit run --interval).
    counter_path: str | None = None
    # Totals for the whole proxy: connections open at once (more are refused: accepted and
    # closed at once, counted) and bytes held in all delay queues (at the cap, readers pause).
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES

    def __post_init__(self) -> None:
        require(bool(self.listen_host), "listen_host: must not be empty")
        require(bool(self.upstream_host), "upstream_host: must not be empty")
        _check_int("listen_port", self.listen_port, 0, 65535)
        _check_int("upstream_port", self.upstream_port, 1, 65535)
        _check_int("read_bytes", self.read_bytes, 1024, 64 * MIB)
        _check_int("buffer_cap_bytes", self.buffer_cap_bytes, self.read_bytes, 2**40)
        require(self.tap_path is None or bool(self.tap_path), "tap_path: must not be empty")
        require(
            self.counter_path is None or bool(self.counter_path), "counter_path: must not be empty"
        )
        _check_int("--max-connections", self.max_connections, 1, 1_000_000)
        require(
            is_int(self.max_buffered_bytes) and self.read_bytes <= self.max_buffered_bytes <= 2**40,
            f"--max-buffered-bytes: {self.max_buffered_bytes!r} is outside "
            f"{self.read_bytes}..{2**40} (at least one read of {self.read_bytes} bytes)",
        )
        require(
            not (
                self.listen_port != 0
                and self.listen_port == self.upstream_port
                and self.listen_host == self.upstream_host
            ),
            "upstream: the delay line would dial itself (listen and upstream are the same address)",
        )

    @property
    def is_loopback(self) -> bool:
        return is_loopback_host(self.listen_host)


@dataclass(frozen=True, kw_only=True)
class ClientProcess:
    """One client run: the server (or delay line) to reach, and the trial to run there."""

    target_host: str = LOOPBACK
    target_port: int
    trial: Trial = field(default_factory=Trial)

    def __post_init__(self) -> None:
        require(bool(self.target_host), "target_host: must not be empty")
        _check_int("target_port", self.target_port, 1, 65535)

    @property
    def target(self) -> str:
        host = self.target_host
        return f"[{host}]:{self.target_port}" if ":" in host else f"{host}:{self.target_port}"
