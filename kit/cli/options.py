"""Option types shared by the commands (one definition each, one help text each)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kit.plan.programs import SERVER_KINDS, kinds_text

RESULTS_DIR = Path("results")

Rtt = Annotated[
    str,
    typer.Option("--rtt", help="RTT the delay line adds (20ms, 0)."),
]
OptionalRtt = Annotated[
    str | None,
    typer.Option("--rtt", help="RTT of the delay line (compare: 20ms; --preset windows: 10ms)."),
]
DelayUp = Annotated[
    str | None, typer.Option("--delay-up", help="Client->server delay (not half the RTT).")
]
DelayDown = Annotated[
    str | None, typer.Option("--delay-down", help="Server->client delay (not half the RTT).")
]
MessageSize = Annotated[
    str | None, typer.Option("--message-size", help="gRPC message size (default 256KiB).")
]
Duration = Annotated[
    str | None, typer.Option("--duration", help="Timed phase per run (max(2s, 20 RTT)).")
]
KeepAwake = Annotated[
    bool,
    typer.Option(
        "--keep-awake",
        help="Busy loops keep idle vCPUs awake (VMs).",
    ),
]
FreshClients = Annotated[
    bool,
    typer.Option(
        "--fresh-clients",
        help="A client process per trial (cold JVMs).",
    ),
]
TransferSize = Annotated[
    str | None,
    typer.Option("--bytes", help="Fixed transfer per stream (8MiB), not timed."),
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
Html = Annotated[
    Path | None,
    typer.Option("--html", help="Also write the report as one self-contained HTML file."),
]
Markdown = Annotated[
    Path | None, typer.Option("--markdown", help="Also write the report as markdown to this file.")
]
ServerWindow = Annotated[
    str | None,
    typer.Option(
        "--server-window",
        help="Server's static window (it paces uploads).",
    ),
]
ServerStack = Annotated[
    str | None,
    typer.Option(
        "--server",
        help=kinds_text(SERVER_KINDS, "grpcio") + ".",
    ),
]
ServerMode = Annotated[
    str | None,
    typer.Option(
        "--server-mode",
        help="dynamic | static | bdp-off.",
    ),
]
ServerOption = Annotated[
    list[str] | None,
    typer.Option(
        "--server-option",
        help="Channel arg or stack option (repeatable).",
    ),
]
Rate = Annotated[
    str | None,
    typer.Option("--rate", help="Rate both ways (100Mbit, 12.5MB/s)."),
]
RateUp = Annotated[str | None, typer.Option("--rate-up", help="Client->server rate (not --rate).")]
RateDown = Annotated[
    str | None, typer.Option("--rate-down", help="Server->client rate (not --rate).")
]
Jitter = Annotated[
    str | None,
    typer.Option("--jitter", help="Uniform +-J on each chunk's delay (2ms)."),
]
LinkSeed = Annotated[int | None, typer.Option("--seed", help="Seed of the jitter (default 1).")]
LinkKindOption = Annotated[
    str,
    typer.Option(
        "--link",
        help="stream (delay line) | packet (kernel TCP).",
    ),
]
Loss = Annotated[
    str | None,
    typer.Option("--loss", help="Loss per packet (0.1%)."),
]
LossBurst = Annotated[
    str | None,
    typer.Option("--loss-burst", help="Loss in bursts, LOSS:MEAN_LENGTH (1%:4)."),
]
Queue = Annotated[
    str | None,
    typer.Option("--queue", help="Drop-tail queue (256KiB, 20ms; 1 BDP)."),
]
Mtu = Annotated[int | None, typer.Option("--mtu", help="MTU (default 1500).")]
Congestion = Annotated[
    str | None,
    typer.Option(
        "--cc",
        help="Congestion control: cubic | bbr | reno.",
    ),
]
RateStepsOption = Annotated[
    str | None,
    typer.Option(
        "--rate-steps",
        help="Down rates in turn (100Mbit:5s,1Mbit:5s).",
    ),
]
TraceOption = Annotated[
    str | None,
    typer.Option(
        "--trace",
        help="Down rate from a mahimahi trace file.",
    ),
]
Target = Annotated[
    str | None,
    typer.Option(
        "--target",
        help="A running `kit serve` to measure.",
    ),
]
Units = Annotated[str, typer.Option("--units", help="MiB/s | MB/s | Mbit/s.")]
Verbose = Annotated[
    bool, typer.Option("--verbose", "-v", help="Every SETTING, increment and error line.")
]
