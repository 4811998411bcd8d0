"""Frozen, validated plans: the link, the client and server windows, the workload, the trial.

Everything here is plain data checked when built; an invalid value raises a ``FieldError``
naming the field and the allowed range. A config names its own fields (``rate_up_bits_s``):
it cannot know whether a value came from ``--rate-up`` or from a plan file's ``rate-up``,
and the plan builder (``kit.plan.builder``), which does, spells them as the user wrote them.
Trials travel to child processes as JSON (``kit.results.codec``, the one place that converts
typed data to and from JSON).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar, Literal, TypeGuard

from kit.errors import FieldError, UsageError
from kit.plan.pool import granted_bytes
from kit.plan.programs import (
    CLIENT_KINDS,
    SERVER_KINDS,
    STACK_KINDS,
    ClientKind,
    ServerKind,
)
from kit.plan.stack_options import check_stack_options, check_tonic_windows
from kit.plan.units import (
    HTTP2_MAX_WINDOW_BYTES,
    MIB,
    RATE_RANGE,
    WINDOW_RANGE,
    format_bytes,
    format_rate,
    rate_in_range,
    window_in_range,
)

WindowMode = Literal[
    "dynamic",
    "static",
    "bdp-off",
    "pool",
    "grpc-java",
    "hyper",
    "dotnet",
    "quic-go",
    "quiche",
    "linux",
]
CreditPolicy = Literal["immediate", "half", "quarter"]
ConnCredit = Literal["receipt", "read"]
WorkloadKind = Literal["download", "unary", "upload"]
OptionValue = int | str

WINDOW_MODES: tuple[str, ...] = ("dynamic", "static", "bdp-off", "pool")
# The h2 client's models of other stacks' receive-window policies (kit.clients.h2.policies).
# QUIC's rules apply to HTTP/2 here: a QUIC stream is a stream, MAX_DATA the connection window.
MODEL_POLICIES: tuple[str, ...] = ("grpc-java", "hyper", "dotnet", "quic-go", "quiche", "linux")
CLIENT_WINDOW_MODES: tuple[str, ...] = (*WINDOW_MODES, *MODEL_POLICIES)
# What ``--window-policy`` takes on the h2 client; grpc-go's is ``dynamic`` in records.
WINDOW_POLICIES: tuple[str, ...] = ("grpc-go", *MODEL_POLICIES, "pool", "static")
POLICY_ALIASES: dict[str, str] = {"grpc-go": "dynamic"}
CREDIT_POLICIES: tuple[str, ...] = ("immediate", "half", "quarter")
CONN_CREDITS: tuple[str, ...] = ("receipt", "read")
WORKLOAD_KINDS: tuple[str, ...] = ("download", "unary", "upload")
LinkKind = Literal["stream", "packet"]
LINK_KINDS: tuple[str, ...] = ("stream", "packet")
MIN_MTU = 576
MAX_MTU = 65_000  # a TUN device takes packets up to 64 KiB
DEFAULT_MTU = 1500
MAX_LOSS = 0.5

# Every client stack warms each connection the same way before the timed phase, as the
# reference study did: SETTINGS settled, then one Ping call. Nothing else moves, so a dynamic
# window starts the measurement where the stack starts it.
WARMUP = "one Ping call per connection"
MAX_DELAY_MS = 10_000.0
MAX_STREAMS = 1024  # the server starts a worker per concurrent call, up to this many
MAX_WORKLOAD_MESSAGE_BYTES = 64 * MIB
# What the grpcio server holds of download messages across every call at once (see
# ``server_held_bytes``): 1024 streams of the default 256 KiB messages fit exactly.
SERVER_HELD_MAX_BYTES = 256 * MIB
# Messages up to this size are serialized once and shared by every call asking for it.
SERVER_SHARED_MESSAGE_MAX_BYTES = 16 * MIB
H2_MIN_FRAME_BYTES = 16_384
H2_MAX_FRAME_BYTES = 2**24 - 1
DEFAULT_MESSAGE_BYTES = 256 * 1024
DEFAULT_MAX_FRAME_BYTES = MIB
HTTP2_DEFAULT_FRAME_BYTES = 16_384  # what grpc-go and HAProxy advertise (they send none)
DEFAULT_POOL_BYTES = 1_600_000  # HAProxy's receive pool per connection, 100 x 16 kB
MAX_POOL_BYTES = 1 << 30
MIN_TIMED_S = 2.0
MIN_TIMED_RTTS = 20
DEFAULT_LINK_SEED = 1
# The frame a peer must be able to send within the timeout: HTTP/2's default MAX_FRAME_SIZE.
SLOWEST_FRAME_BYTES = 16_384
MAX_SEED = 2**63 - 1
MAX_CONNECTIONS = 256

# What the grpcio client cannot do, by the field that would ask it to (it would ignore them
# silently); the builder refuses the options that set them with the same words. Each fits
# one 100-column line after "kit: error: --max-frame-size: " (70 characters at most).
H2_ONLY: dict[str, str] = {
    "conn_window_bytes": "grpcio cannot set the connection window: C-core derives it (use h2)",
    "credit_policy": "only the h2 client has a credit policy (C-core returns credit itself)",
    "conn_credit": "only the h2 client chooses when connection credit goes back",
    "pool_bytes": "the receive pool is the h2 client's (use --client h2 --window-policy pool)",
    "max_frame_bytes": "grpcio: pass grpc.http2.max_frame_size (honoured with bdp_probe=0)",
}


def require(ok: bool, message: str) -> None:
    if not ok:
        raise UsageError(message)


def check(ok: bool, template: str, *values: object) -> None:
    """``require`` for a message naming fields as ``{field}`` (see ``FieldError``)."""
    if not ok:
        raise FieldError(template, values)


def _placeholder(name: str) -> str:
    return "{" + name + "}"


def _check_window(name: str, value: int | None) -> None:
    if value is not None:
        check(
            is_int(value) and window_in_range(value),
            _placeholder(name) + ": {0} bytes is outside " + WINDOW_RANGE,
            value,
        )


def _check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:  # the message only when it is needed: records decode by the 10k
        check(False, name + ": {0!r} is not one of {1}", value, ", ".join(choices))


GO_MIN_WINDOW = 65_535  # grpc-go ignores a smaller window without a word (dialoptions.go)


def _check_go_window(name: str, value: int | None) -> None:
    check(
        value is None or value >= GO_MIN_WINDOW,
        _placeholder(name) + ": grpc-go's lower bound for a window is 64K (65535); it would "
        "run with 65535, not {0}",
        value,
    )


def _check_delay(name: str, value: float, limit_ms: float = MAX_DELAY_MS) -> None:
    check(
        is_number(value) and 0.0 <= value <= limit_ms,
        _placeholder(name) + ": {0} ms is outside 0..{1:g} ms",
        value,
        limit_ms,
    )


def _check_rate(name: str, value: float | None) -> None:
    if value is not None:
        check(
            is_number(value) and rate_in_range(value),
            _placeholder(name) + ": {0} bit/s is outside " + RATE_RANGE,
            value,
        )


@dataclass(frozen=True)
class RateStep:
    """One step of a rate that changes over time: ``rate_bits_s`` (0: an outage) for
    ``duration_ms``; a link's steps loop."""

    rate_bits_s: float
    duration_ms: float

    def __post_init__(self) -> None:
        check(
            is_number(self.rate_bits_s)
            and (self.rate_bits_s == 0 or rate_in_range(self.rate_bits_s)),
            "{rate_steps}: a rate of {0} bit/s is outside " + RATE_RANGE + " (or 0)",
            self.rate_bits_s,
        )
        check(
            is_number(self.duration_ms) and 0 < self.duration_ms <= 3_600_000,
            "{rate_steps}: a step of {0} ms is outside 0..1 h",
            self.duration_ms,
        )


MAX_RATE_STEPS = 2000  # a link travels to its processes as JSON on their command line


@dataclass(frozen=True)
class Link:
    """The delay line: each direction delays every chunk by a fixed time; RTT is their sum.

    A rate (bits per second, None = unlimited) makes a direction a bottleneck queue: a chunk
    is serialised at the rate, then propagates for the delay. ``jitter_ms`` J adds a seeded
    uniform offset in [-J, +J] to each chunk's delay (clamped at 0, never reordering).
    """

    delay_up_ms: float = 0.0
    delay_down_ms: float = 0.0
    rate_up_bits_s: float | None = None
    rate_down_bits_s: float | None = None
    jitter_ms: float = 0.0
    seed: int = DEFAULT_LINK_SEED
    # The packet link only (``kind="packet"``, see ``kit.plan.packet``): the kernels' TCP
    # runs over it, so IP packets can be lost (``loss``, in both directions, Gilbert-Elliott
    # bursts of mean ``loss_burst_len`` when > 0) and a rate has a drop-tail queue of
    # ``queue_bytes`` (None: one bandwidth-delay product, at least 64 KiB).
    kind: LinkKind = "stream"
    loss: float = 0.0
    loss_burst_len: float = 0.0
    queue_bytes: int | None = None
    mtu: int = DEFAULT_MTU
    congestion: str = ""  # the kernels' congestion control in the namespaces ("": default)
    # A down rate that changes over time, looped (``--rate-steps``, ``--trace``); either link.
    rate_steps: tuple[RateStep, ...] = ()

    def __post_init__(self) -> None:
        _check_delay("delay_up_ms", self.delay_up_ms)
        _check_delay("delay_down_ms", self.delay_down_ms)
        _check_rate_jitter_seed(
            self.rate_up_bits_s, self.rate_down_bits_s, self.jitter_ms, self.seed
        )
        _check_packet_fields(self)
        _check_rate_steps(self)

    @classmethod
    def from_rtt(cls, rtt_ms: float) -> Link:
        _check_delay("rtt", rtt_ms, 2 * MAX_DELAY_MS)
        return cls(delay_up_ms=rtt_ms / 2, delay_down_ms=rtt_ms / 2)

    @property
    def rtt_ms(self) -> float:
        return self.delay_up_ms + self.delay_down_ms

    @property
    def limited(self) -> bool:
        return (
            self.rate_up_bits_s is not None
            or self.rate_down_bits_s is not None
            or bool(self.rate_steps)
        )


def link_text(link: Link) -> str:
    """ ", rate 100 Mbit/s, jitter +-2 ms (seed 1)" for a link with a bottleneck or jitter;
    "" for today's unlimited, steady link."""
    up, down = link.rate_up_bits_s, link.rate_down_bits_s
    text = ""
    if up is not None or down is not None:
        if up == down:
            text += f", rate {format_rate(up or 0)}"
        else:
            rates = [
                f"{n} {'unlimited' if r is None else format_rate(r)}"
                for n, r in (("down", down), ("up", up))
            ]
            text += ", rate " + " / ".join(rates)
    if link.jitter_ms:
        text += f", jitter +-{link.jitter_ms:g} ms (seed {link.seed})"
    return text


def _check_rate_steps(link: Link) -> None:
    if not link.rate_steps:
        return
    check(
        len(link.rate_steps) <= MAX_RATE_STEPS and any(s.rate_bits_s > 0 for s in link.rate_steps),
        "{rate_steps}: {0} steps; give 1.." + f"{MAX_RATE_STEPS}" + ", at least one above 0",
        len(link.rate_steps),
    )
    check(
        link.rate_down_bits_s is None,
        "{rate_down_bits_s}: the down rate follows the rate steps; give one or the other",
    )


def _check_packet_fields(link: Link) -> None:
    _check_choice("{kind}", link.kind, LINK_KINDS)
    check(
        is_number(link.loss) and 0 <= link.loss <= MAX_LOSS,
        "{loss}: {0} is outside 0..0.5 (a fraction of packets)",
        link.loss,
    )
    check(
        link.loss_burst_len == 0
        or (is_number(link.loss_burst_len) and 1 <= link.loss_burst_len <= 1000 and link.loss > 0),
        "{loss_burst_len}: {0} packets must be 1..1000, with a loss above 0",
        link.loss_burst_len,
    )
    check(
        link.congestion == "" or link.congestion.isidentifier(),
        "{congestion}: {0!r} is not a congestion-control name (cubic, bbr, reno)",
        link.congestion,
    )
    check(
        is_int(link.mtu) and MIN_MTU <= link.mtu <= MAX_MTU,
        "{mtu}: {0} bytes is outside " + f"{MIN_MTU}..{MAX_MTU}",
        link.mtu,
    )
    check(
        link.queue_bytes is None or (is_int(link.queue_bytes) and link.queue_bytes >= link.mtu),
        "{queue_bytes}: {0} bytes must hold at least one packet (the MTU, {1} bytes)",
        link.queue_bytes,
        link.mtu,
    )
    if link.kind == "stream":
        packet_only = [
            name
            for name, value, default in (
                ("loss", link.loss, 0.0),
                ("loss_burst_len", link.loss_burst_len, 0.0),
                ("queue_bytes", link.queue_bytes, None),
                ("mtu", link.mtu, DEFAULT_MTU),
                ("congestion", link.congestion, ""),
            )
            if value != default
        ]
        check(
            not packet_only,
            ", ".join(_placeholder(name) for name in packet_only)
            + ": only on the packet link ({kind} packet); the stream link loses no bytes and "
            "has no packets or queue to drop from",
        )


def _check_rate_jitter_seed(
    rate_up_bits_s: float | None, rate_down_bits_s: float | None, jitter_ms: float, seed: int
) -> None:
    _check_rate("rate_up_bits_s", rate_up_bits_s)
    _check_rate("rate_down_bits_s", rate_down_bits_s)
    _check_delay("jitter_ms", jitter_ms)
    check(is_int(seed), "{seed}: {0!r} is not a whole number", seed)
    check(seed >= 0, "{seed}: {0} is negative; a seed is a whole number >= 0", seed)
    check(seed <= MAX_SEED, "{seed}: {0} is above 2^63-1", seed)


@dataclass(frozen=True)
class ClientConfig:
    """Which client, and how it sets its receive windows.

    ``window_bytes`` is the stream window (SETTINGS_INITIAL_WINDOW_SIZE). The connection
    window can be set separately only on our h2 client; it defaults to stream window x
    streams per connection there.
    """

    kind: ClientKind = "grpcio"
    window_mode: WindowMode = "dynamic"
    window_bytes: int | None = None
    conn_window_bytes: int | None = None
    # None: the window policy's own (h2: quarter for dynamic, as grpc-go; immediate else).
    credit_policy: CreditPolicy | None = None
    # None: the window policy's own (h2: 16 KiB for dynamic and pool, 1 MiB for static).
    max_frame_bytes: int | None = None
    channel_options: tuple[tuple[str, OptionValue], ...] = ()
    connections: int = 1
    conn_credit: ConnCredit = "receipt"
    pool_bytes: int | None = None

    def __post_init__(self) -> None:
        self._check_choices()
        self._check_pool()
        _check_window("window_bytes", self.window_bytes)
        _check_window("conn_window_bytes", self.conn_window_bytes)
        check(
            (self.window_mode == "static") == (self.window_bytes is not None),
            "{window_bytes}: a static window needs a size, and only a static window takes one",
        )
        check(
            self.max_frame_bytes is None
            or (
                is_int(self.max_frame_bytes)
                and H2_MIN_FRAME_BYTES <= self.max_frame_bytes <= H2_MAX_FRAME_BYTES
            ),
            "max frame size: {0} is outside HTTP/2's {1}..{2}",
            self.max_frame_bytes,
            H2_MIN_FRAME_BYTES,
            H2_MAX_FRAME_BYTES,
        )
        check(
            is_int(self.connections) and 1 <= self.connections <= MAX_CONNECTIONS,
            "{connections}: {0} is outside 1..{1}",
            self.connections,
            MAX_CONNECTIONS,
        )
        if self.kind == "grpcio":
            self._check_grpcio()
        elif self.kind in STACK_KINDS:
            self._check_stack()
        else:
            self._check_h2()

    def _check_choices(self) -> None:
        _check_choice("{client}", self.kind, CLIENT_KINDS)
        _check_choice("window mode", self.window_mode, CLIENT_WINDOW_MODES)
        if self.credit_policy is not None:
            _check_choice("credit policy", self.credit_policy, CREDIT_POLICIES)
        _check_choice("{conn_credit}", self.conn_credit, CONN_CREDITS)

    def _check_grpcio(self) -> None:
        check(
            self.conn_window_bytes is None, "{conn_window_bytes}: " + H2_ONLY["conn_window_bytes"]
        )
        # "immediate": what records written before the policy defaults hold.
        check(
            self.credit_policy in (None, "immediate"),
            "{credit_policy}: " + H2_ONLY["credit_policy"],
        )
        check(self.conn_credit == "receipt", "{conn_credit}: " + H2_ONLY["conn_credit"])
        check(
            self.window_mode != "pool",
            "{window_policy} pool: the receive pool is the h2 client's (use --client h2)",
        )
        check(
            self.window_mode not in MODEL_POLICIES,
            "{window_policy} {0}: the models of other stacks' windows are the h2 client's "
            "(use --client h2)",
            self.window_mode,
        )

    def _check_h2(self) -> None:
        check(
            not self.channel_options,
            "{channel_options}: channel arguments ({0}) are for the grpcio client only "
            "(the h2 client takes window, conn-window, credit, max-frame, connections)",
            ", ".join(k for k, _ in self.channel_options[:1]),
        )
        check(
            self.window_mode != "bdp-off",
            "window mode: bdp-off is a grpcio mode; the h2 client is static or dynamic",
        )
        if self.is_model():
            self._check_model()

    def _check_model(self) -> None:
        """A model sizes and refills its windows its own way: nothing else may set them."""
        who = "the " + self.window_mode + " model"
        check(self.conn_window_bytes is None, "{conn_window_bytes}: " + who + " sizes it itself")
        check(self.credit_policy is None, "{credit_policy}: " + who + " returns credit its own way")
        check(
            self.conn_credit == "receipt",
            "{conn_credit}: " + who + " returns connection credit its own way",
        )

    def is_model(self) -> bool:
        """The h2 client running a model of another stack's receive-window policy."""
        return self.window_mode in MODEL_POLICIES

    def _check_stack(self) -> None:
        """A stack's client has its own knobs: static or dynamic windows and named options."""
        who = f"{self.kind} client"
        check(
            self.window_mode in ("dynamic", "static"),
            "window mode: " + who + " is static or dynamic, not {0}",
            self.window_mode,
        )
        check(
            self.credit_policy is None,
            "{credit_policy}: " + who + " returns credit its own way (see its README)",
        )
        check(self.conn_credit == "receipt", "{conn_credit}: " + who + " credits on receipt")
        check(
            self.max_frame_bytes is None,
            "{max_frame_bytes}: "
            + (
                "the tonic client's knob for it is its own option "
                "(--option max_frame_size=N: Endpoint::max_frame_size)"
                if self.kind == "tonic"
                else who + " has no knob for the MAX_FRAME_SIZE it advertises"
            ),
        )
        if self.conn_window_bytes is not None:
            check(
                self.window_mode == "static",
                "{conn_window_bytes}: a dynamic "
                + who
                + " "
                + (
                    "keeps hyper's fixed windows"
                    if self.kind == "tonic"
                    else "grows its connection window itself"
                )
                + " (set {window_bytes} too)",
            )
            check(
                self.kind != "grpc-js" or self.conn_window_bytes == self.window_bytes,
                "{conn_window_bytes}: grpc-js sets one window for the stream and the connection "
                "(grpc-node.flow_control_window)",
            )
        if self.kind == "grpc-go":
            for name in ("window_bytes", "conn_window_bytes"):
                _check_go_window(name, getattr(self, name))
        check_stack_options(self.kind, "client", self.channel_options, self.window_mode == "static")
        if self.kind == "tonic":
            check_tonic_windows("client", self.window_mode == "static", self.channel_options)

    def _check_pool(self) -> None:
        if self.pool_bytes is not None:
            check(
                self.window_mode == "pool",
                "{pool_bytes}: only the pool window policy takes a pool (add {window_policy} pool)",
            )
            check(
                is_int(self.pool_bytes)
                and HTTP2_DEFAULT_FRAME_BYTES <= self.pool_bytes <= MAX_POOL_BYTES,
                "{pool_bytes}: {0} is outside {1} B..1 GiB",
                self.pool_bytes,
                HTTP2_DEFAULT_FRAME_BYTES,
            )

    @property
    def threshold_policy(self) -> CreditPolicy:
        """The credit threshold the client uses (the window policy's default when unset)."""
        if self.credit_policy is not None:
            return self.credit_policy
        return "quarter" if self.kind == "h2" and self.window_mode == "dynamic" else "immediate"

    @property
    def frame_bytes(self) -> int:
        """The MAX_FRAME_SIZE the h2 client advertises (the window policy's default when unset)."""
        if self.max_frame_bytes is not None:
            return self.max_frame_bytes
        if self.kind == "h2" and (self.window_mode in ("dynamic", "pool") or self.is_model()):
            return HTTP2_DEFAULT_FRAME_BYTES
        return DEFAULT_MAX_FRAME_BYTES

    @property
    def pool_size_bytes(self) -> int:
        return self.pool_bytes if self.pool_bytes is not None else DEFAULT_POOL_BYTES

    def conn_window_for(self, streams_per_connection: int) -> int | None:
        """The connection window a static client grants: h2's and the stacks' (grpc-js has one
        window for both: its stream window); None when it is not ours to set (grpcio,
        dynamic windows)."""
        if self.kind == "grpc-js" and self.window_bytes is not None:
            return self.window_bytes
        if self.kind not in ("h2", *STACK_KINDS) or self.window_bytes is None:
            return self.conn_window_bytes
        if self.conn_window_bytes is not None:
            return self.conn_window_bytes
        return min(self.window_bytes * max(1, streams_per_connection), HTTP2_MAX_WINDOW_BYTES)

    @property
    def label(self) -> str:
        if self.window_mode == "static":
            text = f"{self.kind} static {format_bytes(self.window_bytes or 0)}"
            if self.conn_window_bytes is not None:
                text += f" / conn {format_bytes(self.conn_window_bytes)}"
        elif self.window_mode == "pool":
            text = f"{self.kind} pool {format_bytes(self.pool_size_bytes)}"
        elif self.is_model():
            text = f"{self.kind} {self.window_mode} model"
        else:
            text = f"{self.kind} {self.window_mode}"
        if self.conn_credit != "receipt":
            text += f" conn-credit {self.conn_credit}"
        if self.channel_options:
            text += " " + ",".join(f"{k}={v}" for k, v in self.channel_options)
        if self.connections > 1:
            text += f" x{self.connections} conns"
        return text


@dataclass(frozen=True)
class ServerConfig:
    """Which server, and its own receive window (it governs uploads)."""

    window_mode: WindowMode = "dynamic"
    window_bytes: int | None = None
    channel_options: tuple[tuple[str, OptionValue], ...] = ()
    kind: ServerKind = "grpcio"

    def __post_init__(self) -> None:
        _check_choice("{server}", self.kind, SERVER_KINDS)
        _check_choice("server window mode", self.window_mode, WINDOW_MODES)
        if self.kind in STACK_KINDS:
            check(
                self.window_mode in ("dynamic", "static"),
                "server window mode: the " + self.kind + " server is static or dynamic, not {0}",
                self.window_mode,
            )
            if self.kind == "grpc-go":
                _check_go_window("window_bytes", self.window_bytes)
            check_stack_options(
                self.kind, "server", self.channel_options, self.window_mode == "static"
            )
            if self.kind == "tonic":
                check_tonic_windows("server", self.window_mode == "static", self.channel_options)
        _check_window("window_bytes", self.window_bytes)
        check(
            (self.window_mode == "static") == (self.window_bytes is not None),
            "{window_bytes}: a static window needs a size, and only a static window takes one",
        )

    @property
    def label(self) -> str:
        """``server static 64 KiB``, ``server dynamic``, plus any channel arguments."""
        text = f"server {self.window_mode}"
        if self.window_bytes is not None:
            text += f" {format_bytes(self.window_bytes)}"
        if self.channel_options:
            text += " " + ",".join(f"{k}={v}" for k, v in self.channel_options)
        return text


@dataclass(frozen=True)
class Workload:
    """What the client does: timed or fixed-size downloads on N streams, unary calls, uploads.

    A download is timed (``duration_s``, default max(2 s, 20 RTT)) unless
    ``bytes_per_stream`` fixes the transfer size, as in the reference study.
    """

    kind: WorkloadKind = "download"
    message_bytes: int = DEFAULT_MESSAGE_BYTES
    streams: int = 1
    duration_s: float | None = None
    bytes_per_stream: int | None = None
    calls: int = 200
    warmup: bool = True
    timeout_s: float = 60.0
    slow_streams: int = 0
    read_rate_bits_s: float | None = None
    # Before the timed phase, every connection stays open with no call on it for ``idle_s``
    # (keepalive and ping rules act there; every client). Slow start after idle: the h2
    # client first downloads ``prime_bytes`` on each (its congestion window grows).
    prime_bytes: int | None = None
    idle_s: float = 0.0

    def __post_init__(self) -> None:
        _check_choice("{workload}", self.kind, WORKLOAD_KINDS)
        check(
            is_int(self.message_bytes) and 1 <= self.message_bytes <= MAX_WORKLOAD_MESSAGE_BYTES,
            "{message_bytes}: {0} is outside 1..64 MiB",
            self.message_bytes,
        )
        check(
            is_int(self.streams) and 1 <= self.streams <= MAX_STREAMS,
            "{streams}: {0} is outside 1..{1}",
            self.streams,
            MAX_STREAMS,
        )
        check(
            is_int(self.calls) and 1 <= self.calls <= 1_000_000,
            "{calls}: {0} is outside 1..1000000",
            self.calls,
        )
        if self.duration_s is not None:
            check(
                is_number(self.duration_s) and 0.01 <= self.duration_s <= 3600,
                "{duration_s}: {0} s is outside 0.01..3600 s",
                self.duration_s,
            )
        self._check_transfer()
        require(isinstance(self.warmup, bool), f"warmup: {self.warmup!r} is not true or false")
        check(
            is_number(self.timeout_s) and 1.0 <= self.timeout_s <= 7200,
            "{timeout_s}: {0} s is outside 1..7200 s",
            self.timeout_s,
        )
        self._check_slow_readers()
        self._check_idle()

    def _check_idle(self) -> None:
        if self.prime_bytes is not None:
            check(
                is_int(self.prime_bytes) and 1 <= self.prime_bytes <= 2**30,
                "{prime_bytes}: {0} is outside 1 B..1 GiB",
                self.prime_bytes,
            )
            check(
                self.kind == "download",
                "{prime_bytes}: a primed, then idle connection is for downloads ({workload} "
                "download)",
            )
        check(
            is_number(self.idle_s) and 0 <= self.idle_s <= 60,
            "{idle_s}: {0} s is outside 0..60 s",
            self.idle_s,
        )

    def _check_transfer(self) -> None:
        if self.bytes_per_stream is None:
            return
        check(
            is_int(self.bytes_per_stream) and 1 <= self.bytes_per_stream <= 2**40,
            "{bytes_per_stream}: {0} is outside 1 B..1 TiB",
            self.bytes_per_stream,
        )
        # A smaller transfer would still move one whole message and report nonsense.
        check(
            self.bytes_per_stream >= self.message_bytes,
            "{bytes_per_stream}: {0} B per stream is less than one message ({1}); ask for at "
            "least the message size, or a smaller {message_bytes}",
            self.bytes_per_stream,
            format_bytes(self.message_bytes),
        )

    def _check_slow_readers(self) -> None:
        check(
            is_int(self.slow_streams) and 0 <= self.slow_streams <= self.streams,
            "{slow_streams}: {0} is outside 0..{1} ({streams})",
            self.slow_streams,
            self.streams,
        )
        check(
            (self.slow_streams > 0) == (self.read_rate_bits_s is not None),
            "{read_rate_bits_s}: slow streams need a read rate, and only slow streams take one "
            "(give {slow_streams} and {read_rate_bits_s} together)",
        )
        if self.read_rate_bits_s is not None:
            _check_rate("read_rate_bits_s", self.read_rate_bits_s)
            check(
                self.kind == "download",
                "{slow_streams}: slow readers are for downloads ({workload} download)",
            )

    @property
    def read_rate_bytes_s(self) -> float | None:
        return None if self.read_rate_bits_s is None else self.read_rate_bits_s / 8

    def timed_duration_s(self, rtt_ms: float) -> float:
        """The timed phase: the asked duration, else max(2 s, 20 RTTs)."""
        if self.duration_s is not None:
            return self.duration_s
        return max(MIN_TIMED_S, MIN_TIMED_RTTS * rtt_ms / 1000.0)

    def messages_per_stream(self) -> int | None:
        if self.bytes_per_stream is None:
            return None
        return max(1, -(-self.bytes_per_stream // self.message_bytes))


@dataclass(frozen=True)
class Trial:
    """One measurement: a link, a client, a server, a workload."""

    # Decoded once per distinct JSON (``kit.results.codec``): records repeat their trials.
    __codec_cache__: ClassVar[bool] = True

    link: Link = field(default_factory=Link)
    client: ClientConfig = field(default_factory=ClientConfig)
    server: ServerConfig = field(default_factory=ServerConfig)
    workload: Workload = field(default_factory=Workload)
    label: str = ""

    def __post_init__(self) -> None:
        check_frame_time(self.link, self.workload)
        check(
            self.workload.prime_bytes is None or self.client.kind == "h2",
            "{prime_bytes}: priming a connection and leaving it idle is the h2 client's "
            "(use {client} h2)",
        )

    @property
    def streams_per_connection(self) -> int:
        """Streams are spread round-robin: the busiest connection carries this many."""
        return max(1, -(-self.workload.streams // self.client.connections))

    @property
    def conn_window_bytes(self) -> int | None:
        """The connection window the client grants (h2), or None when it is not ours to set."""
        return self.client.conn_window_for(self.streams_per_connection)


def check_frame_time(link: Link, workload: Workload) -> None:
    """A rate at which one frame outlasts the timeout can never finish a call: refused."""
    for name, rate in (
        ("rate_up_bits_s", link.rate_up_bits_s),
        ("rate_down_bits_s", link.rate_down_bits_s),
    ):
        if rate is None:
            continue
        frame_s = SLOWEST_FRAME_BYTES * 8 / rate
        check(
            frame_s <= workload.timeout_s,
            _placeholder(name) + ": at {0} one 16 KiB frame takes {1:.0f} s, longer than the "
            "{2:g} s timeout (raise the rate or {timeout_s})",
            format_rate(rate),
            frame_s,
            workload.timeout_s,
        )


# The timed phase must see data: the first byte arrives one RTT after the request.
MIN_DURATION_RTTS = 2
# What a timeout must leave beside the timed phase: connecting and the warm-up Ping.
STARTUP_RTTS = 2


def check_timed_phase(workload: Workload, rtt_ms: float, timeout_given: bool) -> None:
    """A timed phase shorter than two RTTs measures (almost) nothing, and a timeout shorter
    than the timed phase fails every run at its end: both are refused before anything starts."""
    if workload.kind == "unary" or workload.bytes_per_stream is not None:
        return
    timed_s = workload.timed_duration_s(rtt_ms)
    shortest_s = MIN_DURATION_RTTS * rtt_ms / 1000
    check(
        timed_s >= shortest_s,
        "{duration_s}: {0:g} s is shorter than 2 RTTs ({1:g} s at an RTT of {2:g} ms): the "
        "first data arrives an RTT after the request, so it would measure next to nothing",
        timed_s,
        shortest_s,
        rtt_ms,
    )
    needed_s = timed_s + STARTUP_RTTS * rtt_ms / 1000
    check(
        not timeout_given or workload.timeout_s > needed_s,
        "{timeout_s}: {0:g} s ends the run before its {1:g} s timed phase and warm-up are "
        "over; give more than {2:g} s (or leave {timeout_s} out: it follows the timed phase)",
        workload.timeout_s,
        timed_s,
        needed_s,
    )


def check_upload_streams(workload: Workload) -> None:
    """Every client uploads on one client-streaming call: more streams would not be run."""
    check(
        workload.kind != "upload" or workload.streams == 1,
        "{streams}: an upload runs one client-streaming call, so {0} streams would run as "
        "one; drop {streams}",
        workload.streams,
    )


def server_held_bytes(message_bytes: int) -> int:
    """What one download call makes the grpcio server hold: the message C-core is sending,
    plus the call's own serialized copy when it is too large to be shared."""
    own = message_bytes if message_bytes > SERVER_SHARED_MESSAGE_MAX_BYTES else 0
    return message_bytes + own


def check_server_memory(server: ServerConfig, workload: Workload) -> None:
    """A download whose streams together need more than the grpcio server holds would have
    calls refused (RESOURCE_EXHAUSTED) mid-run: refused here instead."""
    if server.kind != "grpcio" or workload.kind != "download":
        return
    held = workload.streams * server_held_bytes(workload.message_bytes)
    check(
        held <= SERVER_HELD_MAX_BYTES,
        "{streams}: {0} streams of {1} messages would need {2} of the server's memory at "
        "once; it holds at most {3} (fewer {streams} or a smaller {message_bytes})",
        workload.streams,
        format_bytes(workload.message_bytes),
        format_bytes(held),
        format_bytes(SERVER_HELD_MAX_BYTES),
    )


def check_connections(client: ClientConfig, workload: Workload) -> None:
    """Each connection carries at least one stream: more connections than streams would
    leave some idle (the clients open min(connections, streams)), so it is refused."""
    check(
        client.connections <= workload.streams,
        "{connections}: {0} connections for {1} stream(s) would leave {2} of them without a "
        "stream; give at most {1} (one per stream) or more {streams}",
        client.connections,
        workload.streams,
        client.connections - workload.streams,
    )


def theory_mib_s(trial: Trial) -> float | None:
    """Throughput bound in MiB/s: min(link rate, window / RTT), or None when neither binds
    (dynamic window on an unlimited link, or RTT 0 without a rate); for the receive pool,
    the shares it grants / RTT (``pool_granted_bytes``).

    Per connection, the stream layer allows streams x stream window per RTT and the
    connection layer allows the connection window per RTT; the smaller one binds. Every
    connection shares the link's bottleneck, so the rate bounds their sum.
    """
    bounds = [b for b in (window_theory_mib_s(trial), rate_mib_s(trial)) if b is not None]
    return min(bounds) if bounds else None


def window_theory_mib_s(trial: Trial) -> float | None:
    """window / RTT alone, summed over connections (None: dynamic window, or RTT 0)."""
    client, workload = trial.client, trial.workload
    if workload.kind == "upload":
        return upload_theory_mib_s(trial)
    if client.window_mode == "pool" and trial.link.rtt_ms > 0 and workload.kind == "download":
        return pool_granted_bytes(trial) / (trial.link.rtt_ms / 1000.0) / MIB
    in_flight = window_in_flight_bytes(trial)
    if in_flight is None or trial.link.rtt_ms <= 0:
        return None
    return in_flight / (trial.link.rtt_ms / 1000.0) / MIB


def window_in_flight_bytes(trial: Trial) -> int | None:
    """The bytes a download's static windows let in flight per round trip, summed over its
    connections: per connection the smaller of streams x stream window and the connection
    window (None: no static stream window, or not a download)."""
    client, workload = trial.client, trial.workload
    if client.window_bytes is None or workload.kind != "download":
        return None
    per_conn = client.window_bytes * trial.streams_per_connection
    conn_window = trial.conn_window_bytes
    if conn_window is not None:
        per_conn = min(per_conn, conn_window)
    return per_conn * min(client.connections, workload.streams)


def pool_granted_bytes(trial: Trial) -> int:
    """The receive pool's credit over every connection while all streams receive: each
    connection's shares (its pool, or a 16 KiB buffer per stream when that is more)."""
    streams, connections = (
        trial.workload.streams,
        min(trial.client.connections, trial.workload.streams),
    )
    per_conn = [streams // connections + (i < streams % connections) for i in range(connections)]
    return sum(granted_bytes(trial.client.pool_size_bytes, n) for n in per_conn)


def upload_theory_mib_s(trial: Trial) -> float | None:
    """An upload's bound: the server's static receive window / RTT. An upload is one stream,
    and C-core's connection window follows its stream window. None when dynamic or at RTT 0."""
    window = trial.server.window_bytes
    if window is None or trial.link.rtt_ms <= 0:
        return None
    return window / (trial.link.rtt_ms / 1000.0) / MIB


UPLOAD_DRAIN_S = 5.0
UPLOAD_DRAIN_RTTS = 20


def upload_call_timeout_s(trial: Trial) -> float:
    """A timed upload's deadline: the timed phase plus time to drain what is in flight (at
    most a window and a message: a few RTTs), so a server that stops reading fails the call
    in seconds rather than after the whole ``--timeout``. Fixed-size uploads get --timeout."""
    workload = trial.workload
    if workload.bytes_per_stream is not None:
        return workload.timeout_s
    drain_s = max(UPLOAD_DRAIN_S, UPLOAD_DRAIN_RTTS * trial.link.rtt_ms / 1000.0)
    return min(workload.timeout_s, workload.timed_duration_s(trial.link.rtt_ms) + drain_s)


def data_rate_bits_s(trial: Trial) -> float | None:
    """The rate of the direction the payload flows in (down, or up for uploads)."""
    link = trial.link
    return link.rate_up_bits_s if trial.workload.kind == "upload" else link.rate_down_bits_s


def rate_mib_s(trial: Trial) -> float | None:
    """The link rate of a download or upload as MiB/s (None: unlimited, or unary calls)."""
    rate = data_rate_bits_s(trial)
    if rate is None or trial.workload.kind == "unary":
        return None
    return rate / 8 / MIB


def bdp_bytes(trial: Trial) -> int | None:
    """Bandwidth-delay product of the payload's direction: rate x RTT (None: unlimited)."""
    rate = data_rate_bits_s(trial)
    return None if rate is None else round(rate / 8 * trial.link.rtt_ms / 1000.0)


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


# Fields added since release 0.1: a trial's fingerprint leaves them out while they hold
# their defaults, so the campaign names of older plans (and --resume) stay what they were.
# (The link's rate, jitter and seed came with the bottleneck, after release 0.1 too.)
_LATER_FIELDS = frozenset(
    {
        "conn_credit",
        "pool_bytes",
        "slow_streams",
        "read_rate_bits_s",
        "prime_bytes",
        "idle_s",
        "rate_up_bits_s",
        "rate_down_bits_s",
        "jitter_ms",
        "seed",
    }
)
# The packet link's fields came later still (``kind`` is also the client's and workload's).
_LATER_LINK_FIELDS = frozenset(
    {"kind", "loss", "loss_burst_len", "queue_bytes", "mtu", "congestion", "rate_steps"}
)


def fingerprint(trial: Trial) -> dict[str, object]:
    """The trial as plain data for naming campaigns: what it runs, with policy defaults
    resolved (an unset credit policy is the one the client uses)."""
    data = dataclasses.asdict(trial)
    client = data["client"]
    client["credit_policy"] = trial.client.threshold_policy
    client["max_frame_bytes"] = trial.client.frame_bytes
    parts = ((trial.client, client), (trial.workload, data["workload"]), (trial.link, data["link"]))
    for part, value in parts:
        for f in dataclasses.fields(part):
            later = f.name in _LATER_FIELDS or (part is trial.link and f.name in _LATER_LINK_FIELDS)
            if later and getattr(part, f.name) == f.default:
                del value[f.name]
    if trial.server.kind == "grpcio":  # servers of other stacks came later too
        del data["server"]["kind"]
    return data
