"""Pure: a records file -> one self-contained HTML report (``kit report FILE --html OUT``).

The page is made from the renderers every other report uses: the tables' and knees'
markdown, the comparisons' markdown, the runs' tables and verdicts, the lone runs'
findings, turned into HTML by markdown-it (raw HTML in it disabled, so every text from a
record is escaped); what this module writes itself it escapes too. In order:

- a summary (the checks' tally, each candidate's verdict, each knee's answer, or what the
  lone runs show together);
- every table, comparison, knee and run, each figure right after what it illustrates (the
  figures of ``kit.report.figures``, drawn by ``kit.report.plot`` and given here as PNG
  bytes, inline as ``data:`` URIs, their description as their ``alt`` text), with each
  verdict line (``kit.report.limits``: what limited each run, each cell's median run);
- the method and the machine: cores, load, the path, the version of every stack;
- the raw numbers, collapsed (``<details>``): the flat row's headline columns of every
  measurement.

Nothing is fetched: no script at all, no font, no stylesheet but the inline one, which the
page's Content-Security-Policy names by its hash (anything else would be refused by the
browser, and said in its console). Like the terminal report, the page is made a piece at a
time in passes over the records (``records`` is called once per pass): lone runs are never
held; the tables' and comparisons' records are, as ``kit report`` holds them.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import struct
import textwrap
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt

from kit import __version__
from kit.analysis.cells import CellView, group_campaigns, p50_latency_ms, throughput
from kit.analysis.compare import CompareMeta, CompareReport, build_report
from kit.analysis.findings import findings
from kit.analysis.flat import HEADLINE, flat_row
from kit.analysis.knee import Sweep, is_knee_campaign, sweep_of_records
from kit.analysis.limits import limit_of
from kit.analysis.provenance import Provenance, Span, provenance
from kit.analysis.tables import evaluate_bars
from kit.plan.tables import TABLE_NUMBERS, TablesSettings, plan_tables
from kit.report.compare import render_markdown
from kit.report.document import (
    MAX_RUN_TABLES,
    Records,
    ReportScan,
    compare_campaigns,
    is_lone_run,
    is_tables_run,
)
from kit.report.figures import FigureSpec, knee_name
from kit.report.findings import render_findings
from kit.report.knee import knee_answer, knee_markdown
from kit.report.limits import limit_sentence
from kit.report.run import SUMMARY_HEAD, WIDTH, run_table, summary_row
from kit.report.tables import render_tables
from kit.results.records import Measurement
from kit.results.store import RecordsRead

# The figures of a tables run, each beside the first of its tables the document holds (in
# that order: the table it was drawn for first); one none of them holds goes beside the
# document's first table.
FIGURE_TABLES: dict[str, tuple[str, ...]] = {
    "throughput-vs-window.png": ("windows", "stacks", "policies"),
    "window-growth.png": ("wire", "windows", "stacks", "links", "policies", "sharing", "pairs"),
    "stream-finish.png": ("starvation", "sharing", "policies", "loss"),
    "throughput-over-time.png": ("links", "stacks", "policies", "loss"),
    "estimators.png": ("links", "policies"),
}
# The figures of lone runs, after the runs' summary.
RUN_FIGURES = (
    "throughput-vs-window.png",
    "window-growth.png",
    "stream-finish.png",
    "throughput-over-time.png",
)
RAW_COLUMNS = tuple(c for c in HEADLINE if c != "schema")

CSS = """
:root { color-scheme: light dark; --fg: #1b1b1f; --bg: #fff; --muted: #5b5b66;
  --rule: #d5d5dd; --head: #f1f1f5; --ok: #0b6e3b; --bad: #a3001b; --note: #f7f3e3; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e4ea; --bg: #17171b;
  --muted: #a0a0ab; --rule: #3a3a44; --head: #24242b; --ok: #5fd08f; --bad: #ff7d8f;
  --note: #2c2a20; } }
body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  margin: 0 auto; padding: 1rem 1.5rem 4rem; max-width: 1200px; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2.5rem;
  border-bottom: 1px solid var(--rule); } h3 { margin-top: 1.8rem; }
p.sub, figcaption, .muted { color: var(--muted); }
nav ol { columns: 2; font-size: .9rem; }
.scroll { overflow-x: auto; margin: .6rem 0; }
table { border-collapse: collapse; font-size: .82rem; }
th, td { border: 1px solid var(--rule); padding: .2rem .45rem; text-align: left;
  vertical-align: top; }
th { background: var(--head); position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { font-size: .8rem; background: var(--head); padding: .6rem; overflow-x: auto; }
code { font-size: .9em; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto;
  border: 1px solid var(--rule); background: #fff; }
.verdict { border-left: 4px solid var(--muted); background: var(--note);
  padding: .4rem .7rem; margin: .5rem 0; }
.holds { color: var(--ok); font-weight: 600; } .fails { color: var(--bad); font-weight: 600; }
details { margin: .8rem 0; } summary { cursor: pointer; font-weight: 600; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
"""
# The page takes its one stylesheet and its images from itself, nothing else.
CSP = (
    "default-src 'none'; img-src data:; style-src "
    f"'sha256-{base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()}'"
)
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def markdown_html(text: str) -> str:
    """Markdown -> HTML, every raw HTML tag in it escaped; wide tables scroll."""
    rendered: str = _MARKDOWN.render(text)
    return rendered.replace("<table>", '<div class="scroll"><table>').replace(
        "</table>", "</table></div>"
    )


def text_html(text: str) -> str:
    """A plain-text block of the terminal report (lines, ``- `` items, each wrapped line of
    either indented) as paragraphs and lists, in order."""
    blocks: list[tuple[str, str]] = []  # ("p" | "li", text)
    for line in text.splitlines():
        if line.startswith("  ") and blocks:
            kind, said = blocks[-1]
            blocks[-1] = (kind, f"{said} {line.strip()}")
        elif line.startswith("- "):
            blocks.append(("li", line[2:]))
        elif line.strip():
            blocks.append(("p", line.strip()))
    out, in_list = [], False
    for kind, said in blocks:
        if (kind == "li") != in_list:
            out.append("<ul>" if kind == "li" else "</ul>")
            in_list = kind == "li"
        out.append(f"<{kind}>{esc(said)}</{kind}>")
    return "".join(out) + ("</ul>" if in_list else "")


def _anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"


# --- figures ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """A drawn figure: its file name, PNG bytes, and its description (what it shows)."""

    name: str
    png: bytes
    title: str
    description: str


def figure_description(spec: FigureSpec) -> str:
    """What a figure shows, in words: its title, its panels and their legends."""
    title = _title_of(spec)
    panels = []
    for p in spec.panels:
        legend = f" ({', '.join(p.legend)})" if p.legend else ""
        panels.append(" ".join(p.title.split()) + legend)
    count = len(spec.panels)
    return f"{title}. {count} panel{'s' if count != 1 else ''}: " + "; ".join(panels) + "."


def figures_of(specs: Sequence[FigureSpec], pngs: Mapping[str, bytes]) -> list[Figure]:
    """The drawn figures (``kit.report.plot.render_data``) with their descriptions."""
    return [
        Figure(s.name, pngs[s.name], _title_of(s), figure_description(s))
        for s in specs
        if s.name in pngs
    ]


def _title_of(spec: FigureSpec) -> str:
    """The figure's title, or its only panel's (a comparison's figure has no other)."""
    title = spec.title or (spec.panels[0].title if len(spec.panels) == 1 else "")
    return " ".join(title.split())


def png_size(png: bytes) -> tuple[int, int]:
    """A PNG's width and height, from its header (0, 0 if it is none)."""
    if len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n":
        return 0, 0
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def figure_html(figure: Figure) -> str:
    width, height = png_size(figure.png)
    data = base64.b64encode(figure.png).decode("ascii")
    return (
        f'<figure id="{_anchor(figure.name)}"><img src="data:image/png;base64,{data}" '
        f'width="{width}" height="{height}" alt="{esc(figure.description)}">'
        f"<figcaption>{esc(figure.title)} ({esc(figure.name)})</figcaption></figure>"
    )


@dataclass
class _Figures:
    """The figures not placed yet; each is placed once."""

    by_name: dict[str, Figure]

    def take(self, names: Iterable[str]) -> str:
        return "".join(figure_html(self.by_name.pop(n)) for n in names if n in self.by_name)

    def rest(self) -> str:
        return self.take(list(self.by_name))


# --- the page ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    title: str
    body: str
    anchor: str = ""


def _anchored(sections: Sequence[Section]) -> list[Section]:
    """Each section with an anchor of its own (two comparisons may share a title)."""
    seen: dict[str, int] = {}
    out = []
    for s in sections:
        base = _anchor(s.title)
        seen[base] = seen.get(base, 0) + 1
        anchor = base if seen[base] == 1 else f"{base}-{seen[base]}"
        out.append(Section(s.title, s.body, anchor))
    return out


def html_chunks(
    scan: ReportScan,
    records: Records,
    records_name: str,
    figures: Sequence[Figure] = (),
    all_runs: bool = False,
) -> Iterator[str]:
    """The page, a piece at a time (their concatenation is the document)."""
    facts = provenance(records())
    placed = _Figures({f.name: f for f in figures})
    read = scan.read()
    if is_tables_run(read):
        sections, method = _tables_sections(read, records_name, placed)
    else:
        sections = _campaign_sections(read.measurements, placed, last_takes_rest=not scan.runs)
        method = f"<p>{esc(CAMPAIGN_METHOD)}</p>" if sections else ""
    if scan.runs:
        sections.append(_runs_section(scan, records, records_name, placed, all_runs))
        method += markdown_html(RUN_METHOD)
    if left := placed.rest():
        sections.append(Section("Other figures", left))
    sections = _anchored([Section("Summary", ""), *sections])[1:]
    checks = next((s.anchor for s in sections if s.title.startswith("Checks")), "")
    heads = [
        Section("Summary", _summary(scan, records, checks, facts), "summary"),
        *sections,
        Section("Method and machine", method + _facts_html(facts), "method-and-machine"),
    ]
    yield _head(records_name, heads)
    for section in heads:
        yield _section_html(section)
    yield from _raw_numbers(records, facts.records)
    yield "</main></body></html>\n"


def _head(records_name: str, sections: Sequence[Section]) -> str:
    toc = "".join(f'<li><a href="#{s.anchor}">{esc(s.title)}</a></li>' for s in sections)
    toc += '<li><a href="#raw-numbers">Raw numbers</a></li>'
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>kit report: {esc(records_name)}</title><style>{CSS}</style></head>"
        f'<body><header><h1>kit report</h1><p class="sub">Records <code>{esc(records_name)}'
        f"</code>; made by kit {esc(__version__)} (re-render: <code>kit report "
        f"{esc(records_name)} --html OUT.html</code>).</p></header>"
        f"<nav><ol>{toc}</ol></nav><main>"
    )


def _section_html(section: Section) -> str:
    return f'<section id="{section.anchor}"><h2>{esc(section.title)}</h2>{section.body}</section>'


def _verdict(text: str) -> str:
    return f'<p class="verdict">{esc(text)}</p>'


# --- summary ------------------------------------------------------------------------------


def _summary(scan: ReportScan, records: Records, checks_anchor: str, facts: Provenance) -> str:
    read = scan.read()
    ok = facts.records - facts.failed
    parts = [f"<p>{facts.records} measurements: {ok} ok, {facts.failed} failed or interrupted.</p>"]
    if is_tables_run(read):
        parts.append(_checks_summary(read.measurements, checks_anchor))
    else:
        for ms in compare_campaigns(read.measurements).values():
            parts.append(_campaign_summary(ms))
    if scan.runs:
        lone = (r for r in records() if isinstance(r, Measurement) and is_lone_run(r))
        parts.append(text_html(render_findings(findings(lone))))
    return "".join(parts)


def _checks_summary(measurements: Sequence[Measurement], anchor: str) -> str:
    bars = evaluate_bars(group_campaigns(measurements))
    held = [b for b in bars if b.holds is True]
    failed = [b for b in bars if b.holds is False]
    other = len(bars) - len(held) - len(failed)
    items = "".join(
        f'<li><span class="fails">fails</span>: {esc(b.name)} ({esc(b.detail)})</li>'
        for b in failed
    )
    head = (
        f'<p>Checks against the reference: <span class="holds">{len(held)} hold</span>, '
        f'<span class="{"fails" if failed else "muted"}">{len(failed)} fail</span>, '
        f"{other} not measured or not decided (every check: "
        f'<a href="#{anchor}">below</a>).</p>'
    )
    return head + (f"<ul>{items}</ul>" if items else "")


def _campaign_summary(measurements: Sequence[Measurement]) -> str:
    if is_knee_campaign(measurements):
        sweep = sweep_of_records(measurements)
        return f"<p>{esc(sweep.report.meta.title)}: {esc(knee_answer(sweep))}</p>"
    report = build_report(CompareMeta.of_records(measurements), measurements)
    items = "".join(f"<li>{esc(_row_verdict(report, r.key))}</li>" for r in report.rows)
    return f"<p>{esc(report.meta.title)} ({esc(report.meta.setup)}):</p><ul>{items}</ul>"


def _row_verdict(report: CompareReport, key: str) -> str:
    row = report.row(key)
    median = "no result" if row.summary is None else f"{row.summary.median:.3g}"
    return f"{row.spec or key}: {median} {report.meta.unit}; {row.verdict}"


# --- tables -------------------------------------------------------------------------------

_TABLE_HEADING = re.compile(r"^## Table (\d+)\b", re.MULTILINE)
_NUMBERED = {number: name for name, number in TABLE_NUMBERS.items()}


def _split_markdown(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The tables document -> its preamble, and (title, markdown) per ``## `` section."""
    parts = re.split(r"(?m)^(?=## )", text)
    sections = []
    for part in parts[1:]:
        title, _, body = part.partition("\n")
        sections.append((title.removeprefix("## ").strip(), body))
    return parts[0], sections


def _tables_sections(
    read: RecordsRead, records_name: str, placed: _Figures
) -> tuple[list[Section], str]:
    """The tables document's sections, each table followed by its figures and what limited
    each of its cells; and its preamble (records, settings, machine, method) as HTML."""
    preamble, parts = _split_markdown(render_tables(read, records_name))
    present = [_table_of(title) for title, _ in parts]
    verdicts = _cell_verdicts(read.measurements, read.tables_plans)
    out = []
    for (title, body), table in zip(parts, present, strict=True):
        html_body = markdown_html(body)
        if table is not None:
            html_body += placed.take(_figures_for(table, present))
            html_body += verdicts.get(table, "")
        out.append(Section(title, html_body))
    return out, markdown_html(re.sub(r"(?m)^# .*$", "", preamble))


def _table_of(title: str) -> str | None:
    match = _TABLE_HEADING.match("## " + title)
    return _NUMBERED.get(int(match.group(1))) if match else None


def _figures_for(table: str, present: Sequence[str | None]) -> list[str]:
    """The figures whose first table in the document is ``table``."""
    first = next((t for t in present if t is not None), None)
    return [
        name
        for name, tables in FIGURE_TABLES.items()
        if next((t for t in tables if t in present), first) == table
    ]


def _cell_verdicts(
    measurements: Sequence[Measurement], plans: Sequence[TablesSettings]
) -> dict[str, str]:
    """Per table: what limited each of its cells (its median run), as a list under it."""
    quick = plans[0].quick if plans else False
    fed = {c.name: c.tables[0] for c in plan_tables(TablesSettings(quick=quick))}
    lines: dict[str, list[str]] = {}
    for name, view in group_campaigns(measurements).items():
        table = fed.get(name)
        if table is None:
            continue
        for cell in view.cells:
            sentence = _cell_sentence(cell)
            if sentence:
                lines.setdefault(table, []).append(f"{name} {cell.key}: {sentence}")
    return {
        table: "<details open><summary>What limited each cell (its median run)</summary><ul>"
        + "".join(f"<li>{esc(line)}</li>" for line in found)
        + "</ul></details>"
        for table, found in lines.items()
    }


def _cell_sentence(cell: CellView) -> str:
    metric = p50_latency_ms if cell.trial.workload.kind == "unary" else throughput
    median = cell.median_run(metric)
    return "" if median is None else limit_sentence(limit_of(median))


# --- comparisons and knees ------------------------------------------------------------------


def _campaign_sections(
    measurements: Sequence[Measurement], placed: _Figures, last_takes_rest: bool
) -> list[Section]:
    """Each comparison and knee, its figure after it; the figures of every cell (window
    growth, ...) after the only one there is (``last_takes_rest``), else on their own."""
    out: list[Section] = []
    compares = 0
    for ms in compare_campaigns(measurements).values():
        if is_knee_campaign(ms):
            sweep = sweep_of_records(ms)
            out.append(_knee_section(sweep, placed))
        else:
            compares += 1
            report = build_report(CompareMeta.of_records(ms), ms)
            out.append(_compare_section(report, f"compare-{compares}.png", placed))
    if last_takes_rest and len(out) == 1:
        out[0] = Section(out[0].title, out[0].body + placed.rest())
    return out


def _knee_section(sweep: Sweep, placed: _Figures) -> Section:
    body = markdown_html(knee_markdown(sweep)) + placed.take([knee_name(sweep)])
    return Section(f"Knee: {sweep.report.meta.title}", body)


def _compare_section(report: CompareReport, figure: str, placed: _Figures) -> Section:
    verdicts = "".join(
        f"<li>{esc(row.spec or row.key)}: {esc(limit_sentence(row.limit))}</li>"
        for row in report.rows
        if row.limit is not None
    )
    body = markdown_html(render_markdown(report)) + placed.take([figure])
    if verdicts:
        body += f"<h3>What limited each (its median run)</h3><ul>{verdicts}</ul>"
    return Section(f"Comparison: {report.meta.title}", body)


# --- lone runs ----------------------------------------------------------------------------


def _runs_section(
    scan: ReportScan, records: Records, name: str, placed: _Figures, all_runs: bool
) -> Section:
    """A row per run, the runs' figures, then the latest runs' tables (every run's with
    ``all_runs``), each ending with its verdict."""
    shown = scan.runs if all_runs else min(scan.runs, MAX_RUN_TABLES)
    first = scan.runs - shown + 1
    rows, tables = [], []
    n = 0
    for r in records():
        if not (isinstance(r, Measurement) and is_lone_run(r)):
            continue
        n += 1
        rows.append(_row_html(summary_row(n, r)))
        if n >= first:
            tables.append(f'<h3 id="run-{n}">Run {n} of {scan.runs}</h3>' + run_html(r))
    head = "".join(f"<th>{esc(h)}</th>" for h in SUMMARY_HEAD)
    body = f'<div class="scroll"><table><tr>{head}</tr>{"".join(rows)}</table></div>'
    body += placed.take(RUN_FIGURES)
    if shown < scan.runs:
        body += f"<p>The latest {shown} runs' tables; every run's: <code>kit report --all "
        body += f"{esc(name)} --html OUT.html</code>.</p>"
    return Section(f"Runs ({scan.runs})", body + "".join(tables))


def _row_html(cells: Sequence[str]) -> str:
    return "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>"


def run_html(m: Measurement) -> str:
    """A run's table (as the terminal prints it) and its verdict line, set apart."""
    text = run_table(m)
    sentence = limit_sentence(limit_of(m))
    wrapped = "\n".join(textwrap.wrap(sentence, WIDTH))
    if not text.endswith("\n" + wrapped):  # a failed run: no verdict, its error instead
        return f"<pre>{esc(text)}</pre>"
    return f"<pre>{esc(text[: -len(wrapped) - 1])}</pre>" + _verdict(sentence)


# --- method, machine, raw numbers -------------------------------------------------------------

CAMPAIGN_METHOD = (
    "Each comparison, knee and table is a campaign of rounds: each round runs every cell "
    "once and a control cell twice, in a seeded order reshuffled every round; a cell's "
    "figure is the median of its rounds, and the control's two copies give the noise floor "
    "a change must clear to be called faster or slower."
)
RUN_METHOD = (
    "Each lone run is one `kit run`: one client through the delay line to one server, "
    "timed after a warm-up; its verdict names what limited it."
)


def _span_text(span: Span | None, unit: str) -> str:
    if span is None:
        return "not recorded"
    return f"{span.low:.2f}-{span.high:.2f} {unit}"


def _facts_html(facts: Provenance) -> str:
    rows = [
        ("measured", f"{facts.first_started or '?'} to {facts.last_started or '?'}"),
        ("hosts", ", ".join(facts.hosts) or "not recorded"),
        ("CPUs", ", ".join(str(c) for c in facts.cpus) or "not recorded"),
        ("machine busy", _span_text(facts.busy_cores, "cores in the timed windows")),
        ("other processes", _span_text(facts.other_cores, "cores beside the measurement")),
        ("1-min load average", _span_text(facts.load_1min, "(kit tables' sessions)")),
        ("path", ", ".join(facts.paths) or "not recorded"),
        ("stacks", ", ".join(facts.stacks) or "not recorded"),
        ("kit", ", ".join(facts.kit) or "not recorded"),
        ("Python", ", ".join(facts.python) or "not recorded"),
    ]
    if facts.keep_awake:
        rows.append(("--keep-awake", f"{facts.keep_awake} of {facts.records} records"))
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows)
    return f'<dl class="facts">{items}</dl>'


def _raw_numbers(records: Records, count: int) -> Iterator[str]:
    """Every measurement's headline columns, a row at a time, collapsed."""
    yield (
        '<section id="raw-numbers"><h2>Raw numbers</h2><details><summary>'
        f"{count} measurement(s): the flat row's headline columns (every column: "
        "<code>kit report FILE --csv -</code>)</summary>"
    )
    head = "".join(f"<th>{esc(c)}</th>" for c in ("#", "campaign", "key", "round", *RAW_COLUMNS))
    yield f'<div class="scroll"><table><tr>{head}</tr>'
    n = 0
    for r in records():
        if isinstance(r, Measurement):
            n += 1
            yield _raw_row(n, r)
    yield "</table></div></details></section>"


def _raw_row(n: int, m: Measurement) -> str:
    row = flat_row(m)
    cells = [str(n), m.tags.campaign, m.tags.key, str(m.tags.round or "")]
    cells += ["" if row.get(c) is None else str(row.get(c)) for c in RAW_COLUMNS]
    numeric = {0, 3} | {4 + i for i, c in enumerate(RAW_COLUMNS) if HEADLINE[c] != "str"}
    return (
        "<tr>"
        + "".join(
            f'<td class="num">{esc(c)}</td>' if i in numeric else f"<td>{esc(c)}</td>"
            for i, c in enumerate(cells)
        )
        + "</tr>"
    )
