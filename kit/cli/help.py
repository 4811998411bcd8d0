"""``--help`` a person can use: every command's options in panels (link, workload, client,
server, output), metavars that say what to type, and an examples epilogue.

One table for every command, applied to the click commands typer builds, so that a new
option lands in a panel by its name and the commands' signatures stay about parsing.
"""

from __future__ import annotations

from typing import Any

LINK, WORKLOAD, CLIENT, SERVER, OUTPUT = "Link", "Workload", "Client", "Server", "Output"

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
        "direct",
        "target",
        "listen",
        "upstream",
        "link",
        "loss",
        "loss_burst",
        "queue",
        "mtu",
        "cc",
        "rate_steps",
        "trace",
        "max_connections",
        "max_buffered_bytes",
        "tap_file",
    ),
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
        "min_window",
        "max_window",
        "baseline",
        "candidate",
        "file",
        "preset",
        "quick",
        "only",
        "resume",
        "keep_awake",
        "fresh_clients",
    ),
    CLIENT: (
        "client",
        "window",
        "conn_window",
        "mode",
        "option",
        "credit",
        "conn_credit",
        "window_policy",
        "pool",
        "max_frame_size",
        "connections",
    ),
    SERVER: ("server", "server_window", "server_mode", "server_option"),
    OUTPUT: (
        "as_json",
        "records",
        "no_records",
        "csv",
        "units",
        "verbose",
        "markdown",
        "out",
        "interval",
        "full",
        "all_runs",
    ),
}
PANEL_OF = {name: panel for panel, names in _PANELS.items() for name in names}

_METAVARS: dict[str, str] = {
    **dict.fromkeys(("rtt", "delay_up", "delay_down", "jitter", "duration", "timeout"), "DURATION"),
    "interval": "DURATION",
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
    **dict.fromkeys(("records", "csv", "markdown", "out", "file", "tap_file", "trace"), "FILE"),
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

RUN_EXAMPLES = """Examples:

  kit run --rtt 20ms --window 4MiB --client h2      a static 4 MiB window at 20 ms

  kit run --rtt 50ms --rate 100Mbit --client grpc-go --bytes 16MiB

  kit run --workload upload --server-window 64KiB   the server's window paces uploads
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
        return option

    command.get_help_option = get_help_option
