"""Option types shared by the commands (one definition each, one help text each)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kit.plan.programs import SERVER_KINDS, kinds_text

RESULTS_DIR = Path("results")

Rtt = Annotated[
    str,
    typer.Option("--rtt", help="Round-trip time added by the delay line: 20ms, 1.5ms, 0.02s, 0."),
]
OptionalRtt = Annotated[
    str | None,
    typer.Option("--rtt", help="RTT of the delay line (compare: 20ms; --preset windows: 10ms)."),
]
DelayUp = Annotated[
    str | None, typer.Option("--delay-up", help="Client->server delay (overrides half of --rtt).")
]
DelayDown = Annotated[
    str | None, typer.Option("--delay-down", help="Server->client delay (overrides half of --rtt).")
]
MessageSize = Annotated[
    str | None, typer.Option("--message-size", help="gRPC message size (default 256KiB).")
]
Duration = Annotated[
    str | None, typer.Option("--duration", help="Timed phase per run (default max(2s, 20 RTT)).")
]
KeepAwake = Annotated[
    bool,
    typer.Option(
        "--keep-awake",
        help="Keep every CPU awake with nice-19 busy loops while measuring: on a VM, waking "
        "idle vCPUs adds ms to latencies and PING RTTs.",
    ),
]
FreshClients = Annotated[
    bool,
    typer.Option(
        "--fresh-clients",
        help="A client process of its own for every trial (a cold JVM for each grpc-java "
        "trial), instead of one client worker per client for all of them.",
    ),
]
TransferSize = Annotated[
    str | None,
    typer.Option("--bytes", help="Fixed transfer per stream instead of a timed one (e.g. 8MiB)."),
]
Rounds = Annotated[
    int | None,
    typer.Option("--rounds", help="Rounds; each runs every cell once, the baseline twice."),
]
Seed = Annotated[
    int | None, typer.Option("--seed", help="Seed of the per-round shuffle (default 1).")
]
Records = Annotated[
    Path | None,
    typer.Option(
        "--records", help="JSON-lines records file (default: a new results/<name>-<time>.jsonl)."
    ),
]
Resume = Annotated[
    bool,
    typer.Option(
        "--resume", help="Finish (or extend with more --rounds) the campaign in --records."
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
Markdown = Annotated[
    Path | None, typer.Option("--markdown", help="Also write the report as markdown to this file.")
]
ServerWindow = Annotated[
    str | None,
    typer.Option(
        "--server-window",
        help="The server's static receive window (it governs uploads): 64KiB, 4MiB.",
    ),
]
ServerStack = Annotated[
    str | None,
    typer.Option(
        "--server",
        help=f"The server: {kinds_text(SERVER_KINDS, 'grpcio')} (stacks/, built by make).",
    ),
]
ServerMode = Annotated[
    str | None,
    typer.Option(
        "--server-mode",
        help="Server window: dynamic | static | bdp-off; inferred from --server-window.",
    ),
]
ServerOption = Annotated[
    list[str] | None,
    typer.Option(
        "--server-option",
        help="Server option key=value (repeatable): a grpcio channel arg, or the stack's own.",
    ),
]
Rate = Annotated[
    str | None,
    typer.Option(
        "--rate", help="Bottleneck rate of both directions: 100Mbit, 1Gbit, 12.5MB/s (unlimited)."
    ),
]
RateUp = Annotated[
    str | None, typer.Option("--rate-up", help="Client->server rate (overrides --rate).")
]
RateDown = Annotated[
    str | None, typer.Option("--rate-down", help="Server->client rate (overrides --rate).")
]
Jitter = Annotated[
    str | None,
    typer.Option("--jitter", help="Uniform +-J on each chunk's delay, never reordering: 2ms."),
]
LinkSeed = Annotated[
    int | None, typer.Option("--seed", help="Seed of the jitter (default 1: reproducible).")
]
LinkKindOption = Annotated[
    str,
    typer.Option(
        "--link",
        help="stream: the delay line (HTTP/2's windows only); packet: the kernels' TCP over "
        "an emulated IP link in network namespaces (root or user namespaces), with --loss.",
    ),
]
Loss = Annotated[
    str | None,
    typer.Option("--loss", help="Packet link: independent loss per packet: 0.1%, 0.001."),
]
LossBurst = Annotated[
    str | None,
    typer.Option(
        "--loss-burst", help="Packet link: loss in bursts (Gilbert-Elliott) LOSS:MEAN_LENGTH: 1%:4."
    ),
]
Queue = Annotated[
    str | None,
    typer.Option(
        "--queue", help="Packet link: drop-tail queue at the rate: 256KiB or 20ms (default 1 BDP)."
    ),
]
Mtu = Annotated[
    int | None, typer.Option("--mtu", help="Packet link: MTU of its devices (default 1500).")
]
Congestion = Annotated[
    str | None,
    typer.Option(
        "--cc",
        help="Packet link: the kernels' congestion control: cubic, bbr, reno (default: "
        "this machine's).",
    ),
]
RateStepsOption = Annotated[
    str | None,
    typer.Option(
        "--rate-steps",
        help="Down rate changing over time, looped: 100Mbit:5s,10Mbit:5s (either link).",
    ),
]
TraceOption = Annotated[
    str | None,
    typer.Option(
        "--trace",
        help="Down rate from a mahimahi trace file (one line per 1500-byte delivery, ms).",
    ),
]
Target = Annotated[
    str | None,
    typer.Option(
        "--target",
        help="HOST:PORT of a running `kit serve` to measure instead of starting a server "
        "(the delay line still adds --rtt; --direct to connect straight).",
    ),
]
Units = Annotated[
    str, typer.Option("--units", help="Throughput unit of the report: MiB/s | MB/s | Mbit/s.")
]
Verbose = Annotated[
    bool, typer.Option("--verbose", "-v", help="Show every SETTING, increment and error line.")
]
