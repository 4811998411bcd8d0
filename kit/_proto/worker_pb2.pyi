from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ClientJob(_message.Message):
    __slots__ = ("target_host", "target_port", "windows", "connections", "options", "warmup", "timeout_s", "idle_s", "message_bytes", "download", "unary", "upload", "h2")
    TARGET_HOST_FIELD_NUMBER: _ClassVar[int]
    TARGET_PORT_FIELD_NUMBER: _ClassVar[int]
    WINDOWS_FIELD_NUMBER: _ClassVar[int]
    CONNECTIONS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    WARMUP_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    IDLE_S_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    DOWNLOAD_FIELD_NUMBER: _ClassVar[int]
    UNARY_FIELD_NUMBER: _ClassVar[int]
    UPLOAD_FIELD_NUMBER: _ClassVar[int]
    H2_FIELD_NUMBER: _ClassVar[int]
    target_host: str
    target_port: int
    windows: Windows
    connections: int
    options: _containers.RepeatedCompositeFieldContainer[Option]
    warmup: bool
    timeout_s: float
    idle_s: float
    message_bytes: int
    download: Download
    unary: Unary
    upload: Upload
    h2: H2Receiver
    def __init__(self, target_host: _Optional[str] = ..., target_port: _Optional[int] = ..., windows: _Optional[_Union[Windows, _Mapping]] = ..., connections: _Optional[int] = ..., options: _Optional[_Iterable[_Union[Option, _Mapping]]] = ..., warmup: _Optional[bool] = ..., timeout_s: _Optional[float] = ..., idle_s: _Optional[float] = ..., message_bytes: _Optional[int] = ..., download: _Optional[_Union[Download, _Mapping]] = ..., unary: _Optional[_Union[Unary, _Mapping]] = ..., upload: _Optional[_Union[Upload, _Mapping]] = ..., h2: _Optional[_Union[H2Receiver, _Mapping]] = ...) -> None: ...

class Windows(_message.Message):
    __slots__ = ("static", "stream_bytes", "conn_bytes")
    STATIC_FIELD_NUMBER: _ClassVar[int]
    STREAM_BYTES_FIELD_NUMBER: _ClassVar[int]
    CONN_BYTES_FIELD_NUMBER: _ClassVar[int]
    static: bool
    stream_bytes: int
    conn_bytes: int
    def __init__(self, static: _Optional[bool] = ..., stream_bytes: _Optional[int] = ..., conn_bytes: _Optional[int] = ...) -> None: ...

class Option(_message.Message):
    __slots__ = ("name", "int", "flag", "ratio", "text")
    NAME_FIELD_NUMBER: _ClassVar[int]
    INT_FIELD_NUMBER: _ClassVar[int]
    FLAG_FIELD_NUMBER: _ClassVar[int]
    RATIO_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    name: str
    int: int
    flag: bool
    ratio: float
    text: str
    def __init__(self, name: _Optional[str] = ..., int: _Optional[int] = ..., flag: _Optional[bool] = ..., ratio: _Optional[float] = ..., text: _Optional[str] = ...) -> None: ...

class Download(_message.Message):
    __slots__ = ("streams", "timed_s", "messages_per_stream", "slow_streams", "pacing")
    STREAMS_FIELD_NUMBER: _ClassVar[int]
    TIMED_S_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_PER_STREAM_FIELD_NUMBER: _ClassVar[int]
    SLOW_STREAMS_FIELD_NUMBER: _ClassVar[int]
    PACING_FIELD_NUMBER: _ClassVar[int]
    streams: int
    timed_s: float
    messages_per_stream: int
    slow_streams: int
    pacing: ReadPacing
    def __init__(self, streams: _Optional[int] = ..., timed_s: _Optional[float] = ..., messages_per_stream: _Optional[int] = ..., slow_streams: _Optional[int] = ..., pacing: _Optional[_Union[ReadPacing, _Mapping]] = ...) -> None: ...

class ReadPacing(_message.Message):
    __slots__ = ("rate_bytes_s", "jitter", "seed")
    RATE_BYTES_S_FIELD_NUMBER: _ClassVar[int]
    JITTER_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    rate_bytes_s: float
    jitter: float
    seed: int
    def __init__(self, rate_bytes_s: _Optional[float] = ..., jitter: _Optional[float] = ..., seed: _Optional[int] = ...) -> None: ...

class Unary(_message.Message):
    __slots__ = ("calls",)
    CALLS_FIELD_NUMBER: _ClassVar[int]
    calls: int
    def __init__(self, calls: _Optional[int] = ...) -> None: ...

class Upload(_message.Message):
    __slots__ = ("timed_s", "messages", "call_timeout_s")
    TIMED_S_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    CALL_TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    timed_s: float
    messages: int
    call_timeout_s: float
    def __init__(self, timed_s: _Optional[float] = ..., messages: _Optional[int] = ..., call_timeout_s: _Optional[float] = ...) -> None: ...

class H2Receiver(_message.Message):
    __slots__ = ("policy", "credit", "conn_credit", "max_frame_bytes", "pool_bytes", "prime_bytes")
    POLICY_FIELD_NUMBER: _ClassVar[int]
    CREDIT_FIELD_NUMBER: _ClassVar[int]
    CONN_CREDIT_FIELD_NUMBER: _ClassVar[int]
    MAX_FRAME_BYTES_FIELD_NUMBER: _ClassVar[int]
    POOL_BYTES_FIELD_NUMBER: _ClassVar[int]
    PRIME_BYTES_FIELD_NUMBER: _ClassVar[int]
    policy: str
    credit: str
    conn_credit: str
    max_frame_bytes: int
    pool_bytes: int
    prime_bytes: int
    def __init__(self, policy: _Optional[str] = ..., credit: _Optional[str] = ..., conn_credit: _Optional[str] = ..., max_frame_bytes: _Optional[int] = ..., pool_bytes: _Optional[int] = ..., prime_bytes: _Optional[int] = ...) -> None: ...

class ServerJob(_message.Message):
    __slots__ = ("listen_host", "listen_port", "windows", "options", "download_budget_bytes", "shared_message_max_bytes", "message_cache_bytes", "max_message_bytes", "max_echo_bytes", "max_concurrent_streams", "workers")
    LISTEN_HOST_FIELD_NUMBER: _ClassVar[int]
    LISTEN_PORT_FIELD_NUMBER: _ClassVar[int]
    WINDOWS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    DOWNLOAD_BUDGET_BYTES_FIELD_NUMBER: _ClassVar[int]
    SHARED_MESSAGE_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_CACHE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_ECHO_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_STREAMS_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    listen_host: str
    listen_port: int
    windows: Windows
    options: _containers.RepeatedCompositeFieldContainer[Option]
    download_budget_bytes: int
    shared_message_max_bytes: int
    message_cache_bytes: int
    max_message_bytes: int
    max_echo_bytes: int
    max_concurrent_streams: int
    workers: int
    def __init__(self, listen_host: _Optional[str] = ..., listen_port: _Optional[int] = ..., windows: _Optional[_Union[Windows, _Mapping]] = ..., options: _Optional[_Iterable[_Union[Option, _Mapping]]] = ..., download_budget_bytes: _Optional[int] = ..., shared_message_max_bytes: _Optional[int] = ..., message_cache_bytes: _Optional[int] = ..., max_message_bytes: _Optional[int] = ..., max_echo_bytes: _Optional[int] = ..., max_concurrent_streams: _Optional[int] = ..., workers: _Optional[int] = ...) -> None: ...

class ProxyJob(_message.Message):
    __slots__ = ("listen_host", "listen_port", "upstream_host", "upstream_port", "link", "read_bytes", "buffer_cap_bytes", "tap_path", "tap_decoder", "counter_path", "max_connections", "max_buffered_bytes")
    LISTEN_HOST_FIELD_NUMBER: _ClassVar[int]
    LISTEN_PORT_FIELD_NUMBER: _ClassVar[int]
    UPSTREAM_HOST_FIELD_NUMBER: _ClassVar[int]
    UPSTREAM_PORT_FIELD_NUMBER: _ClassVar[int]
    LINK_FIELD_NUMBER: _ClassVar[int]
    READ_BYTES_FIELD_NUMBER: _ClassVar[int]
    BUFFER_CAP_BYTES_FIELD_NUMBER: _ClassVar[int]
    TAP_PATH_FIELD_NUMBER: _ClassVar[int]
    TAP_DECODER_FIELD_NUMBER: _ClassVar[int]
    COUNTER_PATH_FIELD_NUMBER: _ClassVar[int]
    MAX_CONNECTIONS_FIELD_NUMBER: _ClassVar[int]
    MAX_BUFFERED_BYTES_FIELD_NUMBER: _ClassVar[int]
    listen_host: str
    listen_port: int
    upstream_host: str
    upstream_port: int
    link: LinkJob
    read_bytes: int
    buffer_cap_bytes: int
    tap_path: str
    tap_decoder: _containers.RepeatedScalarFieldContainer[str]
    counter_path: str
    max_connections: int
    max_buffered_bytes: int
    def __init__(self, listen_host: _Optional[str] = ..., listen_port: _Optional[int] = ..., upstream_host: _Optional[str] = ..., upstream_port: _Optional[int] = ..., link: _Optional[_Union[LinkJob, _Mapping]] = ..., read_bytes: _Optional[int] = ..., buffer_cap_bytes: _Optional[int] = ..., tap_path: _Optional[str] = ..., tap_decoder: _Optional[_Iterable[str]] = ..., counter_path: _Optional[str] = ..., max_connections: _Optional[int] = ..., max_buffered_bytes: _Optional[int] = ...) -> None: ...

class ForwarderJob(_message.Message):
    __slots__ = ("link", "loss", "loss_burst_len", "queue_up_bytes", "queue_down_bytes", "mtu", "congestion", "tap_path", "tap_decoder")
    LINK_FIELD_NUMBER: _ClassVar[int]
    LOSS_FIELD_NUMBER: _ClassVar[int]
    LOSS_BURST_LEN_FIELD_NUMBER: _ClassVar[int]
    QUEUE_UP_BYTES_FIELD_NUMBER: _ClassVar[int]
    QUEUE_DOWN_BYTES_FIELD_NUMBER: _ClassVar[int]
    MTU_FIELD_NUMBER: _ClassVar[int]
    CONGESTION_FIELD_NUMBER: _ClassVar[int]
    TAP_PATH_FIELD_NUMBER: _ClassVar[int]
    TAP_DECODER_FIELD_NUMBER: _ClassVar[int]
    link: LinkJob
    loss: float
    loss_burst_len: float
    queue_up_bytes: int
    queue_down_bytes: int
    mtu: int
    congestion: str
    tap_path: str
    tap_decoder: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, link: _Optional[_Union[LinkJob, _Mapping]] = ..., loss: _Optional[float] = ..., loss_burst_len: _Optional[float] = ..., queue_up_bytes: _Optional[int] = ..., queue_down_bytes: _Optional[int] = ..., mtu: _Optional[int] = ..., congestion: _Optional[str] = ..., tap_path: _Optional[str] = ..., tap_decoder: _Optional[_Iterable[str]] = ...) -> None: ...

class LinkJob(_message.Message):
    __slots__ = ("delay_up_ns", "delay_down_ns", "rate_up_bits_s", "rate_down_bits_s", "jitter_ns", "seed", "rate_steps")
    DELAY_UP_NS_FIELD_NUMBER: _ClassVar[int]
    DELAY_DOWN_NS_FIELD_NUMBER: _ClassVar[int]
    RATE_UP_BITS_S_FIELD_NUMBER: _ClassVar[int]
    RATE_DOWN_BITS_S_FIELD_NUMBER: _ClassVar[int]
    JITTER_NS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    RATE_STEPS_FIELD_NUMBER: _ClassVar[int]
    delay_up_ns: int
    delay_down_ns: int
    rate_up_bits_s: float
    rate_down_bits_s: float
    jitter_ns: int
    seed: int
    rate_steps: _containers.RepeatedCompositeFieldContainer[RateStepJob]
    def __init__(self, delay_up_ns: _Optional[int] = ..., delay_down_ns: _Optional[int] = ..., rate_up_bits_s: _Optional[float] = ..., rate_down_bits_s: _Optional[float] = ..., jitter_ns: _Optional[int] = ..., seed: _Optional[int] = ..., rate_steps: _Optional[_Iterable[_Union[RateStepJob, _Mapping]]] = ...) -> None: ...

class RateStepJob(_message.Message):
    __slots__ = ("rate_bits_s", "duration_ns")
    RATE_BITS_S_FIELD_NUMBER: _ClassVar[int]
    DURATION_NS_FIELD_NUMBER: _ClassVar[int]
    rate_bits_s: float
    duration_ns: int
    def __init__(self, rate_bits_s: _Optional[float] = ..., duration_ns: _Optional[int] = ...) -> None: ...

class Ready(_message.Message):
    __slots__ = ("ready", "pid", "port", "stack", "version", "worker")
    READY_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    STACK_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WORKER_FIELD_NUMBER: _ClassVar[int]
    ready: bool
    pid: int
    port: int
    stack: str
    version: str
    worker: bool
    def __init__(self, ready: _Optional[bool] = ..., pid: _Optional[int] = ..., port: _Optional[int] = ..., stack: _Optional[str] = ..., version: _Optional[str] = ..., worker: _Optional[bool] = ...) -> None: ...

class Failure(_message.Message):
    __slots__ = ("error", "exit_code")
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    error: str
    exit_code: int
    def __init__(self, error: _Optional[str] = ..., exit_code: _Optional[int] = ...) -> None: ...

class ClientAnswer(_message.Message):
    __slots__ = ("result", "client_trial")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    CLIENT_TRIAL_FIELD_NUMBER: _ClassVar[int]
    result: ClientResult
    client_trial: int
    def __init__(self, result: _Optional[_Union[ClientResult, _Mapping]] = ..., client_trial: _Optional[int] = ...) -> None: ...

class ClientResult(_message.Message):
    __slots__ = ("client", "bytes", "messages", "elapsed_s", "t_start_ns", "t_end_ns", "stream_bytes", "stream_finish_s", "cpu_s", "ping_rtt_ms", "latencies_ms", "window_trace", "notes", "sent_bytes", "credit_wait_s", "slow_streams", "stream_peak_unread_bytes", "stream_window_bytes", "peak_unread_bytes")
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_S_FIELD_NUMBER: _ClassVar[int]
    T_START_NS_FIELD_NUMBER: _ClassVar[int]
    T_END_NS_FIELD_NUMBER: _ClassVar[int]
    STREAM_BYTES_FIELD_NUMBER: _ClassVar[int]
    STREAM_FINISH_S_FIELD_NUMBER: _ClassVar[int]
    CPU_S_FIELD_NUMBER: _ClassVar[int]
    PING_RTT_MS_FIELD_NUMBER: _ClassVar[int]
    LATENCIES_MS_FIELD_NUMBER: _ClassVar[int]
    WINDOW_TRACE_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    SENT_BYTES_FIELD_NUMBER: _ClassVar[int]
    CREDIT_WAIT_S_FIELD_NUMBER: _ClassVar[int]
    SLOW_STREAMS_FIELD_NUMBER: _ClassVar[int]
    STREAM_PEAK_UNREAD_BYTES_FIELD_NUMBER: _ClassVar[int]
    STREAM_WINDOW_BYTES_FIELD_NUMBER: _ClassVar[int]
    PEAK_UNREAD_BYTES_FIELD_NUMBER: _ClassVar[int]
    client: str
    bytes: int
    messages: int
    elapsed_s: float
    t_start_ns: int
    t_end_ns: int
    stream_bytes: _containers.RepeatedScalarFieldContainer[int]
    stream_finish_s: _containers.RepeatedScalarFieldContainer[float]
    cpu_s: float
    ping_rtt_ms: _containers.RepeatedScalarFieldContainer[float]
    latencies_ms: _containers.RepeatedScalarFieldContainer[float]
    window_trace: _containers.RepeatedCompositeFieldContainer[WindowStep]
    notes: _containers.RepeatedScalarFieldContainer[str]
    sent_bytes: int
    credit_wait_s: float
    slow_streams: int
    stream_peak_unread_bytes: _containers.RepeatedScalarFieldContainer[int]
    stream_window_bytes: _containers.RepeatedScalarFieldContainer[int]
    peak_unread_bytes: int
    def __init__(self, client: _Optional[str] = ..., bytes: _Optional[int] = ..., messages: _Optional[int] = ..., elapsed_s: _Optional[float] = ..., t_start_ns: _Optional[int] = ..., t_end_ns: _Optional[int] = ..., stream_bytes: _Optional[_Iterable[int]] = ..., stream_finish_s: _Optional[_Iterable[float]] = ..., cpu_s: _Optional[float] = ..., ping_rtt_ms: _Optional[_Iterable[float]] = ..., latencies_ms: _Optional[_Iterable[float]] = ..., window_trace: _Optional[_Iterable[_Union[WindowStep, _Mapping]]] = ..., notes: _Optional[_Iterable[str]] = ..., sent_bytes: _Optional[int] = ..., credit_wait_s: _Optional[float] = ..., slow_streams: _Optional[int] = ..., stream_peak_unread_bytes: _Optional[_Iterable[int]] = ..., stream_window_bytes: _Optional[_Iterable[int]] = ..., peak_unread_bytes: _Optional[int] = ...) -> None: ...

class WindowStep(_message.Message):
    __slots__ = ("at_ms", "window_bytes")
    AT_MS_FIELD_NUMBER: _ClassVar[int]
    WINDOW_BYTES_FIELD_NUMBER: _ClassVar[int]
    at_ms: float
    window_bytes: int
    def __init__(self, at_ms: _Optional[float] = ..., window_bytes: _Optional[int] = ...) -> None: ...

class ServerAnswer(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: ServerResult
    def __init__(self, result: _Optional[_Union[ServerResult, _Mapping]] = ...) -> None: ...

class ServerResult(_message.Message):
    __slots__ = ("rpcs", "refused")
    RPCS_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    rpcs: int
    refused: int
    def __init__(self, rpcs: _Optional[int] = ..., refused: _Optional[int] = ...) -> None: ...
