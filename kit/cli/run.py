"""``kit run`` (one measurement), ``kit proxy`` and ``kit serve`` (standalone processes).

Thin: options -> the plan builder -> the topology (or the process, in the foreground) ->
the report. ``kit.cli`` turns every ``KitError`` into one line and an exit code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from kit.cli.options import DelayDown, DelayUp, Rtt
from kit.cli.output import topology
from kit.delayline.relay import run_proxy_blocking
from kit.errors import Interrupted, UsageError
from kit.plan.builder import cli_flag, client_from, link_from, server_from, workload_from
from kit.plan.grpc_args import parse_option
from kit.plan.processes import (
    DEFAULT_MAX_BUFFERED_BYTES,
    DEFAULT_MAX_CONNECTIONS,
    ProxyConfig,
    ServerProcess,
)
from kit.plan.trial import Trial
from kit.plan.units import parse_size_bytes, size_spec, split_host_port
from kit.report.run import run_json, run_table
from kit.results.records import RunTags
from kit.results.store import append_record
from servers.grpcio_server import serve_until_signal, startup_warnings

DEFAULT_RECORDS = Path("results/runs.jsonl")


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
    credit: Annotated[
        str | None, typer.Option(help="h2 credit policy: immediate (default) | half.")
    ] = None,
    max_frame_size: Annotated[
        str | None, typer.Option(help="h2 client's advertised MAX_FRAME_SIZE (default 1MiB).")
    ] = None,
    streams: Annotated[int, typer.Option(help="Concurrent downloads.")] = 1,
    connections: Annotated[
        int | None, typer.Option(help="Spread the streams over this many connections (default 1).")
    ] = None,
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
    items = [
        ("window", window),
        ("conn-window", conn_window),
        ("mode", mode),
        ("credit", credit),
        ("max-frame", max_frame_size),
        ("connections", connections),
    ]
    channel_options = [parse_option(o) for o in option or []]
    settings = {
        "rtt": rtt,
        "delay-up": delay_up,
        "delay-down": delay_down,
        "workload": workload,
        "streams": streams,
        "message-size": message_size,
        "duration": duration,
        "bytes": size,
        "calls": calls,
        "timeout": timeout,
        "server-window": server_window,
    }
    trial = Trial(
        link=link_from(settings, cli_flag),
        client=client_from(
            client, [(k, v) for k, v in items if v is not None], cli_flag, channel_options
        ),
        server=server_from(settings, cli_flag),
        workload=workload_from(settings, cli_flag),
    )
    if direct and trial.link.rtt_ms > 0:
        raise UsageError("--direct: without the delay line the RTT is loopback's; use --rtt 0")
    with topology(direct=direct) as topo:
        try:
            measurement = topo.measure(trial, tags=RunTags(command="run"))
        except Interrupted as stopped:  # the record says it was cut short, then we stop
            append_record(
                records, topo.interrupted(trial, stopped.signal_name, RunTags(command="run"))
            )
            raise
    append_record(records, measurement)
    typer.echo(json.dumps(run_json(measurement), indent=2) if as_json else run_table(measurement))
    if not measurement.ok:
        raise typer.Exit(4)


def proxy(
    listen: Annotated[
        str, typer.Option(help="HOST:PORT to listen on (loopback unless you say otherwise).")
    ] = "127.0.0.1:7000",
    upstream: Annotated[str, typer.Option(help="HOST:PORT of the server.")] = "127.0.0.1:50051",
    rtt: Rtt = "20ms",
    delay_up: DelayUp = None,
    delay_down: DelayDown = None,
    tap_file: Annotated[Path | None, typer.Option(help="Append frame-tap JSON lines here.")] = None,
    max_connections: Annotated[
        int, typer.Option(help="Connections open at once; more are refused (and counted).")
    ] = DEFAULT_MAX_CONNECTIONS,
    max_buffered_bytes: Annotated[
        str, typer.Option(help="Bytes held in all delay queues together; at it, reading pauses.")
    ] = size_spec(DEFAULT_MAX_BUFFERED_BYTES),
) -> None:
    """Run a standalone delay line (with frame tap) until Ctrl-C."""
    link = link_from({"rtt": rtt, "delay-up": delay_up, "delay-down": delay_down}, cli_flag)
    listen_host, listen_port = split_host_port(listen, "--listen")
    upstream_host, upstream_port = split_host_port(upstream, "--upstream")
    config = ProxyConfig(
        listen_host=listen_host,
        listen_port=listen_port,
        upstream_host=upstream_host,
        upstream_port=upstream_port,
        delay_up_ms=link.delay_up_ms,
        delay_down_ms=link.delay_down_ms,
        tap_path=None if tap_file is None else str(tap_file),
        max_connections=max_connections,
        max_buffered_bytes=parse_size_bytes(max_buffered_bytes, option="--max-buffered-bytes"),
    )
    run_proxy_blocking(config, announce=typer.echo)


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
    host, port = split_host_port(listen, "--listen")
    config = server_from(
        {"server-window": window, "server-option": option or []},
        lambda key: "--" + {"server-window": "window", "server-option": "option"}.get(key, key),
    )
    process = ServerProcess(config=config, listen_host=host, listen_port=port)
    for line in startup_warnings(process):
        typer.echo(line)
    serve_until_signal(
        process,
        announce=lambda line: typer.echo(f"serving on {host}:{json.loads(line)['port']}"),
    )


def register(app: typer.Typer) -> None:
    app.command()(run)
    app.command()(proxy)
    app.command()(serve)
