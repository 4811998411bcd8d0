"""``--help`` a person can use: every command's options in panels (link, workload, client,
server, output), metavars that say what to type, and an examples epilogue.

One table for every command, applied to the click commands typer builds, so that a new
option lands in a panel by its name and the commands' signatures stay about parsing.
"""

from __future__ import annotations

from typing import Any

LINK, PACKET, WORKLOAD, MACHINE = "Link", "Packet link (--link packet)", "Workload", "Machine"
CLIENT, H2, SERVER, OUTPUT = "Client", "h2 client", "Server", "Output"
CHECK = "Check"

_PANELS: dict[str, tuple[str, ...]] = {
    LINK: (
        "rtt",
        "delay_up",
        "delay_down",
        "rate",
        "rate_up",
        "rate_down",
        "jitter",
        "seed",
        "rate_steps",
        "trace",
        "direct",
        "target",
        "listen",
        "upstream",
        "max_connections",
        "max_buffered_bytes",
        "tap_file",
    ),
    PACKET: ("link", "loss", "loss_burst", "queue", "mtu", "cc"),
    WORKLOAD: (
        "workload",
        "streams",
        "slow_streams",
        "read_rate",
        "message_size",
        "duration",
        "size",
        "calls",
        "timeout",
        "rounds",
        "until_decided",
        "max_rounds",
        "time_limit",
        "min_window",
        "max_window",
        "baseline",
        "candidate",
        "file",
        "preset",
        "quick",
        "only",
        "resume",
    ),
    CLIENT: ("client", "window", "mode", "option", "connections"),
    H2: ("conn_window", "credit", "conn_credit", "window_policy", "pool", "max_frame_size"),
    SERVER: ("server", "server_window", "server_mode", "server_option"),
    MACHINE: ("keep_awake", "fresh_clients"),
    CHECK: ("expect",),
    OUTPUT: (
        "as_json",
        "records",
        "no_records",
        "csv",
        "units",
        "verbose",
        "markdown",
        "html",
        "benchmark_json",
        "out",
        "interval",
        "full",
        "all_runs",
        "summary",
        "help",
    ),
}
PANEL_OF = {name: panel for panel, names in _PANELS.items() for name in names}

_METAVARS: dict[str, str] = {
    **dict.fromkeys(("rtt", "delay_up", "delay_down", "jitter", "duration", "timeout"), "DURATION"),
    "interval": "DURATION",
    "time_limit": "DURATION",
    "max_rounds": "N",
    **dict.fromkeys(
        (
            "window",
            "conn_window",
            "pool",
            "max_frame_size",
            "message_size",
            "size",
            "server_window",
            "min_window",
            "max_window",
            "max_buffered_bytes",
        ),
        "SIZE",
    ),
    **dict.fromkeys(("rate", "rate_up", "rate_down", "read_rate"), "RATE"),
    **dict.fromkeys(
        ("streams", "slow_streams", "connections", "calls", "rounds", "seed", "max_connections"),
        "N",
    ),
    **dict.fromkeys(("target", "listen", "upstream"), "HOST:PORT"),
    **dict.fromkeys(("option", "server_option"), "KEY=VALUE"),
    **dict.fromkeys(
        (
            "records",
            "csv",
            "markdown",
            "out",
            "file",
            "tap_file",
            "trace",
            "html",
            "benchmark_json",
        ),
        "FILE",
    ),
    "expect": "EXPR",
    "link": "KIND",
    "loss": "RATIO",
    "loss_burst": "LOSS:LEN",
    "queue": "SIZE|TIME",
    "mtu": "N",
    "cc": "NAME",
    "rate_steps": "STEPS",
    "client": "STACK",
    "server": "STACK",
    "units": "UNIT",
    "candidate": "SPEC",
    "baseline": "SPEC",
    "only": "TABLES",
    **dict.fromkeys(("mode", "server_mode", "window_policy"), "MODE"),
    **dict.fromkeys(("credit", "conn_credit"), "RULE"),
    "workload": "KIND",
    "preset": "NAME",
}

# An option whose value differs by command: ``kit plot --out`` is a directory.
_COMMAND_METAVARS = {("plot", "out"): "DIR"}

RUN_EXAMPLES = """Examples (every option explained: docs/reference/cli.md):

  kit run --rtt 20ms --window 4MiB --client h2     (a static 4 MiB window)

  kit run --rtt 50ms --rate 100Mbit --client grpc-go --bytes 16MiB

  kit run --workload upload --server-window 64KiB  (the server's window paces it)
"""


def apply_help(command: Any) -> Any:
    """Put each option of ``command`` (a click group) and its subcommands into its panel,
    with the metavar of what to type; flags (``--help`` too) keep no metavar."""
    for sub in getattr(command, "commands", {}).values():
        apply_help(sub)
    for param in getattr(command, "params", ()):
        if param.param_type_name == "argument":
            # its name already says what to type (FILE); no "<path>" beside it
            param.display_type_rich = _no_type
        if param.param_type_name != "option":
            continue
        if param.name in PANEL_OF:
            param.rich_help_panel = PANEL_OF[param.name]
        if getattr(param, "is_flag", False):
            param.metavar = FLAG_METAVAR
        else:
            name = (getattr(command, "name", ""), param.name)
            param.metavar = _COMMAND_METAVARS.get(name) or _METAVARS.get(param.name, "VALUE")
    _flag_help_option(command)
    return command


def _no_type(ctx: Any = None) -> None:
    return None


FLAG_METAVAR = " "  # a flag takes no value: no <bool>


def _flag_help_option(command: Any) -> None:
    """``--help`` is made when help is shown (not among ``params``): a flag like the others."""
    made = getattr(command, "get_help_option", None)
    if made is None:
        return

    def get_help_option(ctx: Any) -> Any:
        option = made(ctx)
        if option is not None:
            option.metavar = FLAG_METAVAR
            # in the last panel, not a panel of its own (a command with no panels keeps it)
            if any(getattr(p, "rich_help_panel", None) for p in command.params):
                option.rich_help_panel = OUTPUT
        return option

    command.get_help_option = get_help_option


# --- the long form: the docs' command reference ---------------------------------------------

# What each option's one-line help leaves out, by parameter name: the reference of every
# command (docs/reference/cli.md, generated by ``kit.cli.docgen``) holds both.
DETAILS: dict[str, str] = {
    "rtt": "Half of it each way unless --delay-up/--delay-down say otherwise; 1.5ms, 0.02s "
    "and 0 (loopback, still through the delay line) are accepted.",
    "rate": "The bottleneck of both directions; unlimited when omitted.",
    "jitter": "Chunks are never reordered.",
    "seed": "The same seed gives the same jitter: runs are reproducible.",
    "rate_steps": "The steps loop; either link.",
    "trace": "One line per 1500-byte delivery opportunity, in ms.",
    "direct": "The client connects straight to the server: no delay, no frame tap; --rtt 0 "
    "and no --rate or --jitter.",
    "target": "HOST:PORT of a `kit serve` already running (here or on another machine) instead "
    "of a server the kit starts; the delay line still adds --rtt (--direct to connect "
    "straight).",
    "link": "stream: the delay line, which delays and paces the byte stream (HTTP/2's windows "
    "only; no loss). packet: the kernels' TCP over an emulated IP link in network namespaces "
    "(root or user namespaces), with --loss, --queue, --mtu and --cc.",
    "loss": "Each packet lost independently: 0.1% or 0.001.",
    "loss_burst": "Gilbert-Elliott losses.",
    "queue": "At the rate, as bytes or as time at the rate (default one BDP).",
    "mtu": "Of the packet link's devices.",
    "cc": "The kernels' (default: this machine's).",
    "client": "grpcio is C-core (Python's grpc); h2 is the kit's own client on the h2 library, "
    "whose windows are exact and whose policies model other stacks; grpc-go, grpc-java, "
    "grpc-js and tonic are the real stacks, built by make from stacks/.",
    "window": "The stream window the client grants (64KiB, 4MiB). Without it the window is "
    "the client's dynamic one (BDP estimation).",
    "conn_window": "The h2 client's connection window; default: the stream window x the "
    "streams on a connection.",
    "mode": "grpcio: dynamic (C-core's BDP probe), static, or bdp-off; inferred from --window.",
    "option": "key=value, repeatable: a grpcio channel argument, or the named option of the "
    "stack (see README, per stack).",
    "connections": "The streams are spread over this many connections (default 1).",
    "credit": "When the h2 client returns stream credit: at once, after half a window, or "
    "after a quarter (grpc-go's rule, the default when dynamic).",
    "conn_credit": "The h2 client returns connection credit on receipt (default) or as the "
    "application reads.",
    "window_policy": "The h2 client's receive-window policy: grpc-go (= dynamic) and models of "
    "grpc-java's, hyper's, .NET's, quic-go's, QUICHE's and Linux's rules, a pool shared by the "
    "streams, or static (inferred from --window); the same as --mode. QUIC's rules apply to "
    "HTTP/2 here: a QUIC stream is a stream, MAX_DATA the connection window.",
    "pool": "The pool policy's receive pool per connection (default 1.6MB).",
    "max_frame_size": "The h2 client's advertised MAX_FRAME_SIZE (default 1MiB with a static "
    "window, else 16KiB).",
    "streams": "Concurrent downloads (or uploads) on the connection(s).",
    "slow_streams": "The first N streams are read by the application at --read-rate (a slow "
    "reader); the others at full speed.",
    "duration": "The timed phase of each run (default max(2s, 20 RTT)).",
    "size": "A fixed transfer per stream instead of a timed phase (e.g. 8MiB); each stream's "
    "finish time is then recorded.",
    "timeout": "The hard timeout of a run (default max(60s, 2 x the timed phase + 60 RTT)).",
    "server": "The server stack (default grpcio); the others are built by make from stacks/.",
    "server_window": "The server's static receive window: it paces uploads (64KiB, 4MiB).",
    "server_mode": "The server's window: dynamic, static or bdp-off; inferred from "
    "--server-window.",
    "keep_awake": "nice-19 busy loops keep every CPU awake while measuring: on a VM, waking "
    "an idle vCPU adds milliseconds to latencies and PING RTTs.",
    "fresh_clients": "A client process of its own for every trial (a cold JVM for each "
    "grpc-java trial) instead of one client worker per client for all of them.",
    "records": "The JSON-lines file the record is appended to; '-' prints the record on "
    "stdout instead of the table.",
    "csv": "One flat row per measurement (the --json schema, see README); '-' for stdout.",
    "full": "--json / --csv with every field, unrounded, time series included (a CSV cell "
    "may then exceed a spreadsheet's 32,767 characters).",
    "interval": "The throughput every DURATION while it runs (100ms, 1s), as iperf3 -i "
    "does; the record keeps the series and the table summarises it.",
    "units": "The throughput unit of the report: MiB/s, MB/s or Mbit/s.",
}
