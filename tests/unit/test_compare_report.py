"""kit.analysis.compare / knee / matrix and their renderers: records -> verdicts - pure."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

import pytest

from kit.analysis.compare import CompareMeta, build_report
from kit.analysis.knee import KneePoint, Sweep, find_knee, knee_points
from kit.analysis.matrix import matrix_groups
from kit.errors import UsageError
from kit.plan.presets import BOTH, DEFAULTS, STREAM_ONLY
from kit.plan.trial import Trial
from kit.plan.units import MIB
from kit.report.compare import render_markdown, render_text, report_json
from kit.report.knee import knee_answer, knee_json, knee_sentence, render_knee, window_setting
from kit.report.matrix import matrix_findings
from kit.results.client import ClientResult
from kit.results.records import Measurement, ProcessCpu, RunTags

BASE = "baseline"


def _tags(key: str, rnd: int, copy: int) -> RunTags:
    return RunTags(campaign="t", key=key, round=rnd, copy=copy, control=key == BASE)


def record(key: str, rnd: int, value: float | None, copy: int = 0, cpu: float = 0.3) -> Measurement:
    """A run as the campaign tags it; ``value`` MiB/s over 1 s, None = a failed run."""
    tags = _tags(key, rnd, copy)
    if value is None:
        return Measurement(trial=Trial(), status="failed", error="client timed out", tags=tags)
    result = ClientResult(client="h2", bytes=int(value * MIB), elapsed_s=1.0)
    cpu_rows = (ProcessCpu("client", cpu),)
    return Measurement(
        trial=Trial(), status="ok", result=result, cpu=cpu_rows, theory_mib_s=100.0, tags=tags
    )


def latency_record(key: str, rnd: int, ms: float, copy: int = 0) -> Measurement:
    result = ClientResult(
        client="grpcio", messages=3, elapsed_s=1.0, latencies_ms=(ms - 0.1, ms, ms + 5)
    )
    return Measurement(trial=Trial(), status="ok", result=result, tags=_tags(key, rnd, copy))


def campaign(
    base_pairs: Sequence[tuple[float, float]], **cells: Sequence[float | None]
) -> list[Measurement]:
    out = []
    for rnd, (a, b) in enumerate(base_pairs):
        out += [record(BASE, rnd, a, 0), record(BASE, rnd, b, 1)]
    for key, values in cells.items():
        out += [record(key, rnd, v) for rnd, v in enumerate(values)]
    return out


def meta(*keys: str, metric: str = "throughput") -> CompareMeta:
    specs = {BASE: "grpcio", **{k: f"spec-{k}" for k in keys}}
    return CompareMeta("t", BASE, (BASE, *keys), specs, metric, rounds=3, setup="RTT 10 ms")  # type: ignore[arg-type]


STEADY = [(100.0, 101.0), (99.0, 100.0), (100.0, 102.0)]  # floor ~3%


def test_clear_gain_is_faster_and_the_floor_comes_from_the_copies() -> None:
    report = build_report(meta("fast"), campaign(STEADY, fast=[150.0, 152.0, 149.0]))
    assert report.floor is not None
    assert report.floor.floor_pct == pytest.approx(3.0, abs=0.01)  # (102 - 99) / 100
    row = report.row("fast")
    assert row.label == "faster" and row.change_pct == pytest.approx(50.0)
    assert row.verdict.startswith("+50.0% faster")
    base = report.row(BASE)
    assert base.runs_ok == 6 and base.summary is not None and base.summary.median == 100.0


def test_identical_values_are_within_noise_without_a_bare_percentage() -> None:
    report = build_report(meta("same"), campaign(STEADY, same=[100.0, 101.0, 99.5]))
    row = report.row("same")
    assert row.label == "within noise"
    assert row.verdict.startswith("within noise")
    assert row.change_pct == 0.0  # median 100 against the control's median 100
    text = render_text(report)
    line = next(x for x in text.splitlines() if x.startswith("same"))
    # the ratio beside its interval, and no percentage at all for a change within noise
    assert "1.00 [" in line and "within noise" in line and "%" not in line
    assert "(+0.0%)" in render_markdown(report)  # the markdown's change column: in parentheses


def test_slower_and_change_above_floor_but_an_interval_reaching_it() -> None:
    cells = {"slow": [50.0, 51.0, 50.5], "wobbly": [90.0, 130.0, 150.0]}
    report = build_report(meta("slow", "wobbly"), campaign(STEADY, **cells))
    assert report.row("slow").label == "slower"
    wobbly = report.row("wobbly")
    # +30% clears the 3% floor, but its interval reaches back into it: not decided, and
    # more rounds could decide it: it says how many.
    assert wobbly.label == "not decided" and wobbly.ci is not None and wobbly.ci.low < 1.03
    assert wobbly.needs is not None and wobbly.needs > 3
    assert wobbly.verdict.startswith(f"not decided (needs {wobbly.needs} rounds")
    assert report.undecided() == {"wobbly": wobbly.needs}
    text = render_text(report)
    shown = next(line for line in _table_lines(text) if "not decided" in line).split("  ")[0]
    why = f"not decided: {shown}: its interval reaches into 1 ± the noise floor; needs"
    assert f"{why} {wobbly.needs} rounds" in " ".join(text.split())


def test_no_rounds_warning_for_a_change_below_the_floor() -> None:
    report = build_report(meta("same"), campaign(STEADY, same=[100.0, 100.5, 99.0]))
    assert report.row("same").warnings == ()


def test_latency_lower_is_faster() -> None:
    runs = []
    for rnd in range(3):
        runs += [latency_record(BASE, rnd, 10.0, 0), latency_record(BASE, rnd, 10.2, 1)]
        runs.append(latency_record("quick", rnd, 5.0))
    report = build_report(meta("quick", metric="latency"), runs)
    row = report.row("quick")
    assert row.label == "faster" and row.change_pct is not None and row.change_pct < -40
    assert "ms (p50 per run)" in render_text(report)


def test_failed_runs_are_counted_and_named() -> None:
    report = build_report(
        meta("flaky", "dead"), campaign(STEADY, flaky=[150.0, None, 151.0], dead=[None, None, None])
    )
    flaky = report.row("flaky")
    assert (flaky.runs_ok, flaky.runs_failed, flaky.label) == (2, 1, "faster")
    assert any("client timed out" in w for w in flaky.warnings)
    assert report.row("dead").verdict == "no result (every run failed)"


def test_without_two_control_copies_there_is_no_verdict() -> None:
    runs = [record(BASE, 0, 100.0), record("x", 0, 150.0)]
    report = build_report(meta("x"), runs)
    assert report.floor is None
    assert report.row("x").verdict == "no verdict (no noise floor)"
    assert any("no noise floor" in w for w in report.warnings)
    assert any("only 1 round" in w for w in report.warnings)


def test_loud_floor_and_cpu_bound_runs_are_flagged() -> None:
    runs = campaign([(100.0, 130.0), (90.0, 100.0), (100.0, 100.0)], x=[100.0, 100.0, 100.0])
    runs.append(record("hot", 0, 100.0, cpu=0.99))
    report = build_report(meta("x", "hot"), runs)
    assert any("noise floor is ±" in w for w in report.warnings)
    assert any("CPU-bound" in w for w in report.warnings)
    assert report.row("hot").cpu_bound_roles == ("client",)


def test_markdown_and_json_forms() -> None:
    report = build_report(meta("fast"), campaign(STEADY, fast=[150.0, 152.0, 149.0]))
    md = render_markdown(report)
    assert md.startswith("### t") and "| fast" in md and "noise floor ±3.0%" in md
    data = json.loads(json.dumps(report_json(report)))
    assert data["noise_floor"]["floor_pct"] == pytest.approx(3.0, abs=0.01)
    fast = next(r for r in data["rows"] if r["name"] == "fast")
    assert fast["label"] == "faster" and fast["median"] == pytest.approx(150.0)
    assert data["rows"][0]["name"] == BASE and data["rows"][0]["change_pct"] is None


def test_a_pipe_in_a_candidate_name_stays_inside_its_markdown_cell() -> None:
    report = build_report(meta("a|b"), campaign(STEADY, **{"a|b": [150.0, 152.0, 149.0]}))
    table = [line for line in render_markdown(report).splitlines() if line.startswith("|")]
    header_cells = table[0].count("|")
    assert all(line.replace("\\|", "").count("|") == header_cells for line in table)
    assert "a\\|b" in render_markdown(report)


# --- knee ---------------------------------------------------------------------------------


def point(window: int, median: float, cpu_bound: bool = False) -> KneePoint:
    return KneePoint(window, median, median * 0.98, median * 1.02, None, cpu_bound)


def test_knee_is_the_smallest_window_at_90_percent_of_the_best() -> None:
    knee = find_knee(
        [point(4, 380.0), point(1, 100.0), point(2, 200.0), point(8, 400.0), point(16, 395.0)]
    )
    assert knee.best.window_bytes == 8 and knee.knee.window_bytes == 4
    assert [p.window_bytes for p in knee.points] == [1, 2, 4, 8, 16]


def test_knee_says_when_the_best_is_cpu_bound() -> None:
    knee = find_knee([point(1, 50.0), point(2, 90.0, cpu_bound=True)])
    assert "CPU-bound" in knee_sentence(knee, "stream window")
    assert "CPU-bound" not in knee_sentence(find_knee([point(1, 50.0), point(2, 90.0)]), "w")


def test_knee_errors() -> None:
    with pytest.raises(UsageError, match="no window"):
        find_knee([])
    with pytest.raises(UsageError, match="fraction"):
        find_knee([point(1, 1.0)], fraction=0.0)


def test_knee_from_a_report() -> None:
    runs = campaign(STEADY, **{"64KiB": [25.0, 26.0, 25.0], "1MiB": [95.0, 97.0, 96.0]})
    report = build_report(meta("64KiB", "1MiB"), runs)
    windows = {BASE: 4 << 20, "64KiB": 64 << 10, "1MiB": 1 << 20}
    sweep = Sweep(report, find_knee(knee_points(report, windows)), windows, "stream window", 0.0)
    text = render_knee(sweep)
    assert "1 MiB <- knee" in text
    assert knee_json(sweep)["knee_window_bytes"] == 1 << 20
    assert "answer: at 0 ms: a 1 MiB window reaches 90%" in text
    assert knee_json(sweep)["answer"].startswith("answer:")


KIB = 1 << 10


def answer(points: Sequence[KneePoint], client: str = "h2", rate: float | None = None) -> str:
    """The answer sentence of a sweep at 20 ms (the report is only carried, not read)."""
    runs = campaign(STEADY, **{"64KiB": [25.0, 26.0, 25.0]})
    report = build_report(meta("64KiB"), runs)
    knee = find_knee(points, ceiling=rate)
    return knee_answer(Sweep(report, knee, {}, "stream window", 20.0, client, rate, 1.5))


def test_the_answer_names_the_window_its_share_and_what_to_type() -> None:
    text = answer([point(256 * KIB, 5.0), point(512 * KIB, 10.8), point(MIB, 11.0)], rate=11.92)
    assert text == (
        "answer: at 20 ms on 100 Mbit/s: a 512 KiB window reaches 90% of the best it measured "
        "(10.8 of 11.0 MiB/s); type: --window 512KiB --conn-window 512KiB (the kit's h2 client)"
    )


def test_the_answer_reaches_for_the_link_rate_when_it_is_below_the_best() -> None:
    # a burst above the rate (queue drain) must not raise the bar beyond the link
    text = answer([point(KIB, 5.0), point(2 * KIB, 9.5), point(4 * KIB, 12.0)], rate=10.0)
    assert "a 2 KiB window reaches 90% of the link rate (9.50 of 10.0 MiB/s)" in text


@pytest.mark.parametrize(
    ("client", "typed"),
    [
        ("grpcio", '("grpc.http2.lookahead_bytes", 524288)'),
        ("grpc-go", "grpc.WithStaticStreamWindowSize(524288)"),
        ("grpc-java", "NettyChannelBuilder.flowControlWindow(524288)"),
        ("grpc-js", "{'grpc-node.flow_control_window': 524288}"),
        ("tonic", "Endpoint::initial_stream_window_size(524288)"),
        ("h2", "--window 512KiB --conn-window 512KiB"),
    ],
)
def test_the_setting_to_type_is_the_clients_own(client: str, typed: str) -> None:
    assert typed in window_setting(client, 512 * KIB, 512 * KIB)
    assert f"type: {window_setting(client, 512 * KIB, 512 * KIB)}" in answer(
        [point(512 * KIB, 10.0), point(MIB, 10.5)], client
    )


def test_the_connection_window_to_type_is_the_clients_rule_for_n_streams() -> None:
    assert "WithStaticConnWindowSize(2097152)" in window_setting("grpc-go", 512 * KIB, 2 * MIB)
    assert "initial_connection_window_size(2097152)" in window_setting("tonic", 512 * KIB, 2 * MIB)


def test_the_answer_says_raise_max_window_when_the_top_still_grows() -> None:
    text = answer([point(KIB, 2.0), point(2 * KIB, 4.0), point(4 * KIB, 8.0)])
    assert text.splitlines()[1] == (
        "the throughput still grows at the largest window tried: raise --max-window to "
        "16 KiB (about 3 s more)"
    )
    calm = answer([point(KIB, 2.0), point(2 * KIB, 8.0), point(4 * KIB, 8.1)])
    assert len(calm.splitlines()) == 1


def test_the_answer_says_when_the_client_is_cpu_bound() -> None:
    text = answer([point(KIB, 2.0), point(2 * KIB, 7.5), point(4 * KIB, 8.0, cpu_bound=True)])
    assert text.splitlines()[1] == (
        "the client is CPU-bound at 8.00 MiB/s: a window beyond 2 KiB does not help"
    )
    assert "raise --max-window" not in text


def test_a_top_at_the_link_rate_is_the_links_not_the_machines() -> None:
    queued = KneePoint(2, 9.8, 9.7, 9.9, None, False, ping_rtt_ms=45.0)
    text = knee_sentence(find_knee([point(1, 5.0), queued]), "w", rtt_ms=20.0, rate_mib_s=10.0)
    assert "the link, not the window, binds" in text
    assert "PINGs" not in text and "raise --max-window" not in text
    assert "raise --max-window" not in answer([point(1, 5.0), queued], rate=10.0)


def test_matrix_findings_name_ratio_and_verdict() -> None:
    runs = campaign(STEADY, **{BOTH: [400.0, 410.0, 405.0], STREAM_ONLY: [100.0, 99.0, 101.0]})
    report = build_report(meta(BOTH, STREAM_ONLY), runs)
    text = matrix_findings(matrix_groups([(32, report)]))
    assert "32 concurrent download(s)" in text
    assert f"both raised: x4.05 of {DEFAULTS} - +305.0% faster" in text
    assert "stream window raised alone: x1.00" in text and "within noise" in text


def test_knee_flags_queued_pings_and_a_knee_at_the_top_of_the_ladder() -> None:
    queued = KneePoint(2, 90.0, 88.0, 92.0, None, False, ping_rtt_ms=45.0)
    knee = find_knee([point(1, 50.0), queued])
    text = knee_sentence(knee, "connection window", rtt_ms=20.0)
    assert "PINGs at 45 ms against 20 ms" in text
    assert "may lie beyond" in text
    calm = find_knee([point(1, 95.0), KneePoint(2, 100.0, 99.0, 101.0, None, False, 21.0)])
    assert "PINGs" not in knee_sentence(calm, "w", rtt_ms=20.0)
    assert "may lie beyond" not in knee_sentence(calm, "w", rtt_ms=20.0)


# --- the terminal's tables never wrap a row ------------------------------------------------


def _table_lines(text: str) -> list[str]:
    """The table: its header line, its rule and the rows up to the first note."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("----"))
    end = next(
        i
        for i, line in enumerate(lines[start:], start)
        if line.startswith(("noise", "CPU", "[", "x best", "not decided"))
    )
    return lines[start - 1 : end]


LONG = (
    "h2:window=4MiB,conn-window=16MiB,credit=quarter",
    "grpcio:grpc.http2.lookahead_bytes=4194304,grpc.http2.bdp_probe=0",
)


def _cpu_bound(records: list[Measurement], key: str) -> list[Measurement]:
    hot = (ProcessCpu("client", 0.97), ProcessCpu("server", 0.95))
    return [dataclasses.replace(m, cpu=hot) if m.tags.key == key else m for m in records]


def test_long_candidate_names_are_cut_and_keyed_so_every_row_is_one_line() -> None:
    cells = {LONG[0]: [150.0, 152.0, 149.0], LONG[1]: [90.0, 130.0, 150.0], "same": [100.0] * 3}
    runs = _cpu_bound(campaign(STEADY, **cells), LONG[1])
    report = build_report(meta(*cells), runs)
    text = render_text(report)
    table = _table_lines(text)
    assert len(table) == 2 + len(report.rows)  # header, rule, one line per candidate
    assert all(len(line) <= 100 for line in text.splitlines())
    # the cut names are keyed, their whole names under the table
    assert "[1] " + LONG[0] in text and "[2] " + LONG[1] in text
    assert any("… [2]" in line for line in table)
    assert "same (spec-same)" in table[-1]  # a name that fits stays whole
    assert f"CPU-bound: {table[4].split('  ')[0]}: 3/3 (client, server)" in text
    # the undecided row says so in the table, and why under it, with the rounds it needs
    assert "not decided" in table[4] and "% floor" not in "\n".join(table)
    assert f"not decided: {table[4].split('  ')[0]}: its interval reaches into" in text


def test_knee_rows_are_one_line_even_within_noise_and_cpu_bound() -> None:
    values = {"64KiB": [25.0, 26.0, 25.0], "256KiB": [60.0, 95.0, 70.0], "1MiB": [95.0, 70.0, 97.0]}
    runs = _cpu_bound(campaign(STEADY, **values), "1MiB")
    report = build_report(meta(*values), runs)
    windows = {BASE: 4 << 20, "64KiB": 64 << 10, "256KiB": 256 << 10, "1MiB": 1 << 20}
    sweep = Sweep(report, find_knee(knee_points(report, windows)), windows, "stream window", 20.0)
    text = render_knee(sweep)
    table = _table_lines(text)
    assert len(table) == 2 + len(windows)
    assert all(len(line) <= 100 for line in text.splitlines())
    assert "CPU-bound: 1 MiB: 3/3 (client, server)" in text
