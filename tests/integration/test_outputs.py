"""Results people look at and share, end to end: CSV, plots, a separately started server,
the conventions of every command, and output that fits 100 columns.

Real processes over loopback; every wait is bounded. Throughput is asserted only against
physics (window / RTT plus a stated margin), never as an absolute speed.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import kit as run_kit
from cli_support import kit_here as run_kit_here
from PIL import Image

from kit.analysis.flat import parse_csv_row

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "release-0.1"
WIDTH = 100
ENV = {**os.environ, "COLUMNS": str(WIDTH)}
# Static windows are exact on the h2 client: throughput stays under window / RTT, plus 15%
# for timer slop and the warm-up's credit in flight (a loaded 2-core machine).
PHYSICS_MARGIN = 1.15


def kit(
    *args: str, timeout_s: float = 90, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_kit(*args, timeout_s=timeout_s, cwd=cwd, env=ENV)


def kit_here(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_kit_here(*args, cwd=cwd, env=ENV)


def fits(text: str) -> bool:
    return all(len(line) <= WIDTH for line in text.splitlines())


@contextlib.contextmanager
def kit_serve() -> Iterator[tuple[str, str]]:
    """A `kit serve` on an OS port, started apart from the kit under test: (address, banner)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kit.cli", "serve", "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the banner's first line, once the port is bound
        match = re.search(r"serving on (127\.0\.0\.1:\d+)", first)
        assert match, first + (
            proc.stderr.read() if proc.poll() is not None and proc.stderr else ""
        )
        banner = first + proc.stdout.readline() + proc.stdout.readline()
        yield match.group(1), banner
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


# --- a separately started server -------------------------------------------------------------


def test_run_and_compare_against_a_separately_started_kit_serve(tmp_path: Path) -> None:
    with kit_serve() as (address, banner):
        assert fits(banner) and f"kit run --target {address}" in banner
        csv_path, records = tmp_path / "run.csv", tmp_path / "runs.jsonl"
        run = kit(
            "run", "--target", address, "--rtt", "10ms", "--client", "h2", "--window", "256KiB",
            "--duration", "0.5s", "--json", "--records", str(records), "--csv", str(csv_path),
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        data = json.loads(run.stdout)
        assert data["status"] == "ok" and data["meta_target"] == address
        assert data["meta_path"] == "delay line" and data["rtt_ms"] == 10
        assert 0 < data["throughput_mib_s"] <= data["theory_mib_s"] * PHYSICS_MARGIN
        # The CSV row is the JSON object, field for field.
        (row,) = list(csv.DictReader(io.StringIO(csv_path.read_text(encoding="utf-8"))))
        assert parse_csv_row(row) == data
        # No server of ours: its CPU is not ours to measure.
        assert {c["role"] for c in data["cpu"]} == {"client", "proxy"}

        direct = kit_here(
            "run", "--target", address, "--direct", "--rtt", "0", "--client", "h2",
            "--duration", "0.3s", "--no-records", "--json",
        )  # fmt: skip
        assert direct.returncode == 0, direct.stderr
        assert json.loads(direct.stdout)["meta_path"] == "direct"

        compare = kit_here(
            "compare", "--target", address, "--rtt", "4ms", "--duration", "200ms",
            "--rounds", "1", "--baseline", "h2:window=64KiB,conn-window=64KiB",
            "--candidate", "h2:window=512KiB,conn-window=512KiB",
            "--records", str(tmp_path / "cmp.jsonl"), "--csv", str(tmp_path / "cmp.csv"),
        )  # fmt: skip
        assert compare.returncode == 0, compare.stderr
        assert fits(compare.stdout) and "baseline" in compare.stdout
        rows = list(csv.DictReader(io.StringIO((tmp_path / "cmp.csv").read_text())))
        assert len(rows) == 3 and {r["meta_target"] for r in rows} == {address}
        assert {r["tags_key"] for r in rows} == {"baseline", "h2:window=512KiB,conn-window=512KiB"}


def test_target_mistakes_are_one_line() -> None:
    for args, needle in (
        (["--target", "nowhere"], "--target"),
        (["--target", "127.0.0.1:0"], "--target"),
        (["--target", "127.0.0.1:9", "--server-window", "1MiB"], "--server-window"),
    ):
        proc = kit_here("run", *args)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], proc.stderr


# --- records and CSV -----------------------------------------------------------------------------


def test_records_go_where_they_are_told(tmp_path: Path) -> None:
    base = ["run", "--rtt", "2ms", "--client", "h2", "--window", "128KiB", "--duration", "0.2s"]
    quiet = kit_here(*base, "--no-records", cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert not (tmp_path / "results").exists() and "record" not in quiet.stderr
    null = kit_here(*base, "--records", "/dev/null", cwd=tmp_path)
    assert null.returncode == 0, null.stderr
    assert "record appended to /dev/null" in null.stderr
    to_stdout = kit_here(*base, "--records", "-", cwd=tmp_path)
    assert to_stdout.returncode == 0, to_stdout.stderr
    (line,) = to_stdout.stdout.splitlines()  # nothing but the record
    assert json.loads(line)["kind"] == "measurement"
    default = kit(*base, cwd=tmp_path)
    assert default.returncode == 0, default.stderr
    assert "record appended to results/runs.jsonl" in default.stderr
    assert (tmp_path / "results" / "runs.jsonl").exists()
    # Not a terminal: stdout holds the result table only, the rest went to stderr.
    assert default.stdout.lstrip().startswith("---") and fits(default.stdout)


def test_report_exports_csv_and_refuses_what_it_cannot_render(tmp_path: Path) -> None:
    out = tmp_path / "compare.csv"
    proc = kit_here("report", str(FIXTURES / "compare.jsonl"), "--csv", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "h2:window=1MiB" in proc.stdout and "noise floor" in proc.stdout
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert len(rows) == 6 and all(r["schema"] == "3" for r in rows)
    assert all(float(r["throughput_mib_s"]) > 0 for r in rows)
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"schema": 2, "kind": "tables-session", "started_at": "", "elapsed_s": 0, '
                     '"cells_run": 0, "cells_planned": 0, "complete": true}\n')  # fmt: skip
    refused = kit_here("report", str(empty))
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1


# --- plots ----------------------------------------------------------------------------------------


EXPECTED_PNGS = {
    "tables.jsonl": {"throughput-vs-window.png", "window-growth.png", "stream-finish.png"},
    # A comparison's cells are drawn in its own figure, not as window-study points.
    "compare.jsonl": {"window-growth.png", "compare-1.png"},
    "runs.jsonl": {"throughput-vs-window.png", "window-growth.png", "stream-finish.png"},
}


@pytest.mark.parametrize("records", sorted(EXPECTED_PNGS))
def test_plot_writes_pngs_that_decode_and_are_not_blank(records: str, tmp_path: Path) -> None:
    proc = kit_here("plot", str(FIXTURES / records), "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    written = {Path(line).name for line in proc.stdout.splitlines()}
    assert written == EXPECTED_PNGS[records]
    for name in written:
        with Image.open(tmp_path / name) as image:
            image.load()
            # 900 wide; taller for more panels or more streams to finish
            assert image.format == "PNG" and image.size[0] == 900 and image.size[1] >= 500
            grey = list(image.convert("L").tobytes())
        mean = sum(grey) / len(grey)
        variance = sum((g - mean) ** 2 for g in grey) / len(grey)
        assert variance > 100, f"{name} looks blank (pixel variance {variance:.1f})"
        assert sum(1 for g in grey if g < 128) > 2000, f"{name} has almost nothing drawn"


def test_plot_refuses_records_without_results(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    proc = kit_here("plot", str(empty))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


# --- conventions and width ----------------------------------------------------------------------


COMMANDS = ("run", "proxy", "serve", "tables", "report", "compare", "knee", "plot")


def test_version_and_every_help_fit_100_columns() -> None:
    version = kit_here("--version")
    assert version.returncode == 0 and re.fullmatch(r"kit \d+\.\d+\.\d+\n", version.stdout)
    for args in ([], *([c] for c in COMMANDS)):
        proc = kit_here(*args, "--help")
        assert proc.returncode == 0, proc.stderr
        assert fits(proc.stdout), f"kit {' '.join(args)} --help is wider than {WIDTH} columns"


def test_shell_completion_is_on() -> None:
    proc = kit_here("--help")
    assert "--install-completion" in proc.stdout and "--show-completion" in proc.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_unknown_options_get_the_kits_one_line_error(command: str) -> None:
    proc = kit_here(command, "--no-such-option")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kit: error:"), proc.stderr
    assert "--no-such-option" in lines[0] and "╭" not in proc.stderr


def test_every_report_fits_100_columns() -> None:
    for records in ("tables.jsonl", "compare.jsonl", "runs.jsonl"):
        proc = kit_here("report", str(FIXTURES / records))
        assert proc.returncode == 0, proc.stderr
        assert fits(proc.stdout), f"kit report {records} is wider than {WIDTH} columns"


def test_run_knee_and_a_failed_run_fit_100_columns(tmp_path: Path) -> None:
    run = kit_here(
        "run", "--rtt", "5ms", "--client", "grpcio", "--duration", "0.3s", "--units", "Mbit/s",
        "--records", str(tmp_path / "r.jsonl"),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert fits(run.stdout) and "Mbit/s" in run.stdout and "(+4 more, --verbose)" in run.stdout
    assert "GRPC_ALLOW_TRUE_BINARY_METADATA" not in run.stdout  # abbreviated without --verbose
    failed = kit_here(
        "run", "--rtt", "1ms", "--duration", "0.3s", "--option", "grpc.max_receive_message_length=10",
        "--records", str(tmp_path / "r.jsonl"), "--verbose",
    )  # fmt: skip
    assert failed.returncode == 4 and "FAILED" in failed.stdout and fits(failed.stdout)
    knee = kit_here(
        "knee", "--rtt", "4ms", "--streams", "1", "--min-window", "64KiB", "--max-window",
        "128KiB", "--rounds", "1", "--duration", "200ms", "--records", str(tmp_path / "k.jsonl"),
    )  # fmt: skip
    assert knee.returncode == 0, knee.stderr
    assert fits(knee.stdout) and "knee:" in knee.stdout


def test_a_decimal_size_is_echoed_in_binary_units(tmp_path: Path) -> None:
    """One unit family: a window typed as 100KB reads back as 97.7 KiB, never "100 KB"."""
    started = time.monotonic()
    proc = kit_here(
        "run", "--rtt", "2ms", "--client", "h2", "--window", "100KB", "--duration", "0.2s",
        "--no-records",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "97.7 KiB / 97.7 KiB" in proc.stdout and " KB" not in proc.stdout
    assert time.monotonic() - started < 60
