"""``kit compare`` and ``kit knee``: thin commands over compare plans and the campaign runner.

Each comparison is one campaign (seeded interleaved rounds, baseline as duplicate
control, records appended as made); its report is a pure function of those records.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from kit.analysis.compare import CompareMeta, CompareReport, build_report, no_result_rows
from kit.analysis.knee import analyse_sweep
from kit.analysis.matrix import matrix_groups
from kit.campaign.runner import UntilDecided, campaign_records, check_resumable, run_campaigns
from kit.cli.documents import check_document_paths, html_of_records, json_of_records
from kit.cli.export import (
    Csv,
    campaign_progress,
    check_one_stdout_format,
    check_records,
    check_units,
    csv_on_stdout,
    write_csv,
)
from kit.cli.interrupted import partial_header, resume_command, shell_lines, typed_args
from kit.cli.options import (
    RESULTS_DIR,
    AsJson,
    DelayDown,
    DelayUp,
    Duration,
    FreshClients,
    Html,
    Jitter,
    KeepAwake,
    Markdown,
    MessageSize,
    OptionalRtt,
    Rate,
    RateDown,
    RateUp,
    Records,
    Resume,
    Rounds,
    Seed,
    Target,
    TransferSize,
    Units,
)
from kit.cli.output import topology, write_text
from kit.cli.until import MaxRounds, TimeLimit, UntilDecidedFlag, until_of
from kit.errors import Interrupted, MeasurementError, UsageError
from kit.plan.builder import parse_candidate
from kit.plan.campaign import expected_campaign_s
from kit.plan.compare import ComparePlan, PlanFile, load_plan_file, plan_from_settings
from kit.plan.options import PlanOptions, Source, overlay
from kit.plan.presets import knee_from, presets_from
from kit.plan.programs import CLIENT_KINDS, kinds_text
from kit.plan.units import parse_window_bytes, split_host_port
from kit.report.compare import render_markdown, render_text, until_lines
from kit.report.knee import knee_markdown, render_knee
from kit.report.matrix import matrix_findings
from kit.topology.target import check_target

Rtt = OptionalRtt

COMPARE_EXAMPLES = """Examples:

  kit compare --rtt 20ms --streams 4 --candidate "grpcio:grpc.http2.bdp_probe=0"
  --candidate "h2:window=4MiB,conn-window=16MiB,credit=half,max-frame=1MiB,connections=8"

  kit compare --file examples/compare.toml --rounds 7 --markdown review.md

  kit compare --preset windows            (the window matrix at 10 ms, h2 client)
"""
KNEE_EXAMPLES = "Example: kit knee --rtt 20ms --streams 32 --max-window 64MiB"
# Plan-file settings `kit compare` has no flag for: its errors name them as the file does.
FILE_ONLY = Source(spec_fields=frozenset({"timeout", "jitter_seed"}))


def register(app: typer.Typer) -> None:
    app.command("compare", epilog=COMPARE_EXAMPLES)(compare)
    app.command("knee", epilog=KNEE_EXAMPLES)(knee)


def compare(
    ctx: typer.Context,
    rtt: Rtt = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline", help="Baseline spec (default grpcio); runs as duplicate control."
        ),
    ] = None,
    candidate: Annotated[
        list[str] | None,
        typer.Option(
            "--candidate",
            "-c",
            help="Candidate spec, e.g. 'h2:window=4MiB,conn-window=16MiB' (repeatable).",
        ),
    ] = None,
    streams: Annotated[
        int | None,
        typer.Option("--streams", help="Concurrent downloads on one channel (default 1)."),
    ] = None,
    message_size: MessageSize = None,
    workload: Annotated[
        str | None,
        typer.Option("--workload", help="download, upload (throughput) | unary (latency)."),
    ] = None,
    duration: Duration = None,
    size: TransferSize = None,
    calls: Annotated[
        int | None, typer.Option("--calls", help="Unary calls per run (default 200).")
    ] = None,
    delay_up: DelayUp = None,
    delay_down: DelayDown = None,
    rate: Rate = None,
    rate_up: RateUp = None,
    rate_down: RateDown = None,
    jitter: Jitter = None,
    rounds: Rounds = None,
    seed: Seed = None,
    records: Records = None,
    resume: Resume = False,
    as_json: AsJson = False,
    markdown: Markdown = None,
    html: Html = None,
    file: Annotated[
        Path | None,
        typer.Option("--file", help="TOML plan file (see examples/compare.toml)."),
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option("--preset", help="A ready-made comparison: windows (the window matrix)."),
    ] = None,
    csv: Csv = None,
    target: Target = None,
    units: Units = "MiB/s",
    keep_awake: KeepAwake = False,
    fresh_clients: FreshClients = False,
    until_decided: UntilDecidedFlag = False,
    max_rounds: MaxRounds = None,
    time_limit: TimeLimit = None,
) -> None:
    """Is each candidate faster than the baseline beyond noise, on the link you describe?"""
    settings = PlanOptions(
        rtt=rtt,
        delay_up=delay_up,
        delay_down=delay_down,
        rate=rate,
        rate_up=rate_up,
        rate_down=rate_down,
        jitter=jitter,
        streams=streams,
        message_size=message_size,
        workload=workload,
        duration=duration,
        transfer=size,
        calls=calls,
        rounds=rounds,
        seed=seed,
        source=FILE_ONLY,
    )
    if preset is not None:
        plans = _preset_plans(preset, settings, baseline, candidate, file)
    else:
        plans = (_user_plan(settings, baseline, candidate or [], file),)
    check_units(units)
    check_one_stdout_format(csv, as_json)
    check_document_paths(html, None, csv, as_json)
    until = until_of(plans, until_decided, max_rounds, time_limit)
    server_at = None if target is None else split_host_port(target, "--target")
    if server_at is not None:
        check_target(*server_at)
    path = _records_path(records, resume, plans[0].title)
    stopped = Stopped(
        resume_command(ctx.command_path, typed_args(ctx), path), units, plain_stdout(csv, as_json)
    )
    reports = _run_plans(
        plans, path, resume, csv, server_at, keep_awake, fresh_clients, stopped=stopped, until=until
    )
    _emit(reports, path, as_json, markdown, findings=preset is not None, unit=units, csv=csv)
    if html is not None:
        html_of_records(html, path, [p.campaign_name for p in plans])
    _fail_without_result(reports, path)


def _user_plan(
    settings: PlanOptions, baseline: str | None, candidates: list[str], file: Path | None
) -> ComparePlan:
    plan_file = load_plan_file(file) if file is not None else PlanFile()
    merged = overlay(plan_file.settings, settings)
    base = (
        parse_candidate(baseline) if baseline else plan_file.baseline or parse_candidate("grpcio")
    )
    cands = (*plan_file.candidates, *(parse_candidate(c) for c in candidates))
    title = file.stem if file is not None else "compare"
    return plan_from_settings(merged, base, cands, title=title)


def _preset_plans(
    preset: str,
    settings: PlanOptions,
    baseline: str | None,
    candidates: list[str] | None,
    file: Path | None,
) -> tuple[ComparePlan, ...]:
    given = [
        name
        for name, value in (
            ("--baseline", baseline),
            ("--candidate", candidates),
            ("--file", file),
            ("--streams", settings.streams),
            ("--workload", settings.workload),
            ("--rate", settings.rate),
            ("--rate-up", settings.rate_up),
            ("--rate-down", settings.rate_down),
            ("--jitter", settings.jitter),
            ("--bytes", settings.transfer),
        )
        if value not in (None, [], ())
    ]
    if given:
        raise UsageError(
            f"--preset: {', '.join(given)} cannot be combined with a preset "
            "(it defines its own cells)"
        )
    if settings.delay_up is not None or settings.delay_down is not None:
        raise UsageError("--preset: use --rtt (the matrix uses a symmetric link)")
    return presets_from(preset, settings)


def _records_path(records: Path | None, resume: bool, name: str) -> Path:
    if records is not None:
        return records
    if resume:
        raise UsageError("--resume: name the records file to resume with --records")
    return RESULTS_DIR / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"


@dataclass(frozen=True)
class Stopped:
    """What a campaign cut short prints: the command that finishes it, the unit of its
    partial table, and whether that table goes to stdout (else stderr: stdout carries JSON
    or CSV)."""

    resume: str
    unit: str = "MiB/s"
    stdout: bool = True


def plain_stdout(csv: Path | None, as_json: bool) -> bool:
    return not as_json and not csv_on_stdout(csv)


def _run_plans(
    plans: Sequence[ComparePlan],
    path: Path,
    resume: bool,
    csv: Path | None = None,
    target: tuple[str, int] | None = None,
    keep_awake: bool = False,
    fresh_clients: bool = False,
    stopped: Stopped | None = None,
    until: UntilDecided | None = None,
) -> list[tuple[ComparePlan, CompareReport]]:
    started = time.monotonic()  # --time-limit counts from here
    specs = [p.campaign() for p in plans]
    if resume:
        check_resumable(specs, path)
    check_records(path)
    typer.echo(f"records: {path}", err=True)
    interrupted: Interrupted | None = None
    with campaign_progress() as progress:
        try:
            outcome = run_campaigns(
                specs,
                path,
                resume=resume,
                progress=progress,
                topology_factory=lambda: topology(
                    target=target, keep_awake=keep_awake, fresh_clients=fresh_clients
                ),
                until=until,
                started=started,
            )
        except Interrupted as exc:  # every process is stopped; the records are on disk
            interrupted = exc
    if interrupted is not None:
        if stopped is not None:
            _print_partial(plans, path, interrupted.signal_name, stopped)
        raise interrupted
    typer.echo(f"done in {outcome.elapsed_s:.0f} s; records: {path}", err=True)
    if outcome.until is not None:  # what stayed open is also in each report's notes
        titles = {p.campaign_name: p.title for p in plans}
        typer.echo("\n".join(until_lines(outcome.until, titles)), err=True)
    write_csv(csv, outcome.measurements)
    out = []
    for plan in plans:
        mine = [m for m in outcome.measurements if m.tags.campaign == plan.campaign_name]
        out.append((plan, build_report(CompareMeta.of(plan), mine)))
    return out


def _print_partial(
    plans: Sequence[ComparePlan], path: Path, signal_name: str, stopped: Stopped
) -> None:
    """The table of the rounds run so far, marked partial, and the command that finishes
    the campaign (the records on disk are what a ``--resume`` keeps)."""
    measured = campaign_records(path, [p.campaign_name for p in plans])
    planned = sum(len(p.campaign().schedule()) for p in plans)
    tables = []
    for plan in plans:
        mine = [m for m in measured if m.tags.campaign == plan.campaign_name]
        if mine:
            tables.append(render_text(build_report(CompareMeta.of(plan), mine), stopped.unit))
    lines = [partial_header(len(measured), planned, signal_name), *tables]
    lines.append(f"the records are kept; finish the campaign with:\n{shell_lines(stopped.resume)}")
    typer.echo("\n\n".join(lines), err=not stopped.stdout)


def _fail_without_result(reports: list[tuple[ComparePlan, CompareReport]], path: Path) -> None:
    """A cell none of whose runs succeeded leaves the comparison without it: exit 4, after
    the report (which says so) is out."""
    failed = [repr(row.key) for _, report in reports for row in no_result_rows(report)]
    if failed:
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        raise MeasurementError(
            f"every run of {', '.join(failed[:3])}{more} failed: the comparison has no result "
            f"there; the runs and their errors are in {path}"
        )


def _emit(
    reports: list[tuple[ComparePlan, CompareReport]],
    path: Path,
    as_json: bool,
    markdown: Path | None,
    findings: bool,
    unit: str = "MiB/s",
    csv: Path | None = None,
) -> None:
    texts = [render_text(r, unit) for _, r in reports]
    summary = _findings(reports) if findings else ""
    if as_json:  # never with --csv - (check_one_stdout_format)
        campaigns = [p.campaign_name for p, _ in reports]
        json_of_records(path, campaigns, findings=summary or None)
    elif not csv_on_stdout(csv):
        typer.echo("\n\n".join([*texts, *([summary] if summary else [])]))
    if markdown is not None:
        md = "\n".join(render_markdown(r) for _, r in reports)
        write_text(markdown, md + (f"\n```\n{summary}\n```\n" if summary else ""), "--markdown")


def _findings(reports: list[tuple[ComparePlan, CompareReport]]) -> str:
    return matrix_findings(matrix_groups([(p.workload.streams, r) for p, r in reports]))


def knee(
    ctx: typer.Context,
    rtt: Annotated[str, typer.Option("--rtt", help="RTT of the delay line.")] = "20ms",
    streams: Annotated[
        int,
        typer.Option("--streams", help="N for the N-stream sweep (1 = only the 1-stream sweep)."),
    ] = 8,
    min_window: Annotated[
        str, typer.Option("--min-window", help="Smallest window of the sweep.")
    ] = "64KiB",
    max_window: Annotated[
        str, typer.Option("--max-window", help="Largest window (the control).")
    ] = "32MiB",
    message_size: MessageSize = None,
    duration: Duration = None,
    size: TransferSize = None,
    rate: Rate = None,
    rate_up: RateUp = None,
    rate_down: RateDown = None,
    jitter: Jitter = None,
    rounds: Annotated[int, typer.Option("--rounds", help="Rounds per sweep.")] = 3,
    client: Annotated[
        str,
        typer.Option(
            "--client",
            help="Whose static windows: " + kinds_text(CLIENT_KINDS, "h2") + ".",
        ),
    ] = "h2",
    seed: Seed = None,
    records: Records = None,
    resume: Resume = False,
    as_json: AsJson = False,
    markdown: Markdown = None,
    html: Html = None,
    csv: Csv = None,
    fresh_clients: FreshClients = False,
    until_decided: UntilDecidedFlag = False,
    max_rounds: MaxRounds = None,
    time_limit: TimeLimit = None,
) -> None:
    """Sweep static windows; the smallest reaching >= 90% of the best, for 1 and N streams."""
    plans = knee_from(
        PlanOptions(
            rtt=rtt,
            rate=rate,
            rate_up=rate_up,
            rate_down=rate_down,
            jitter=jitter,
            message_size=message_size,
            duration=duration,
            transfer=size,
            rounds=rounds,
            seed=seed,
        ),
        streams=streams,
        min_window=parse_window_bytes(min_window, option="--min-window"),
        max_window=parse_window_bytes(max_window, option="--max-window"),
        client=client,
    )
    check_one_stdout_format(csv, as_json)
    check_document_paths(html, None, csv, as_json)
    until = until_of(plans, until_decided, max_rounds, time_limit, knee=True)
    path = _records_path(records, resume, "knee")
    expected = sum(expected_campaign_s(p.campaign()) for p in plans)
    cells = sum(len(p.cells()) for p in plans)
    typer.echo(
        f"expected: about {expected:.0f} s ({cells} windows, {plans[0].rounds} "
        "round(s), the largest window twice a round as the control)",
        err=True,
    )
    stopped = Stopped(
        resume_command(ctx.command_path, typed_args(ctx), path), "MiB/s", plain_stdout(csv, as_json)
    )
    reports = _run_plans(
        plans, path, resume, csv, fresh_clients=fresh_clients, stopped=stopped, until=until
    )
    sweeps = [analyse_sweep(p, r) for p, r in reports]
    campaigns = [p.campaign_name for p in plans]
    if as_json:  # never with --csv - (check_one_stdout_format)
        json_of_records(path, campaigns)
    elif not csv_on_stdout(csv):
        typer.echo("\n\n".join(render_knee(s) for s in sweeps))
    if markdown is not None:
        write_text(markdown, "\n".join(knee_markdown(s) for s in sweeps), "--markdown")
    if html is not None:
        html_of_records(html, path, campaigns)
    _fail_without_result(reports, path)
