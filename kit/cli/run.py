"""``kit run`` (one measurement), ``kit proxy`` and ``kit serve`` (standalone processes).

Thin: options -> the plan builder -> the topology (or the process, in the foreground) ->
the report. ``kit.cli`` turns every ``KitError`` into one line and an exit code.
"""

from __future__ import annotations

import contextlib
import json
import socket
from pathlib import Path
from typing import Annotated

import typer

from kit.cli.export import (
    STDOUT,
    Csv,
    NoRecords,
    check_units,
    run_json_text,
    save_record,
    with_progress,
    write_csv,
)
from kit.cli.options import DelayDown, DelayUp, Rtt, Target, Units, Verbose
from kit.cli.output import topology
from kit.delayline.relay import run_proxy_blocking
from kit.errors import UsageError
from kit.plan.builder import cli_flag, client_from, link_from, server_from, workload_from
from kit.plan.grpc_args import parse_option
from kit.plan.processes import ProxyConfig, ServerProcess
from kit.plan.trial import ServerConfig, Trial
from kit.plan.units import split_host_port
from kit.report.run import run_table
from kit.results.records import RunTags
from servers.grpcio_server import serve_until_signal

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
        Path,
        typer.Option(help="Append the record to this JSON-lines file ('-': stdout, no table)."),
    ] = DEFAULT_RECORDS,
    no_records: NoRecords = False,
    csv: Csv = None,
    target: Target = None,
    units: Units = "MiB/s",
    verbose: Verbose = False,
) -> None:
    """Run one client through a delay line to a server (ours, or --target), print the result."""
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
    check_units(units)
    server_at = target_address(target, trial)
    with topology(direct=direct, target=server_at) as topo:
        measurement = with_progress(trial, lambda: topo.measure(trial, tags=RunTags(command="run")))
    save_record(None if no_records else records, measurement)
    write_csv(csv, [measurement])
    if records != STDOUT or no_records:
        table = run_table(measurement, verbose=verbose, unit=units)
        typer.echo(run_json_text(measurement) if as_json else table)
    if not measurement.ok:
        raise typer.Exit(4)


def target_address(target: str | None, trial: Trial) -> tuple[str, int] | None:
    """``--target HOST:PORT`` checked: a server the kit does not start takes no server config."""
    if target is None:
        return None
    if trial.server != ServerConfig():
        raise UsageError(
            "--server-window: the target server's window is set where it runs (kit serve --window)"
        )
    host, port = split_host_port(target, "--target")
    if port == 0:
        raise UsageError(f"--target: {target!r} needs the server's port (kit serve prints it)")
    return host, port


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
    """Serve the kit's Throughput service until Ctrl-C; prints the address for --target."""
    host, port = split_host_port(listen, "--listen")
    config = server_from(
        {"server-window": window, "server-option": option or []},
        lambda key: "--" + {"server-window": "window", "server-option": "option"}.get(key, key),
    )
    serve_until_signal(
        ServerProcess(config=config, listen_host=host, listen_port=port),
        announce=lambda line: typer.echo(serve_banner(host, int(json.loads(line)["port"]))),
    )


def serve_banner(host: str, port: int) -> str:
    """Where the server listens, and the address to give a kit on another machine."""
    lines = [f"serving on {host}:{port} (the kit's Throughput service)"]
    if host in ("127.0.0.1", "localhost", "::1"):
        lines.append("loopback only: --listen 0.0.0.0:PORT to serve other machines")
        lines.append(f"measure it with: kit run --target {host}:{port} --rtt 20ms")
    else:
        reachable = outward_address() if host in ("0.0.0.0", "::", "") else host
        lines.append(f"on the other machine: kit run --target {reachable}:{port} --rtt 0")
    return "\n".join(lines)


def outward_address() -> str:
    """This machine's address on its default route (no packet is sent), else its name."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 1))
        return str(probe.getsockname()[0])
    return socket.gethostname()


def register(app: typer.Typer) -> None:
    app.command()(run)
    app.command()(proxy)
    app.command()(serve)
