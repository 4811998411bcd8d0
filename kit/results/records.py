"""Typed, immutable records: what the tap saw, the whole trial record, a session's end.

What one client measured is ``kit.results.client.ClientResult`` (apart, so that a client
process imports only what it sends).

Modelled on pyperf's ``Run``: frozen dataclasses, built once, never mutated, carried between
processes and onto disk as JSON by ``kit.results.codec`` (the one place that converts them,
with a ``schema`` version in every line). Reports and analysis read these types only.

One clock: ``time.monotonic_ns()`` (CLOCK_MONOTONIC is shared by every process on the
machine, so a client's timed window can be matched with the proxy's frame timestamps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from kit.plan.trial import Link, Trial
from kit.results.client import ClientResult

CPU_BOUND_FRACTION = 0.90
Status = Literal["ok", "failed", "interrupted"]  # interrupted: SIGINT/SIGTERM mid-run
Direction = Literal["up", "down"]


# --- what the frame tap saw, per direction of one connection (written by the proxy) -------


@dataclass(frozen=True)
class SettingsSeen:
    t_ns: int
    ack: bool
    values: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PingSeen:
    t_ns: int
    ack: bool
    opaque_hex: str


@dataclass(frozen=True)
class GoawaySeen:
    """A GOAWAY frame: when, the last stream it lets finish, its error code and the start of
    its debug data (``too_many_pings``)."""

    t_ns: int
    last_stream_id: int
    error_code: int
    debug: str = ""
    sender: str = ""  # "client" | "server" in a frame summary ("" in a direction's)


@dataclass(frozen=True)
class ResetSeen:
    """An RST_STREAM frame: when, which stream, its error code."""

    t_ns: int
    stream_id: int
    error_code: int
    sender: str = ""  # "client" | "server" in a frame summary ("" in a direction's)


@dataclass(frozen=True)
class WindowUpdates:
    """WINDOW_UPDATE frames of one layer: count, total increment, the first increments."""

    count: int = 0
    total: int = 0
    first: tuple[int, ...] = ()
    first_t_ns: tuple[int, ...] = ()


@dataclass(frozen=True)
class StreamWindowUpdate:
    t_ns: int
    stream_id: int
    increment: int


@dataclass(frozen=True)
class StreamSample:
    """A stream's running total at one time: WINDOW_UPDATE increments ("up") or DATA bytes
    ("down"), sampled at most every few ms per stream."""

    t_ns: int
    stream_id: int
    total: int


@dataclass(frozen=True)
class DataTotals:
    frames: int = 0
    bytes: int = 0
    max_frame: int = 0


@dataclass(frozen=True)
class DirectionSummary:
    """Everything the passive decoder (``kit.capture.frametap``) learnt about one direction.

    Bounded: ``settings`` keeps 32 entries, first window updates 64, ``pings`` 2000.
    """

    bytes: int = 0
    frames: int = 0
    decodable: bool = True
    undecodable_reason: str = ""
    settings: tuple[SettingsSeen, ...] = ()
    conn_window_updates: WindowUpdates = WindowUpdates()
    stream_window_updates: WindowUpdates = WindowUpdates()
    stream_window_first: tuple[StreamWindowUpdate, ...] = ()
    pings: int = 0
    ping_acks: int = 0
    ping_events: tuple[PingSeen, ...] = ()
    data: DataTotals = DataTotals()
    headers: int = 0
    rst_stream: int = 0
    goaway: int = 0
    # The first GOAWAY and RST_STREAM frames themselves (at most 16 each).
    goaway_events: tuple[GoawaySeen, ...] = ()
    reset_events: tuple[ResetSeen, ...] = ()
    # (t_ns, DATA bytes so far), once per chunk that began DATA frames; the first 512.
    data_marks: tuple[tuple[int, int], ...] = ()
    initial_window_last: int | None = None  # the last INITIAL_WINDOW_SIZE sent (unbounded)
    not_decoded_bytes: int = 0  # the decoder fell behind: these bytes were counted, not decoded
    stream_samples: tuple[StreamSample, ...] = ()


@dataclass(frozen=True)
class DeliveryTrace:
    """Bytes one direction released per bucket: bucket i covers origin + i x bucket_ns."""

    origin_ns: int = 0
    bucket_ns: int = 0
    bytes: tuple[int, ...] = ()


@dataclass(frozen=True)
class LinkSide:
    """What the link (``kit.delayline.schedule``) did in one direction of one connection:
    the peak backlog at the bottleneck (0 when unlimited) and what it delivered over time."""

    peak_queued_bytes: int = 0
    delivered: DeliveryTrace = DeliveryTrace()


@dataclass(frozen=True)
class TapConnection:
    """One relayed connection (``up`` = client->server), written when it closes."""

    conn: int
    opened_ns: int
    closed_ns: int
    up: DirectionSummary = DirectionSummary()
    down: DirectionSummary = DirectionSummary()


@dataclass(frozen=True)
class LinkConnection:
    """What the link did to one relayed connection (``up`` = client->server), written by the
    relay when it closes, next to (and matched by ``conn`` with) its ``TapConnection``."""

    conn: int
    opened_ns: int
    up: LinkSide = LinkSide()
    down: LinkSide = LinkSide()


@dataclass(frozen=True)
class ProxyTotals:
    """The proxy's counters, written once at shutdown."""

    connections: int = 0
    bytes_up: int = 0
    bytes_down: int = 0
    peak_buffered_bytes: int = 0
    errors: tuple[str, ...] = ()
    peak_queued_bytes: int = 0  # the largest backlog at a bottleneck (0: unlimited)
    tap_not_decoded_bytes: int = 0
    refused_connections: int = 0  # over --max-connections
    accept_errors: int = 0  # accept() failed for lack of file descriptors (or memory)
    buffer_full_pauses: int = 0  # times --max-buffered-bytes made every reader wait


# --- one trial's frame summary (kit.capture.summary builds it from TapConnections) ------


@dataclass(frozen=True)
class PacketSide:
    """What one direction of the packet link did with the IP packets it was offered."""

    packets: int
    bytes: int
    delivered_packets: int
    delivered_bytes: int
    lost_packets: int  # by the link's loss (independent or in bursts)
    queue_drops: int  # by the bottleneck's full drop-tail queue
    peak_queued_bytes: int


@dataclass(frozen=True)
class PacketTotals:
    """The packet link's forwarder over its life: per direction, its CPU, and how late it
    delivered packets against their due times (the delay error, p50/p99 over a sample)."""

    up: PacketSide
    down: PacketSide
    wakeups: int
    busy_s: float
    late_p50_us: float
    late_p99_us: float
    late_samples: int
    # Packets the TUN devices dropped before the forwarder read them (a loss the link did
    # not set: their ring overflowed), both namespaces; 0 in a sound run.
    device_drops: int = 0


@dataclass(frozen=True)
class TcpView:
    """One TCP connection as its kernel saw it on the packet link (``ss -ti``, the last
    sample before it closed): the sender's congestion window is what loss acts on."""

    side: str  # "server" or "client": whose socket
    local: str
    peer: str
    congestion: str  # the congestion-control algorithm (cubic, bbr, ...)
    cwnd_packets: int
    mss_bytes: int
    srtt_ms: float
    retransmits: int  # segments retransmitted over the connection's life
    bytes_sent: int


@dataclass(frozen=True)
class LinkChange:
    """A change of the running delay line's link through ``kit proxy --control``: when
    (monotonic ns, the clock of the tap's other lines, and wall-clock time) and the link
    from then on."""

    t_ns: int
    at: str
    link: Link


@dataclass(frozen=True)
class Undecodable:
    conn: int
    direction: Direction
    reason: str


@dataclass(frozen=True)
class PingRtt:
    """RTTs of PING -> ACK pairs: how many, median and p90 (None without pairs)."""

    count: int = 0
    median_ms: float | None = None
    p90_ms: float | None = None


@dataclass(frozen=True)
class PingRtts:
    """``proxy``: ping on "up" to its ack on "down", at the proxy; ``client``: the same plus
    the down delay, the RTT the client itself would have measured."""

    proxy: PingRtt = PingRtt()
    client: PingRtt = PingRtt()


@dataclass(frozen=True)
class WindowStep:
    """One INITIAL_WINDOW_SIZE the client announced (``t_ns`` None in older records)."""

    t_ns: int | None
    window_bytes: int


@dataclass(frozen=True)
class StreamWindowPoint:
    """The window a stream's sender held, as the tap saw it: INITIAL_WINDOW_SIZE + the
    stream's WINDOW_UPDATEs - its DATA, at the time of one of the client's updates."""

    t_ns: int
    stream_id: int
    window_bytes: int


@dataclass(frozen=True)
class SideFrames:
    """What one endpoint sent on a trial's connections: the client's side is the "up"
    direction, the server's the "down" one (for uploads the server is the receiver, and its
    credit paces the client).

    ``settings``: its first non-ack SETTINGS (earliest connection that sent one);
    ``settings_changes``: its later non-ack SETTINGS, all connections; its connection-level
    WINDOW_UPDATEs summed, with the first increments of all connections merged in time order
    (and their times), and its stream-level ones (count and total); its non-ack PINGs; the
    INITIAL_WINDOW_SIZE values it announced in successive SETTINGS of the first connection.
    """

    settings: dict[str, int] = field(default_factory=dict)
    settings_changes: int = 0
    conn_window_updates: WindowUpdates = WindowUpdates()
    stream_window_updates: WindowUpdates = WindowUpdates()
    pings_sent: int = 0
    window_growth: tuple[WindowStep, ...] = ()


@dataclass(frozen=True)
class FrameSummary:
    """The frames of one trial's connections, summed (first-N lists merged in time order):
    what each endpoint sent (``client``, ``server``: one ``SideFrames`` each) and what the
    connections carried."""

    connections: int = 0
    decodable: bool = True
    undecodable: tuple[Undecodable, ...] = ()
    client: SideFrames = SideFrames()
    rtt_probe_pings: int = 0  # of the client's PINGs, the kit's own RTT probes
    ping_rtt_ms: PingRtts = PingRtts()
    data_down: DataTotals = DataTotals()
    data_up: DataTotals = DataTotals()
    bytes_up: int = 0
    bytes_down: int = 0
    tap_lines_skipped: int = 0
    server: SideFrames = SideFrames()
    window_final_bytes: int | None = None  # the last stream window the client advertised
    peak_queued_bytes_down: int = 0  # the largest backlog at the down bottleneck
    delivered_down: DeliveryTrace = DeliveryTrace()  # every connection's, summed
    not_decoded_bytes: int = 0  # "tap incomplete": bytes the proxy's decoder skipped
    # The first connection's streams: each one's window over time (bounded samples).
    stream_windows: tuple[StreamWindowPoint, ...] = ()
    # The connection window the client opened before any DATA (65535 + its early updates).
    conn_window_start_bytes: int | None = None
    # When the first connection was opened (CLOCK_MONOTONIC ns; 0: unknown).
    opened_ns: int = 0
    # Every GOAWAY and RST_STREAM frame of either endpoint, in time order (the first 16 each).
    goaways: tuple[GoawaySeen, ...] = ()
    resets: tuple[ResetSeen, ...] = ()


# --- the record of one trial ---------------------------------------------------------------


@dataclass(frozen=True)
class ProcessCpu:
    """CPU use of one process over the client's timed window, as a fraction of one core."""

    role: str
    cpu_fraction: float

    @property
    def bound(self) -> bool:
        return self.cpu_fraction >= CPU_BOUND_FRACTION


@dataclass(frozen=True)
class MachineLoad:
    """How busy the whole machine was in the timed window, and how much of it was not ours."""

    busy_cores: float
    path_cores: float
    other_cores: float
    cpus: float


@dataclass(frozen=True)
class RunMeta:
    """Where and with what a record was taken."""

    started_at: str = ""
    host: str = ""
    cpus: int = 0
    python: str = ""
    grpcio: str = ""
    h2: str = ""
    kit: str = ""
    path: str = ""  # "delay line" | "direct"
    machine: MachineLoad | None = None
    target: str = ""  # HOST:PORT of a server the kit did not start ("" = its own)
    keep_awake: bool = False  # nice-19 busy loops kept every vCPU awake (--keep-awake)
    # What ran, as each process said in its ready line ("grpc-go 1.85.0"; "" when unknown:
    # a record from before, a target the kit did not start, a client that never started).
    client_stack: str = ""
    server_stack: str = ""
    warmup: str = ""  # what each connection did before the timed phase
    # The client process: a worker kept for successive trials (or one process per trial),
    # and which trial of that process this was (1 = its first; 0 = unknown, a record from
    # before workers).
    client_worker: bool = False
    client_trial: int = 0
    # kit run --interval: the interval it printed (0: none); the series itself is the
    # delivery trace rebinned (kit.analysis.intervals), kept once.
    interval_ms: float = 0.0


@dataclass(frozen=True)
class RunTags:
    """Which command and which campaign run a record belongs to ("" / 0 outside campaigns)."""

    command: str = ""
    campaign: str = ""
    run_id: str = ""
    round: int = 0
    key: str = ""
    copy: int = 0
    control: bool = False


@dataclass(frozen=True)
class Measurement:
    """The record of one trial: config, result or failure, frame summary, CPU, metadata.

    Appended to a JSON-lines file as soon as it exists (``kit.results.store``).
    """

    trial: Trial
    status: Status
    result: ClientResult | None = None
    error: str = ""
    theory_mib_s: float | None = None
    cpu: tuple[ProcessCpu, ...] = ()
    frames: FrameSummary | None = None
    meta: RunMeta = RunMeta()
    tags: RunTags = RunTags()
    # The packet link only: each TCP connection of the timed phase, both ends.
    tcp: tuple[TcpView, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.result is not None

    @property
    def throughput_mib_s(self) -> float | None:
        return self.result.throughput_mib_s if self.result is not None else None

    @property
    def cpu_bound_roles(self) -> tuple[str, ...]:
        return tuple(c.role for c in self.cpu if c.bound)


# --- other lines of a records file -----------------------------------------------------------


@dataclass(frozen=True)
class SessionRecord:
    """One ``kit tables`` session (a run, or a resumed part of one), appended when it ends."""

    started_at: str
    elapsed_s: float
    cells_run: int
    cells_planned: int
    complete: bool
    load_1min: tuple[float | None, ...] = ()
    # One line per stack this session could not start (not built), its cells left out.
    skipped: tuple[str, ...] = ()
