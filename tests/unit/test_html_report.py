"""``kit report --html``'s page (``kit.report.html``), read as text: one self-contained file
whose every record-made text is escaped, each figure right after what it illustrates with
its description as its text, each verdict line, the machine, and the raw numbers collapsed.
The browser's view of the same pages: ``tests/integration/test_html_report_e2e.py``."""

from __future__ import annotations

import dataclasses
import html
import re
import struct
import zlib
from collections.abc import Iterable
from pathlib import Path

import pytest

from kit.analysis.compare import CompareMeta, build_report
from kit.analysis.findings import findings
from kit.analysis.limits import limit_of
from kit.analysis.provenance import provenance
from kit.report.document import scan_records
from kit.report.figures import describe
from kit.report.findings import render_findings
from kit.report.html import (
    CSP,
    CSS,
    figure_description,
    figures_of,
    html_chunks,
    png_size,
    text_html,
)
from kit.report.limits import limit_sentence
from kit.results.records import Measurement
from kit.results.store import Record, read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _png(width: int, height: int) -> bytes:
    """A real, tiny PNG of that size (one grey pixel row repeated)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + (chunk(b"IEND", b""))
    )


def _page(records: Iterable[Record], name: str = "records.jsonl") -> tuple[str, list[str]]:
    kept = list(records)
    scan = scan_records(kept, figures=True)
    specs = describe(scan.plots)
    figures = figures_of(specs, {s.name: _png(90, 50) for s in specs})
    text = "".join(html_chunks(scan, lambda: iter(kept), name, figures))
    return text, [s.name for s in specs]


def _records(name: str) -> list[Record]:
    read = read_records(FIXTURES / name)
    return [*read.tables_plans, *read.measurements, *read.sessions]


def test_a_png_says_its_size() -> None:
    assert png_size(_png(900, 500)) == (900, 500)
    assert png_size(b"not a png") == (0, 0)


@pytest.mark.parametrize(
    "name",
    [
        "release-0.1/tables.jsonl",
        "release-0.1/compare.jsonl",
        "knee/grpc-go.jsonl",
        "runs/verdicts.jsonl",
        "tables-quick/policies.jsonl",
    ],
)
def test_the_page_is_self_contained_and_places_every_figure_once(name: str) -> None:
    text, figures = _page(_records(name), name)
    assert text.startswith("<!DOCTYPE html>") and text.endswith("</html>\n")
    assert f'content="{html.escape(CSP)}"' in text and f"<style>{CSS}</style>" in text
    assert "<script" not in text.lower() and "<link" not in text.lower()
    assert not re.search(r"""(src|href)=["'](?!data:image/png;base64,|#)""", text)
    assert figures
    for figure in figures:
        assert text.count(f'<figure id="{figure.removesuffix(".png").replace(".", "-")}') == 1
    assert text.count("<img ") == len(figures)
    ids = re.findall(r' id="([^"]+)"', text)
    assert len(ids) == len(set(ids))


def test_each_figure_follows_the_table_it_illustrates() -> None:
    text, _ = _page(_records("release-0.1/tables.jsonl"))
    order = [m.group(1) for m in re.finditer(r'<(?:section|figure) id="([^"]+)"', text)]
    assert (
        order.index("throughput-vs-window-png")
        == order.index("table-1-window-vs-rtt-one-stream-256-kib-messages") + 1
    )
    wire = next(i for i, s in enumerate(order) if s.startswith("table-2-"))
    assert order.index("window-growth-png") == wire + 1
    starvation = next(i for i, s in enumerate(order) if s.startswith("table-3-"))
    assert order.index("stream-finish-png") == starvation + 1


def test_a_figures_text_is_its_description() -> None:
    read = read_records(FIXTURES / "knee" / "grpc-go.jsonl")
    text, _ = _page(read.measurements)
    for spec in describe(scan_records(read.measurements, figures=True).plots):
        description = figure_description(spec)
        assert f'alt="{html.escape(description)}"' in text
        for panel in spec.panels:
            assert " ".join(panel.title.split()) in description
            assert all(entry in description for entry in panel.legend)


def test_every_text_from_a_record_is_escaped() -> None:
    read = read_records(FIXTURES / "release-0.1" / "compare.jsonl")
    hostile = '<img src=x onerror="alert(1)">'
    changed = [
        dataclasses.replace(
            m,
            trial=dataclasses.replace(m.trial, label=hostile + m.trial.label),
            meta=dataclasses.replace(m.meta, host="<b>host</b>"),
        )
        for m in read.measurements
    ]
    text, _ = _page(changed, name="<i>records</i>.jsonl")
    assert "<img src=x" not in text and "<b>host" not in text and "<i>records" not in text
    assert html.escape(hostile, quote=False) in text or html.escape(hostile) in text
    assert "&lt;b&gt;host&lt;/b&gt;" in text


def test_each_runs_verdict_line_is_on_the_page() -> None:
    read = read_records(FIXTURES / "runs" / "verdicts.jsonl")
    text, _ = _page(read.measurements)
    for m in read.measurements:
        if m.ok:
            sentence = html.escape(limit_sentence(limit_of(m)))
            assert f'<p class="verdict">{sentence}</p>' in text


def test_each_comparisons_verdicts_are_on_the_page() -> None:
    read = read_records(FIXTURES / "release-0.1" / "compare.jsonl")
    text, _ = _page(read.measurements)
    report = build_report(CompareMeta.of_records(read.measurements), read.measurements)
    for row in report.rows:
        assert row.limit is not None
        assert html.escape(limit_sentence(row.limit)) in text
        assert html.escape(row.verdict) in text


def test_each_tables_cell_says_what_limited_it() -> None:
    text, _ = _page(_records("tables-quick/stacks.jsonl"))
    assert text.count("What limited each cell (its median run)") == 1
    assert "table8-windows rtt20ms-h2-static-64KiB: Limited by" in text


def test_the_machine_and_every_stack_are_named() -> None:
    measurements = [r for r in _records("tables-quick/stacks.jsonl") if isinstance(r, Measurement)]
    text, _ = _page(measurements)
    method = text[text.index('id="method-and-machine"') : text.index('id="raw-numbers"')]
    stacks = {s for m in measurements for s in (m.meta.client_stack, m.meta.server_stack) if s}
    assert len(stacks) >= 5 and all(html.escape(s) in method for s in stacks)
    assert "<dt>CPUs</dt><dd>2</dd>" in method


def test_the_raw_numbers_hold_a_row_per_measurement_collapsed() -> None:
    records = _records("tables-quick/loss.jsonl")
    text, _ = _page(records)
    raw = text[text.index('id="raw-numbers"') :]
    count = sum(isinstance(r, Measurement) for r in records)
    assert raw.count("<tr>") == count + 1  # the header, a row each
    assert "<details><summary>" in raw and f"{count} measurement(s)" in raw


def test_a_text_block_keeps_its_lines_items_and_wrapped_lines() -> None:
    text = "What:\n- a b\n  c\n- d\nnote one\n  cont\n- <e>"
    assert text_html(text) == (
        "<p>What:</p><ul><li>a b c</li><li>d</li></ul><p>note one cont</p>"
        "<ul><li>&lt;e&gt;</li></ul>"
    )


def test_the_summary_says_what_the_lone_runs_show_together() -> None:
    measurements = read_records(FIXTURES / "runs" / "make-run.jsonl").measurements
    text, _ = _page(measurements)
    summary = text[text.index('id="summary"') : text.index('id="runs-4"')]
    said = render_findings(findings(measurements))
    assert text_html(said) in summary
    assert f"{len(measurements)} measurements: {len(measurements)} ok, 0 failed" in summary


def test_the_provenance_is_every_records_meta() -> None:
    read = read_records(FIXTURES / "tables-quick" / "stacks.jsonl")
    facts = provenance([*read.measurements, *read.sessions])
    assert facts.records == len(read.measurements)
    assert facts.failed == sum(not m.ok for m in read.measurements)
    assert facts.cpus == (2,) and facts.kit == ("0.2.0",)
    assert {"grpc-go 1.85.0", "grpc-java 1.85.1", "grpc-js 1.14.7", "tonic 0.14.9"} <= set(
        facts.stacks
    )
    busy = [m.meta.machine.busy_cores for m in read.measurements if m.meta.machine is not None]
    assert facts.busy_cores is not None
    assert (facts.busy_cores.low, facts.busy_cores.high) == (min(busy), max(busy))


def test_two_comparisons_of_one_title_have_anchors_of_their_own() -> None:
    read = read_records(FIXTURES / "release-0.1" / "compare.jsonl")
    twice = [
        dataclasses.replace(m, tags=dataclasses.replace(m.tags, campaign=f"compare-{n * 10}"))
        for n in ("a", "b")
        for m in read.measurements
    ]
    text, figures = _page(twice)
    assert figures.count("compare-1.png") == 1 and "compare-2.png" in figures
    assert '<section id="comparison-compare">' in text
    assert '<section id="comparison-compare-2">' in text
    assert '<a href="#comparison-compare-2">' in text
    ids = re.findall(r' id="([^"]+)"', text)
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(
    "path", sorted((FIXTURES / "tables-quick").glob("*.jsonl")), ids=lambda p: p.name
)
def test_a_tables_figures_each_sit_in_a_tables_section(path: Path) -> None:
    text, figures = _page(_records(str(path.relative_to(FIXTURES))))
    assert 'id="other-figures"' not in text
    sections = re.split(r'<section id="', text)
    for figure in figures:
        (holder,) = [s for s in sections if f'<figure id="{figure.replace(".", "-")}"' in s]
        assert holder.startswith("table-"), holder[:60]
