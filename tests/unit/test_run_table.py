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
    return [" ".join(line.split()) for line in lines[start:-1]]


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
        "conn WINDOW_UPDATEs from 12; first: 900 901 902 903 904 905 906",
        "server",
        "stream WINDOW_UPDATEs from 4",
        "server",
        "server SETTINGS changes 2",
        "PINGs sent by server 5",
        "DATA frames sent 20 (max 400 B)",
        "server window growth 900 B -> 1.76 KiB -> 3.52 KiB -> 7.03 KiB -> 14.1 KiB -> 28.1 KiB ->",
        "56.2 KiB -> 112 KiB",
        "tap some frames could not be decoded",
    ]
