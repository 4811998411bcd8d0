"""The ``kit`` command: thin typer commands that parse options, build a plan, call the engine.

Only this module prints and turns ``KitError`` into a one-line message and an exit code.
Larger command groups live in ``kit/cli_*.py`` modules that register themselves here.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Annotated, NoReturn

import typer

from kit.errors import Interrupted, KitError, UsageError
from kit.grpc_options import parse_option
from kit.plan import ClientConfig, Link, ServerConfig, Trial, Workload
from kit.units import parse_duration_ms, parse_size_bytes, parse_window_bytes

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Measure how HTTP/2 flow-control windows and RTT bound gRPC throughput.",
)

DEFAULT_RECORDS = Path("results/runs.jsonl")


def echo_err(message: str) -> None:
    typer.echo(message, err=True)


def write_text(path: Path, text: str, option: str) -> None:
    """Write an output file the user named; failures are one-line errors naming the option."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{option}: cannot write {path}: {exc.strerror or exc}") from None


def parse_link(rtt: str, delay_up: str | None, delay_down: str | None) -> Link:
    """--rtt splits evenly; --delay-up / --delay-down override one direction each."""
    half = parse_duration_ms(rtt, option="--rtt") / 2
    up = parse_duration_ms(delay_up, option="--delay-up") if delay_up is not None else half
    down = parse_duration_ms(delay_down, option="--delay-down") if delay_down is not None else half
    return Link(delay_up_ms=up, delay_down_ms=down)


def parse_client(
    client: str,
    window: str | None,
    conn_window: str | None,
    mode: str | None,
    options: list[str],
    credit: str = "immediate",
    max_frame_size: str = "1MiB",
    connections: int = 1,
) -> ClientConfig:
    window_bytes = parse_window_bytes(window, option="--window") if window is not None else None
    conn_bytes = (
        parse_window_bytes(conn_window, option="--conn-window") if conn_window is not None else None
    )
    chosen = mode or ("static" if window_bytes is not None else "dynamic")
    if chosen != "static" and window_bytes is not None:
        raise UsageError(
            f"--window: mode {chosen!r} does not take a window (drop --mode or --window)"
        )
    if client == "h2" and chosen == "dynamic" and conn_bytes is not None:
        raise UsageError("--conn-window: the dynamic h2 client grows its connection window itself")
    return ClientConfig(
        kind=client,  # type: ignore[arg-type]
        window_mode=chosen,  # type: ignore[arg-type]
        window_bytes=window_bytes,
        conn_window_bytes=conn_bytes,
        credit_policy=credit,  # type: ignore[arg-type]
        max_frame_bytes=parse_size_bytes(max_frame_size, option="--max-frame-size"),
        channel_options=tuple(parse_option(o) for o in options),
        connections=connections,
    )


def parse_workload(
    workload: str,
    streams: int,
    message_size: str,
    duration: str | None,
    size: str | None,
    calls: int,
    timeout: str,
) -> Workload:
    duration_s = (
        parse_duration_ms(duration, option="--duration") / 1000 if duration is not None else None
    )
    return Workload(
        kind=workload,  # type: ignore[arg-type]
        streams=streams,
        message_bytes=parse_size_bytes(message_size, option="--message-size"),
        duration_s=duration_s,
        bytes_per_stream=parse_size_bytes(size, option="--bytes") if size is not None else None,
        calls=calls,
        timeout_s=parse_duration_ms(timeout, option="--timeout") / 1000,
    )


def parse_server(server_window: str | None) -> ServerConfig:
    if server_window is None:
        return ServerConfig()
    return ServerConfig(
        window_mode="static",
        window_bytes=parse_window_bytes(server_window, option="--server-window"),
    )


Rtt = Annotated[
    str,
    typer.Option("--rtt", help="Round-trip time added by the delay line: 20ms, 1.5ms, 0.02s, 0."),
]
DelayUp = Annotated[
    str | None, typer.Option("--delay-up", help="Client->server delay (overrides half of --rtt).")
]
DelayDown = Annotated[
    str | None, typer.Option("--delay-down", help="Server->client delay (overrides half of --rtt).")
]


@app.command()
def run(
    rtt: Rtt = "20ms",
    window: Annotated[
        str | None,
        typer.Option(help="Static stream window (64KiB, 4MiB); omit for a dynamic window."),
    ] = None,
    conn_window: Annotated[
        str | None,
        typer.Option(help="Static connection window (h2 client only); default window x streams."),
    ] = None,
    client: Annotated[
        str, typer.Option(help="grpcio (C-core) or h2 (ours: exact windows).")
    ] = "grpcio",
    mode: Annotated[
        str | None,
        typer.Option(help="dynamic | static | bdp-off (grpcio); inferred from --window."),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="grpcio channel arg key=value (repeatable)."),
    ] = None,
    credit: Annotated[str, typer.Option(help="h2 credit policy: immediate | half.")] = "immediate",
    max_frame_size: Annotated[
        str, typer.Option(help="h2 client's advertised MAX_FRAME_SIZE.")
    ] = "1MiB",
    streams: Annotated[int, typer.Option(help="Concurrent downloads.")] = 1,
    connections: Annotated[
        int, typer.Option(help="Spread the streams over this many connections.")
    ] = 1,
    workload: Annotated[str, typer.Option(help="download | unary | upload.")] = "download",
    message_size: Annotated[str, typer.Option(help="gRPC message size.")] = "256KiB",
    duration: Annotated[
        str | None, typer.Option(help="Timed phase (default max(2s, 20 RTT)).")
    ] = None,
    size: Annotated[
        str | None,
        typer.Option(
            "--bytes", help="Fixed transfer per stream instead of a timed one (e.g. 8MiB)."
        ),
    ] = None,
    calls: Annotated[int, typer.Option(help="Unary calls (workload unary).")] = 200,
    server_window: Annotated[
        str | None, typer.Option(help="Static receive window of the server (uploads).")
    ] = None,
    timeout: Annotated[str, typer.Option(help="Hard timeout of the measurement.")] = "60s",
    delay_up: DelayUp = None,
    delay_down: DelayDown = None,
    direct: Annotated[
        bool, typer.Option(help="Skip the delay line (no tap; RTT must be 0).")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object instead of a table.")
    ] = False,
    records: Annotated[
        Path, typer.Option(help="Append the record to this JSON-lines file.")
    ] = DEFAULT_RECORDS,
) -> None:
    """Start a server and a delay line on loopback, run one client through them, print the result."""
    from kit.records import append_record
    from kit.report.run import run_json, run_table
    from kit.topology import Topology

    trial = Trial(
        link=parse_link(rtt, delay_up, delay_down),
        client=parse_client(
            client, window, conn_window, mode, option or [], credit, max_frame_size, connections
        ),
        server=parse_server(server_window),
        workload=parse_workload(workload, streams, message_size, duration, size, calls, timeout),
    )
    if direct and trial.link.rtt_ms > 0:
        raise UsageError("--direct: without the delay line the RTT is loopback's; use --rtt 0")
    with Topology(direct=direct) as topo:
        measurement = topo.measure(trial, tags={"command": "run"})
    append_record(records, measurement)
    typer.echo(json.dumps(run_json(measurement), indent=2) if as_json else run_table(measurement))
    if not measurement.ok:
        raise typer.Exit(4)


@app.command()
def proxy(
    listen: Annotated[
        str, typer.Option(help="HOST:PORT to listen on (loopback unless you say otherwise).")
    ] = "127.0.0.1:7000",
    upstream: Annotated[str, typer.Option(help="HOST:PORT of the server.")] = "127.0.0.1:50051",
    rtt: Rtt = "20ms",
    delay_up: DelayUp = None,
    delay_down: DelayDown = None,
    tap_file: Annotated[Path | None, typer.Option(help="Append frame-tap JSON lines here.")] = None,
) -> None:
    """Run a standalone delay line (with frame tap) until Ctrl-C."""
    from kit.delayline.__main__ import parse_args
    from kit.delayline.relay import run_proxy_blocking

    link = parse_link(rtt, delay_up, delay_down)
    argv = [
        "--listen",
        listen,
        "--upstream",
        upstream,
        "--delay-up-ms",
        repr(link.delay_up_ms),
        "--delay-down-ms",
        repr(link.delay_down_ms),
    ]
    if tap_file is not None:
        argv += ["--tap-file", str(tap_file)]
    run_proxy_blocking(parse_args(argv), announce=typer.echo)


@app.command()
def serve(
    listen: Annotated[str, typer.Option(help="HOST:PORT to listen on.")] = "127.0.0.1:50051",
    window: Annotated[
        str | None, typer.Option(help="Static receive window (uploads); omit for dynamic.")
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="grpcio server arg key=value.")
    ] = None,
) -> None:
    """Run the standalone grpcio server until Ctrl-C."""
    from servers.grpcio_server import serve_until_signal

    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"--listen: {listen!r} is not HOST:PORT")
    base = parse_server(window)
    config = ServerConfig(
        base.window_mode, base.window_bytes, tuple(parse_option(o) for o in option or [])
    )
    serve_until_signal(
        config,
        host,
        int(port),
        announce=lambda line: typer.echo(f"serving on {host}:{json.loads(line)['port']}"),
    )


def _register_extensions() -> None:
    """Command groups that live in their own modules (tables, compare, ...)."""
    import importlib

    for name in ("kit.cli_tables", "kit.cli_compare"):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(app)


def _on_signal(signum: int, frame: FrameType | None) -> NoReturn:
    raise Interrupted(signum)  # unwinds through every `with Topology()`: children stop


def main(argv: list[str] | None = None) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_signal)
    _register_extensions()
    try:
        app(args=argv)
    except KeyboardInterrupt:
        echo_err("kit: interrupted; every process the kit started was stopped")
        sys.exit(130)
    except Interrupted as exc:
        echo_err(f"kit: {exc}")
        sys.exit(exc.exit_code)
    except KitError as exc:
        echo_err(f"kit: error: {exc}")
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
