"""The pure pieces behind shareable output: the reflective flat schema, three significant
figures, sizes in the unit typed, tables that shrink to fit, markdown laid out for a terminal,
and the series the plots draw."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kit.analysis import flat
from kit.analysis.series import growth_series, window_points
from kit.report.format import ColumnWidths, fmt_rate, fmt_size, settings_text, sig3
from kit.report.terminal import markdown_for_terminal
from kit.results.store import read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "release-0.1"


@dataclass(frozen=True)
class Inner:
    rate_bits_s: float | None = None
    label: str = "x"


@dataclass(frozen=True)
class Outer:
    delay_ms: float = 1.5
    inner: Inner = field(default_factory=Inner)
    maybe: Inner | None = None

    @property
    def doubled_ms(self) -> float:
        return self.delay_ms * 2


def test_a_new_field_becomes_a_column_without_an_edit() -> None:
    columns = dict(flat._walk(Outer, Outer(inner=Inner(rate_bits_s=1e8)), ""))
    assert columns == {
        "delay_ms": 1.5,
        "inner_rate_bits_s": 1e8,
        "inner_label": "x",
        "maybe_rate_bits_s": None,
        "maybe_label": None,
        "doubled_ms": 3.0,
    }
    kinds = flat.column_kinds(Outer, "x")
    assert kinds["x_maybe_label"] == "str?" and kinds["x_inner_label"] == "str"
    assert kinds["x_inner_rate_bits_s"] == "float"


def test_every_column_of_a_record_has_a_kind() -> None:
    runs = read_records(FIXTURES / "runs.jsonl").measurements
    kinds = flat.column_kinds()
    for row in flat.flat_rows(runs) + flat.flat_rows(runs, full=True):
        assert set(row) <= set(kinds)
        assert row["schema"] == flat.FLAT_SCHEMA and list(row)[:7] == [
            *("schema", "status", "client", "server", "window_policy", "workload", "rtt_ms")
        ]


# The frame columns of FLAT_SCHEMA 1, in CSV order: the names and order they had while the
# frame summary held each endpoint's frames as twin fields (records schema 2).
FRAME_COLUMNS_OF_FLAT_SCHEMA_1 = [
    "frames_connections",
    "frames_decodable",
    "frames_undecodable",
    "frames_client_settings",
    "frames_client_settings_changes",
    *(f"frames_conn_window_updates_{k}" for k in ("count", "total", "first", "first_t_ns")),
    *(f"frames_stream_window_updates_{k}" for k in ("count", "total", "first", "first_t_ns")),
    "frames_pings_sent",
    "frames_rtt_probe_pings",
    *(
        f"frames_ping_rtt_ms_{s}_{k}"
        for s in ("proxy", "client")
        for k in ("count", "median_ms", "p90_ms")
    ),
    *(f"frames_data_{d}_{k}" for d in ("down", "up") for k in ("frames", "bytes", "max_frame")),
    "frames_bytes_up",
    "frames_bytes_down",
    "frames_window_growth",
    "frames_tap_lines_skipped",
    "frames_server_settings",
    "frames_server_settings_changes",
    *(f"frames_server_conn_window_updates_{k}" for k in ("count", "total", "first", "first_t_ns")),
    *(
        f"frames_server_stream_window_updates_{k}"
        for k in ("count", "total", "first", "first_t_ns")
    ),
    "frames_server_pings_sent",
    "frames_server_window_growth",
    "frames_window_final_bytes",
    "frames_peak_queued_bytes_down",
    "frames_delivered_down_origin_ns",
    "frames_delivered_down_bucket_ns",
    "frames_not_decoded_bytes",
    "frames_stream_windows",
]
# Frame columns added since, after them (a new column never moves an old one).
FRAME_COLUMNS_ADDED = [
    "frames_conn_window_start_bytes",
    "frames_opened_ns",
    "frames_goaways",
    "frames_resets",
]


def test_the_frame_columns_keep_their_names_and_order() -> None:
    """The frame summary's per-endpoint records are flattened to FLAT_SCHEMA 1's columns."""
    runs = read_records(FIXTURES / "runs.jsonl").measurements
    everything = FRAME_COLUMNS_OF_FLAT_SCHEMA_1 + FRAME_COLUMNS_ADDED
    compact = [c for c in everything if c not in flat._COMPACT_LEFT_OUT]
    for full, expected in ((True, everything), (False, compact)):
        for row in flat.flat_rows(runs, full):  # with a tap, and (the failed run) without
            assert [k for k in row if k.startswith("frames_")] == expected
    assert set(FRAME_COLUMNS_OF_FLAT_SCHEMA_1) <= set(flat.column_kinds())
    assert flat.column_kinds()["frames_window_growth"] == "json"


@pytest.mark.parametrize(
    ("value", "text"),
    [(38.874, "38.9"), (580.36, "580"), (1339.0, "1339"), (2.5, "2.50"), (0.01234, "0.0123"),
     (9.996, "10.0"), (99.96, "100"), (0.0, "0"), (-4.567, "-4.57")],
)  # fmt: skip
def test_three_significant_figures(value: float, text: str) -> None:
    assert sig3(value) == text


def test_sizes_in_binary_units_and_rates_in_the_unit_asked() -> None:
    assert fmt_size(4_000_000) == "3.81 MiB" and fmt_size(4 * 2**20) == "4 MiB"
    assert fmt_size(100_000) == "97.7 KiB" and fmt_size(81_529_556) == "77.8 MiB"
    assert fmt_size(512) == "512 B"
    assert fmt_rate(100.0, "MiB/s") == "100" and fmt_rate(100.0, "MB/s") == "105"
    assert fmt_rate(100.0, "Mbit/s") == "839"


def test_settings_are_named_and_abbreviated() -> None:
    settings = {"INITIAL_WINDOW_SIZE": 65536, "ENABLE_PUSH": 0, "0xfe03": 1}
    assert "GRPC_ALLOW_TRUE_BINARY_METADATA=1" in settings_text(settings)
    short = settings_text(settings, verbose=False)
    assert short == "INITIAL_WINDOW_SIZE=65536 (+2 more, --verbose)"


def test_a_table_shrinks_to_fit() -> None:
    rows = [["a" * 40, "b " * 30, "c" * 12, "d d d d d d d d d d d d d d d d d"]]
    widths = ColumnWidths.of(["one", "two", "three", "four"])
    for row in rows:
        widths.measure(row)
    table = widths.layout([40, 60, 12, 40], width=80)
    text = "\n".join([table.header(), *(table.row(r) for r in rows)])
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "c" * 12 in text  # a narrow column is left alone


def test_markdown_tables_are_laid_out_within_the_width() -> None:
    wide = "| " + " | ".join(f"column {i}" for i in range(12)) + " |"
    rule = "|" + "---|" * 12
    row = "| " + " | ".join(f"value {i} with words" for i in range(12)) + " |"
    md = f"# Title\n\n{wide}\n{rule}\n{row}\n\n- a list item " + "that goes on " * 20
    text = markdown_for_terminal(md, 100)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "column 11: value 11 with words" in text  # too wide: one block per row


def test_plot_series_from_release_0_1_records() -> None:
    tables = read_records(FIXTURES / "tables.jsonl").measurements
    points = window_points(tables)
    assert points and all(p.window_bytes > 0 and p.throughput_mib_s > 0 for p in points)
    growth = growth_series(tables)
    assert {g.client for g in growth} == {"grpcio", "h2"}
    assert not any(g.timed for g in growth)  # release 0.1 kept no timestamps: by step


FORMULAS = ["=HYPERLINK(\"http://x\",\"y\")", "+cmd|' /C calc'!A0", "@SUM(A1:A9)", "-2+3",
            "\tx", "\rx", "'quoted"]  # fmt: skip


@pytest.mark.parametrize("text", FORMULAS)
def test_csv_text_cells_never_start_a_formula_and_read_back_exactly(text: str) -> None:
    import csv
    import io

    from kit.plan.trial import Trial
    from kit.report.export import render_csv
    from kit.results.records import Measurement, RunTags

    m = Measurement(trial=Trial(), status="failed", error=text, tags=RunTags(key=text))
    (row,) = csv.DictReader(io.StringIO(render_csv([m]), newline=""))
    assert row["tags_key"] == "'" + text and row["error"] == "'" + text
    back = flat.parse_csv_row(row)
    assert back["tags_key"] == text and back["error"] == text
    assert flat.flat_row(m)["tags_key"] == text  # the JSON stays exact


def test_csv_numbers_keep_their_sign() -> None:
    assert flat.csv_cell(-2) == "-2" and flat.csv_cell(-0.5) == "-0.5"


def test_plot_series_draw_one_point_and_one_finish_per_configuration() -> None:
    """Thousands of runs of one configuration are one median point, not thousands."""
    from kit.analysis.series import finish_series
    from kit.plan.trial import ClientConfig, Trial, Workload
    from kit.results.client import ClientResult
    from kit.results.records import Measurement

    trial = Trial(
        client=ClientConfig(kind="h2", window_mode="static", window_bytes=2**20),
        workload=Workload(streams=2, bytes_per_stream=8 * 2**20),  # a finish time says much
    )

    def run(mib: int) -> Measurement:
        result = ClientResult(
            client="h2", bytes=mib * 2**20, elapsed_s=1.0, stream_finish_s=(0.5, 1.0)
        )
        return Measurement(trial=trial, status="ok", result=result)

    runs = [run(mib) for mib in (10, 30, 20)] * 50
    (point,) = window_points(runs)
    assert point.throughput_mib_s == pytest.approx(20.0)
    assert len(finish_series(runs)) == 1


def test_plot_labels_are_plain_text_whatever_the_names(tmp_path: Path) -> None:
    """A "$" would start matplotlib's mathtext (a crash); CJK and emoji warned per glyph."""
    import warnings

    from kit.report.plot import render_plots

    text = (FIXTURES / "compare.jsonl").read_text(encoding="utf-8")
    path = tmp_path / "names.jsonl"
    path.write_text(text.replace("h2:window=1MiB", "cost $\\\\frac{a}{ 价格😀 $x"), "utf-8")
    measurements = read_records(path).measurements
    assert any("价格" in (m.tags.key or "") for m in measurements)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        figures = render_plots(measurements)
    assert "compare-1.png" in figures
    assert [str(w.message) for w in seen] == []
