"""Table 11, the stack pairs: who hangs up on whom. Every client stack against every server
stack, as each ships and with the keepalive settings users commonly set.

Users meet ``GOAWAY ENHANCE_YOUR_CALM "too_many_pings"`` when one stack's PINGs (BDP probes,
keepalive) meet another stack's ping policing. Each cell: the client's connection warmed
(one Ping call), then left open with no call on it for ``IDLE_S`` (keepalive PINGs go out
there, and a server that polices them counts strikes), then a download on two streams for
``DOWNLOAD_S``, one read slowly (a client with a BDP estimator probes there).

The keepalive setting is a 10 s keepalive time with PINGs permitted without calls, in each
stack's own words (grpc-go and grpc-java raise a shorter time to 10 s, so 10 s is what
every stack can be given). The servers run as shipped. A grpc-go, grpc-java or C-core server
tolerates two PINGs it finds too early (more than two "strikes") before its GOAWAY, so the
idle gap holds four keepalive intervals. The cells of a round run at once (their campaign is
``together``): one after another they would take most of an hour.

Pure planning; ``kit.plan.tables`` makes the campaign.
"""

from __future__ import annotations

from kit.plan.campaign import Cell
from kit.plan.programs import CLIENT_KINDS, SERVER_KINDS, ClientKind, ServerKind
from kit.plan.trial import ClientConfig, Link, OptionValue, ServerConfig, Trial, Workload
from kit.plan.units import KIB

PAIRS_CAMPAIGN = "table11-pairs"
SHIPPED = "shipped"
KEEPALIVE = "keepalive"
SETTINGS: tuple[str, ...] = (SHIPPED, KEEPALIVE)

KEEPALIVE_MS = 10_000
IDLE_S = 45.0  # four keepalive intervals and a margin: the third early PING is a GOAWAY
DOWNLOAD_S = 3.0
RTT_MS = 2.0
MESSAGE_BYTES = 64 * KIB
SLOW_READ_BITS_S = 1e6
TIMEOUT_S = IDLE_S + DOWNLOAD_S + 30.0

# "keepalive every 10 s, also without calls", in each stack's own option names. The kit's h2
# client has no keepalive: it has no keepalive cells.
KEEPALIVE_OPTIONS: dict[str, tuple[tuple[str, OptionValue], ...]] = {
    "grpcio": (
        ("grpc.keepalive_time_ms", KEEPALIVE_MS),
        ("grpc.keepalive_permit_without_calls", 1),
    ),
    "grpc-go": (("KeepaliveTime", KEEPALIVE_MS), ("KeepalivePermitWithoutStream", 1)),
    "grpc-java": (("keepAliveTime", KEEPALIVE_MS), ("keepAliveWithoutCalls", 1)),
    "grpc-js": (
        ("grpc.keepalive_time_ms", KEEPALIVE_MS),
        ("grpc.keepalive_permit_without_calls", 1),
    ),
    "tonic": (("http2_keep_alive_interval", KEEPALIVE_MS), ("keep_alive_while_idle", 1)),
}
CONTROL = f"{SHIPPED}-h2-grpcio"


def pair_key(setting: str, client: str, server: str) -> str:
    """``keepalive-grpc-go-grpc-java``: the setting, the client stack, the server stack."""
    return f"{setting}-{client}-{server}"


def pair_workload(idle_s: float = IDLE_S) -> Workload:
    return Workload(
        message_bytes=MESSAGE_BYTES,
        streams=2,
        duration_s=DOWNLOAD_S,
        slow_streams=1,
        read_rate_bits_s=SLOW_READ_BITS_S,
        idle_s=idle_s,
        timeout_s=idle_s + DOWNLOAD_S + 30.0,
    )


def pair_trial(setting: str, client: str, server: str, idle_s: float = IDLE_S) -> Trial:
    options = KEEPALIVE_OPTIONS[client] if setting == KEEPALIVE else ()
    config = ClientConfig(kind=client, channel_options=options)  # type: ignore[arg-type]
    return Trial(
        link=Link.from_rtt(RTT_MS),
        client=config,
        server=ServerConfig(kind=server),  # type: ignore[arg-type]
        workload=pair_workload(idle_s),
        label=f"{client} client, {server} server, {setting}",
    )


def pair_cells(
    clients: tuple[str, ...] = CLIENT_KINDS, servers: tuple[str, ...] = SERVER_KINDS
) -> list[Cell]:
    """Every client x server, as shipped and (where the client has keepalive) with it."""
    return [
        Cell(pair_key(setting, client, server), pair_trial(setting, client, server))
        for setting in SETTINGS
        for client in clients
        for server in servers
        if setting == SHIPPED or client in KEEPALIVE_OPTIONS
    ]


def pair_of(trial: Trial) -> tuple[str, ClientKind, ServerKind]:
    """(setting, client, server) of a pairs cell's trial."""
    setting = KEEPALIVE if trial.client.channel_options else SHIPPED
    return setting, trial.client.kind, trial.server.kind


# Each server stack's ping policing, as its source has it (version, file). Shown under the
# table and in the docs; a stack not listed polices nothing.
PING_POLICING: dict[str, str] = {
    "grpcio": (
        "C-core (grpcio 1.85, src/core/ext/transport/chttp2/transport/ping_abuse_policy.cc): "
        "a PING that comes sooner than grpc.http2.min_recv_ping_interval_without_data_ms "
        "(5 min) after the last, while the server has sent no data, is a strike; more than "
        'grpc.http2.max_ping_strikes (2) is GOAWAY ENHANCE_YOUR_CALM "too_many_pings"'
    ),
    "grpc-go": (
        "grpc-go 1.85.0 (internal/transport/http2_server.go, handlePing): a PING within "
        "KeepaliveEnforcementPolicy.MinTime (5 min) of the last is a strike (without "
        "streams and without PermitWithoutStream, within 2 h); writing HEADERS or DATA clears "
        'the strikes; more than 2 is GOAWAY ENHANCE_YOUR_CALM "too_many_pings" and the '
        "connection is closed"
    ),
    "grpc-java": (
        "grpc-java 1.85.1 (netty KeepAliveEnforcer.java, NettyServerHandler.onPingRead): a "
        "PING sooner than permitKeepAliveTime (5 min) after the last good one while calls are "
        "open, or than 2 h with none (unless permitKeepAliveWithoutCalls), is a strike; the "
        "server writing HEADERS or DATA clears them; more than 2 is GOAWAY ENHANCE_YOUR_CALM "
        '"too_many_pings", the connection closed and open calls ended RESOURCE_EXHAUSTED'
    ),
    "grpc-js": (
        "grpc-js 1.14.7 (src/server.ts): no ping policing; Node's HTTP/2 (nghttp2) acks every PING"
    ),
    "tonic": (
        "tonic 0.14.9 on hyper 1.12.0 and h2 0.4.20 (h2 src/proto/ping_pong.rs): no ping "
        "policing; every PING is acked"
    ),
}
