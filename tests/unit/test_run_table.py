"""The ``kit run`` table's tap rows: one renderer for the receiving endpoint's side, the
client's on a download and the server's on an upload, from one frame summary."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kit.report.run import run_table
from kit.results.records import (
    DataTotals,
    FrameSummary,
    Measurement,
    SideFrames,
    WindowStep,
    WindowUpdates,
)
from kit.results.store import read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _side(base: int) -> SideFrames:
    return SideFrames(
        settings={"INITIAL_WINDOW_SIZE": base, "MAX_FRAME_SIZE": 16384, "ENABLE_PUSH": 0},
        settings_changes=2,
        conn_window_updates=WindowUpdates(count=12, total=1000, first=tuple(range(base, base + 7))),
        stream_window_updates=WindowUpdates(count=4, total=10),
        pings_sent=5,
        window_growth=tuple(WindowStep(None, base << i) for i in range(8)),
    )


FRAMES = FrameSummary(
    connections=1,
    decodable=False,
    client=_side(100),
    server=_side(900),
    rtt_probe_pings=2,
    data_down=DataTotals(10, 1000, 300),
    data_up=DataTotals(20, 2000, 400),
    tap_lines_skipped=1,
    not_decoded_bytes=5,
)


def _rows(m: Measurement, verbose: bool = False) -> list[str]:
    """The table's lines from the first SETTINGS row on (the tap's rows, then notes)."""
    lines = run_table(replace(m, frames=FRAMES), verbose=verbose).splitlines()
    start = next(i for i, line in enumerate(lines) if "SETTINGS (first)" in line)
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("----"))  # closing rule
    return [" ".join(line.split()) for line in lines[start:end]]


def test_a_download_shows_the_clients_side_shortened_without_verbose() -> None:
    download = read_records(FIXTURES / "release-0.1" / "runs.jsonl").measurements[0]
    assert _rows(download) == [
        "client SETTINGS (first) INITIAL_WINDOW_SIZE=100 MAX_FRAME_SIZE=16384 (+1 more, --verbose)",
        "conn WINDOW_UPDATEs sent 12; first: 100 101 102 103 104 ...",
        "stream WINDOW_UPDATEs sent 4",
        "PINGs sent by client 5 (2 kit RTT probes)",
        "DATA frames received 10 (max 300 B)",
        "stream window growth 100 B -> 200 B -> 400 B -> ... -> 6.25 KiB -> 12.5 KiB",
        "tap 1 corrupt tap-file line(s) skipped",
        "tap tap incomplete: 5 bytes not decoded",
        "tap some frames could not be decoded",
        "note largest DATA frame 196608 B",
    ]
    verbose = _rows(download, verbose=True)
    assert "conn WINDOW_UPDATEs sent 12; first: 100 101 102 103 104 105 106" in verbose
    assert "client SETTINGS (first) INITIAL_WINDOW_SIZE=100 MAX_FRAME_SIZE=16384 ENABLE_PUSH=0" in (
        verbose
    )


def test_an_upload_shows_the_servers_side_with_the_same_renderer() -> None:
    uploads = read_records(FIXTURES / "tables-quick" / "uploads.jsonl").measurements
    upload = next(m for m in uploads if m.ok)
    assert _rows(upload) == [
        "server SETTINGS (first) INITIAL_WINDOW_SIZE=900 MAX_FRAME_SIZE=16384 (+1 more, --verbose)",
        "conn WINDOW_UPDATEs from server 12; first: 900 901 902 903 904 905 906",
        "stream WINDOW_UPDATEs from server 4",
        "server SETTINGS changes 2",
        "PINGs sent by server 5",
        "DATA frames sent 20 (max 400 B)",
        "server window growth 900 B -> 1.76 KiB -> 3.52 KiB -> 7.03 KiB -> 14.1 KiB -> 28.1 KiB",
        "-> 56.2 KiB -> 112 KiB",
        "tap some frames could not be decoded",
    ]


RUNS = FIXTURES / "runs"


def _run(name: str) -> Measurement:
    (m,) = read_records(RUNS / name).measurements
    return m


def test_labels_never_wrap_and_per_stream_rows_name_their_streams() -> None:
    """Labels stay whole on their line (the column is as wide as the longest); each
    stream's window is labelled with its stream."""
    m = _run("h2-8-streams.jsonl")
    for table in (run_table(m), run_table(m, verbose=True)):
        lines = table.splitlines()
        width = len(lines[0].split()[0])  # the rule above the label column
        labels = [line[:width].rstrip() for line in lines[1:-1]]
        assert "stream windows at tap (median/max)" in labels
        assert (
            "peak bytes received, unread" in labels
            and "Jain's index (full-speed streams)" in labels
        )
        assert all(len(line) <= 100 for line in lines)
    assert "16 MiB each (8 streams)" in run_table(m)
    assert m.result is not None
    slow = replace(
        m,
        trial=replace(
            m.trial, workload=replace(m.trial.workload, slow_streams=1, read_rate_bits_s=2e7)
        ),
        result=replace(m.result, slow_streams=1, stream_window_bytes=(1, 2, 3, 4, 5, 6, 7, 8)),
    )
    assert "#1 slow 1 B, #2 2 B" in run_table(slow)


def test_a_target_run_names_its_target_and_intervals_are_summarised() -> None:
    m = _run("h2-interval-100ms.jsonl")
    table = run_table(replace(m, meta=replace(m.meta, target="10.1.2.3:50051")))
    assert "server" in table and "target 10.1.2.3:50051" in table
    assert "throughput per 100 ms" in table and "over 10 x 100 ms" in table
    assert "(the last 35.1 ms, partial, left out)" in " ".join(table.split())


def test_the_full_speed_streams_efficiency_leaves_the_throttled_stream_out() -> None:
    m = _run("h2-8-streams.jsonl")
    assert m.result is not None
    mib = 2**20
    slow = replace(
        m,
        theory_mib_s=30.0,
        trial=replace(
            m.trial,
            workload=replace(m.trial.workload, streams=3, slow_streams=1, read_rate_bits_s=2e7),
        ),
        result=replace(
            m.result,
            stream_bytes=(2 * mib, 10 * mib, 10 * mib),
            stream_finish_s=(1.0, 1.0, 1.0),
            slow_streams=1,
        ),
    )
    row = next(
        line
        for line in run_table(slow).splitlines()
        if "full-speed streams" in line and "efficiency" in line
    )
    # 20 of the two shares' 20 MiB/s
    assert "1.00 = their throughput / their share of the theory (2 of 3" in row


def test_kit_report_on_a_runs_file_starts_with_a_table_of_runs(tmp_path: Path) -> None:
    from kit.report.document import render_records

    path = tmp_path / "runs.jsonl"
    path.write_bytes(
        b"".join((RUNS / n).read_bytes() for n in ("h2-8-streams.jsonl", "h2-interval-100ms.jsonl"))
    )
    text = render_records(read_records(path), str(path))
    assert text is not None
    head = text.split("\n\n")[:2]
    assert head[0] == "2 runs"
    lines = head[1].splitlines()
    assert len(lines) == 4 and lines[0].split()[:3] == ["#", "started", "client"]
    assert "download x8" in lines[2] and "191" in lines[2] and "download x1" in lines[3]
