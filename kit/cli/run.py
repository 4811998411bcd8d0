"""``kit run`` (one measurement), ``kit proxy`` and ``kit serve`` (standalone processes).

Thin: options -> the plan builder -> the topology (or the process, in the foreground) ->
the report. ``kit.cli`` turns every ``KitError`` into one line and an exit code.
"""

from __future__ import annotations

import contextlib
import socket
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from kit.analysis.intervals import MIN_INTERVAL_MS, intervals_of
from kit.cli.export import (
    STDOUT,
    Csv,
    Full,
    NoRecords,
    check_one_stdout_format,
    check_records,
    check_units,
    csv_on_stdout,
    interactive,
    run_json_text,
    save_record,
    with_progress,
    write_csv,
)
from kit.cli.help import RUN_EXAMPLES
from kit.cli.interrupted import run_lines, timed_so_far
from kit.cli.live import live_intervals
from kit.cli.options import (
    Congestion,
    DelayDown,
    DelayUp,
    FreshClients,
    Jitter,
    KeepAwake,
    LinkKindOption,
    LinkSeed,
    Loss,
    LossBurst,
    Mtu,
    Queue,
    Rate,
    RateDown,
    RateStepsOption,
    RateUp,
    Rtt,
    ServerMode,
    ServerOption,
    ServerStack,
    ServerWindow,
    Target,
    TraceOption,
    TransferSize,
    Units,
    Verbose,
)
from kit.cli.output import echo_err, topology
from kit.delayline.relay import describe, startup_warnings
from kit.errors import Interrupted, RecordsError, UsageError
from kit.plan.builder import link_from, server_from, trial_from
from kit.plan.grpc_args import server_notes
from kit.plan.options import ClientOptions, LinkOptions, ServerOptions, WorkloadOptions
from kit.plan.processes import (
    DEFAULT_MAX_BUFFERED_BYTES,
    DEFAULT_MAX_CONNECTIONS,
    ProxyConfig,
    ServerProcess,
    is_loopback_host,
)
from kit.plan.programs import CLIENT_KINDS, kinds_text, proxy_note
from kit.plan.trial import WINDOW_POLICIES, WORKLOAD_KINDS, ServerConfig, Trial
from kit.plan.units import parse_duration_ms, parse_size_bytes, size_spec, split_host_port
from kit.report.intervals import interval_lines
from kit.report.run import run_table
from kit.results.records import Measurement, RunTags
from kit.topology.foreground import serve_line, serve_stack
from kit.topology.target import check_target
from kit.topology.topology import Topology

DEFAULT_RECORDS = Path("results/runs.jsonl")
MAX_INTERVAL_MS = 60_000.0


def run(
    rtt: Rtt = "20ms",
    window: Annotated[
        str | None,
        typer.Option(help="Static stream window; none: dynamic."),
    ] = None,
    conn_window: Annotated[
        str | None,
        typer.Option(help="Connection window (window x streams)."),
    ] = None,
    client: Annotated[
        str,
        typer.Option(help=kinds_text(CLIENT_KINDS) + "."),
    ] = "grpcio",
    mode: Annotated[
        str | None,
        typer.Option(help="dynamic | static | bdp-off."),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            "-o",
            help="Channel arg or stack option (repeatable).",
        ),
    ] = None,
    credit: Annotated[
        str | None,
        typer.Option(help="Credit threshold: immediate | half | quarter."),
    ] = None,
    conn_credit: Annotated[
        str | None,
        typer.Option(help="Connection credit back on: receipt | read."),
    ] = None,
    window_policy: Annotated[
        str | None,
        typer.Option(help=", ".join(WINDOW_POLICIES) + "."),
    ] = None,
    pool: Annotated[
        str | None,
        typer.Option(help="Receive pool per connection (1.6MB)."),
    ] = None,
    max_frame_size: Annotated[
        str | None,
        typer.Option(help="The MAX_FRAME_SIZE it advertises."),
    ] = None,
    streams: Annotated[int, typer.Option(help="Concurrent streams.")] = 1,
    slow_streams: Annotated[int, typer.Option(help="Read the first N streams at --read-rate.")] = 0,
    read_rate: Annotated[str | None, typer.Option(help="Slow streams' read rate (20Mbit).")] = None,
    connections: Annotated[int | None, typer.Option(help="Connections the streams share.")] = None,
    workload: Annotated[str, typer.Option(help=" | ".join(WORKLOAD_KINDS) + ".")] = "download",
    message_size: Annotated[str, typer.Option(help="gRPC message size.")] = "256KiB",
    duration: Annotated[str | None, typer.Option(help="Timed phase (max(2s, 20 RTT)).")] = None,
    size: TransferSize = None,
    calls: Annotated[int, typer.Option(help="Unary calls.")] = 200,
    server: ServerStack = None,
    server_window: ServerWindow = None,
    server_mode: ServerMode = None,
    server_option: ServerOption = None,
    timeout: Annotated[
        str | None,
        typer.Option(help="Hard timeout (60s or more)."),
    ] = None,
    delay_up: DelayUp = None,
    delay_down: DelayDown = None,
    rate: Rate = None,
    rate_up: RateUp = None,
    rate_down: RateDown = None,
    jitter: Jitter = None,
    seed: LinkSeed = None,
    link: LinkKindOption = "stream",
    loss: Loss = None,
    loss_burst: LossBurst = None,
    queue: Queue = None,
    mtu: Mtu = None,
    cc: Congestion = None,
    rate_steps: RateStepsOption = None,
    trace: TraceOption = None,
    direct: Annotated[
        bool, typer.Option("--direct", help="No delay line (RTT 0, no frame tap).")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object instead of the table.")
    ] = False,
    records: Annotated[
        Path,
        typer.Option(help="Append the record here ('-': stdout)."),
    ] = DEFAULT_RECORDS,
    no_records: NoRecords = False,
    csv: Csv = None,
    full: Full = False,
    interval: Annotated[
        str | None,
        typer.Option(
            metavar="DURATION",
            help="Throughput every DURATION (100ms), as iperf3 -i.",
        ),
    ] = None,
    target: Target = None,
    units: Units = "MiB/s",
    verbose: Verbose = False,
    keep_awake: KeepAwake = False,
    fresh_clients: FreshClients = False,
) -> None:
    """Run one client through a delay line to a server (ours, or --target), print the result."""
    trial = trial_from(
        replace(
            link_options(rtt, delay_up, delay_down, rate, rate_up, rate_down, jitter, seed),
            link=link,
            loss=loss,
            loss_burst=loss_burst,
            queue=queue,
            mtu=mtu,
            cc=cc,
            rate_steps=rate_steps,
            trace=trace,
        ),
        ClientOptions(
            client=client,
            window=window,
            conn_window=conn_window,
            credit=credit,
            max_frame=max_frame_size,
            connections=connections,
            mode=mode,
            window_policy=window_policy,
            conn_credit=conn_credit,
            pool=pool,
            option=tuple(option or ()),
        ),
        ServerOptions(
            kind=server,
            window=server_window,
            mode=server_mode,
            option=tuple(server_option or ()),
        ),
        WorkloadOptions(
            streams=streams,
            message_size=message_size,
            workload=workload,
            duration=duration,
            transfer=size,
            calls=calls,
            timeout=timeout,
            slow_streams=slow_streams,
            read_rate=read_rate,
        ),
    )
    if trial.link.kind == "packet" and (direct or target is not None):
        raise UsageError(
            "--link packet: the packet link runs the server itself, in a network namespace of "
            "its own; it takes no --target and no --direct"
        )
    if direct and (trial.link.rtt_ms > 0 or trial.link.limited or trial.link.jitter_ms):
        raise UsageError(
            "--direct: without the delay line the link is loopback's; "
            "use --rtt 0 and no --rate or --jitter"
        )
    check_units(units)
    interval_ms = check_interval(interval, trial, direct)
    keep = None if no_records else records
    check_one_stdout_format(csv, as_json, keep)
    check_records(keep)
    server_at = target_address(target, trial)
    plain = keep != STDOUT and not csv_on_stdout(csv) and not as_json
    topo_of = topology(
        direct=direct,
        target=server_at,
        keep_awake=keep_awake,
        live_count=not direct,  # a run cut short still says what it delivered
        fresh_clients=fresh_clients,
    )
    with topo_of as topo, timed_so_far(topo) as so_far:
        try:
            measurement = _measured(topo, trial, interval_ms, units)
        except Interrupted as stopped:  # the record says it was cut short, then we stop
            record = topo.interrupted(trial, stopped.signal_name, RunTags(command="run"))
            for line in run_lines(record, so_far.delivered(), keep is not None, units):
                echo_err(line)
            save_record(keep, record)  # "record appended to ..."
            raise
    if interval_ms:
        measurement = replace(measurement, meta=replace(measurement.meta, interval_ms=interval_ms))
    unsaved = _saved(keep, measurement)
    write_csv(csv, [measurement], full)
    if keep != STDOUT and not csv_on_stdout(csv):
        table = run_table(measurement, verbose=verbose, unit=units)
        if plain and interval_ms:  # the record's intervals, which the table summarises
            for line in interval_lines(intervals_of(measurement), interval_ms, units):
                typer.echo(line)
        typer.echo(run_json_text(measurement, full) if as_json else table)
    if unsaved is not None:  # the result is out; now say where it could not go
        raise RecordsError(f"{unsaved}; the result above is not in it")
    if not measurement.ok:
        raise typer.Exit(4)


def _measured(topo: Topology, trial: Trial, interval_ms: float, unit: str) -> Measurement:
    """The measurement, with a progress bar, or the live interval lines (on stderr: the
    record's are printed after it)."""
    tags = RunTags(command="run")
    if not interval_ms:
        return with_progress(trial, lambda: topo.measure(trial, tags=tags))
    with live_intervals(topo, interval_ms, unit, interactive(), echo_err):
        return topo.measure(trial, tags=tags)


def check_interval(interval: str | None, trial: Trial, direct: bool) -> float:
    """``--interval`` in ms (0: none); the delay line counts what it delivers downstream."""
    if interval is None:
        return 0.0
    ms = parse_duration_ms(interval, option="--interval")
    if direct or trial.workload.kind == "upload" or trial.link.kind == "packet":
        why = (
            "--direct has no delay line"
            if direct
            else "uploads go upstream"
            if trial.link.kind != "packet"
            else "the packet link keeps no live count"
        )
        raise UsageError(f"--interval: the delay line counts the bytes it delivers down; {why}")
    if not MIN_INTERVAL_MS <= ms <= MAX_INTERVAL_MS:
        raise UsageError(
            f"--interval: {interval!r} is outside {MIN_INTERVAL_MS:g}ms..{MAX_INTERVAL_MS / 1000:g}s"
        )
    return ms


def _saved(keep: Path | None, measurement: Measurement) -> RecordsError | None:
    """Append the record; a write that fails (a full disk) must not lose the result, which
    is printed first: the failure is returned, for the caller to raise after printing."""
    try:
        save_record(keep, measurement)
    except RecordsError as exc:
        return exc
    return None


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
    check_target(host, port)
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
    rate: Rate = None,
    rate_up: RateUp = None,
    rate_down: RateDown = None,
    jitter: Jitter = None,
    seed: LinkSeed = None,
    max_connections: Annotated[
        int, typer.Option(help="Connections open at once; more are refused (and counted).")
    ] = DEFAULT_MAX_CONNECTIONS,
    max_buffered_bytes: Annotated[
        str, typer.Option(help="Bytes held in all delay queues together; at it, reading pauses.")
    ] = size_spec(DEFAULT_MAX_BUFFERED_BYTES),
    control: Annotated[
        str | None,
        typer.Option(
            help="HOST:PORT (loopback) of an HTTP JSON API to read and change the link while "
            "it runs: GET/POST /link."
        ),
    ] = None,
) -> None:
    """Run a standalone delay line (with frame tap) until Ctrl-C."""
    link = link_from(
        link_options(rtt, delay_up, delay_down, rate, rate_up, rate_down, jitter, seed)
    )
    listen_host, listen_port = split_host_port(listen, "--listen")
    upstream_host, upstream_port = split_host_port(upstream, "--upstream")
    config = ProxyConfig(
        listen_host=listen_host,
        listen_port=listen_port,
        upstream_host=upstream_host,
        upstream_port=upstream_port,
        link=link,
        tap_path=None if tap_file is None else str(tap_file),
        max_connections=max_connections,
        max_buffered_bytes=parse_size_bytes(max_buffered_bytes, option="--max-buffered-bytes"),
    )
    for line in startup_warnings(config):
        typer.echo(line)
    note = proxy_note()
    if note is not None:
        echo_err(f"kit: {note}")
    address = None if control is None else split_host_port(control, "--control")
    serve_line(
        config,
        lambda port: typer.echo(describe(config, port)),
        control=address,
        announce=typer.echo,
    )


def link_options(
    rtt: str,
    delay_up: str | None,
    delay_down: str | None,
    rate: str | None,
    rate_up: str | None,
    rate_down: str | None,
    jitter: str | None,
    seed: int | None,
) -> LinkOptions:
    """The link flags ``kit run`` and ``kit proxy`` share, as one record."""
    return LinkOptions(
        rtt=rtt,
        delay_up=delay_up,
        delay_down=delay_down,
        rate=rate,
        rate_up=rate_up,
        rate_down=rate_down,
        jitter=jitter,
        jitter_seed=seed,
    )


def serve(
    listen: Annotated[str, typer.Option(help="HOST:PORT to listen on.")] = "127.0.0.1:50051",
    server: ServerStack = None,
    server_window: ServerWindow = None,
    server_mode: ServerMode = None,
    server_option: ServerOption = None,
    window: Annotated[
        str | None, typer.Option(help="Same as --server-window (kept for older scripts).")
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="Same as --server-option.")
    ] = None,
) -> None:
    """Serve the kit's Throughput service until Ctrl-C; prints the address for --target."""
    host, port = split_host_port(listen, "--listen")
    if window is not None and server_window is not None:
        raise UsageError("--window: give --server-window or --window, not both")
    config = server_from(
        ServerOptions(
            kind=server,
            window=server_window if server_window is not None else window,
            mode=server_mode,
            option=(*(server_option or []), *(option or [])),
        )
    )
    notes = server_notes(config)
    process = ServerProcess(config=config, listen_host=host, listen_port=port)
    if not process.is_loopback:
        typer.echo(
            f"WARNING: the server listens on {process.listen_host}, which is NOT a loopback "
            "address: anyone who can reach this host can connect to it."
        )
    label = config.label if config.kind == "grpcio" else f"{config.kind} {config.label}"
    serve_stack(
        process,
        lambda port: typer.echo("\n".join([serve_banner(host, port, label), *notes])),
    )


def serve_banner(host: str, port: int, label: str = "") -> str:
    """Where the server listens, and the address to give a kit on another machine."""
    what = f"the kit's Throughput service, {label}" if label else "the kit's Throughput service"
    lines = [f"serving on {host}:{port} ({what})"]
    if is_loopback_host(host):
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
    app.command(epilog=RUN_EXAMPLES)(run)
    app.command()(proxy)
    app.command()(serve)
