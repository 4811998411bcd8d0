"""Uploads over loopback: real grpcio servers, the real delay line, both clients as processes.

Physics with stated tolerances, never absolute speeds: the server's window bounds what the
h2 client has in flight (read from the delay line's frame tap) and what an upload carries
per round trip; what the server confirms equals what the client sent.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import child_of, kit_here, nth_connection
from hyperframe.frame import Frame, SettingsFrame
from stacks_support import need_built
from tables_resume import resume_quick_table

from kit.plan.trial import ClientConfig, Link, ServerConfig, Trial, Workload
from kit.plan.units import KIB, MIB
from kit.results.client import now_ns
from kit.results.records import DirectionSummary, TapConnection
from kit.results.store import read_records
from kit.topology.topology import Topology

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
H2 = ClientConfig(kind="h2", window_mode="static", window_bytes=64 * KIB)
GRPCIO = ClientConfig(kind="grpcio")
SMALL_SERVER = ServerConfig(window_mode="static", window_bytes=64 * KIB)
# The delay line may deliver a chunk up to ~1 ms early (timer rounding; STACK-FACTS), so
# credit stamped at the proxy can reach the client that much before the nominal delay.
EARLY_DELIVERY_NS = 2_000_000


def upload(client: ClientConfig, server: ServerConfig, rtt_ms: float, **work: object) -> Trial:
    workload = Workload(kind="upload", timeout_s=30.0, **work)  # type: ignore[arg-type]
    return Trial(link=Link.from_rtt(rtt_ms), client=client, server=server, workload=workload)


def test_both_clients_upload_and_the_server_confirms_every_byte_sent() -> None:
    server = ServerConfig(window_mode="static", window_bytes=MIB)
    with Topology(warm_up=False) as topo:
        for client in (H2, GRPCIO):
            fixed = topo.measure(upload(client, server, 20.0, bytes_per_stream=4 * MIB))
            assert fixed.ok and fixed.result is not None, fixed.error
            assert fixed.result.bytes == fixed.result.sent_bytes == 4 * MIB
            assert fixed.result.messages == 16
            timed = topo.measure(upload(client, server, 20.0, duration_s=0.5))
            assert timed.ok and timed.result is not None, timed.error
            result = timed.result
            assert result.bytes == result.sent_bytes == result.messages * 256 * KIB > 0
            # The timed phase ends at a message boundary after 0.5 s, confirmed an RTT later.
            assert 0.5 <= result.elapsed_s < 0.5 + 2.0
            assert timed.frames is not None and timed.frames.data_up.bytes >= result.bytes


def _credit_before(times: list[int], increments: list[int], t_ns: int) -> int:
    return sum(inc for t, inc in zip(times, increments, strict=True) if t <= t_ns)


def _known_until(times: tuple[int, ...], count: int, closed_ns: int) -> int:
    """Credit is known exactly up to the last recorded update when some were not recorded."""
    return times[-1] if count > len(times) else closed_ns


def _check_in_flight(conn: TapConnection, delay_down_ms: float) -> tuple[int, float]:
    """Every DATA mark on "up" within the credit the client could have had; returns the
    marks checked and the largest fraction of the allowed bytes ever in use."""
    up, down = conn.up, conn.down
    initial_stream = _server_initial_window(down)
    conn_times = list(down.conn_window_updates.first_t_ns)
    conn_incs = list(down.conn_window_updates.first)
    upload_sid = max(u.stream_id for u in down.stream_window_first)
    stream = [u for u in down.stream_window_first if u.stream_id == upload_sid]
    until = min(
        _known_until(
            down.conn_window_updates.first_t_ns, down.conn_window_updates.count, conn.closed_ns
        ),
        _known_until(
            tuple(u.t_ns for u in down.stream_window_first),
            down.stream_window_updates.count,
            conn.closed_ns,
        ),
    )
    lag = int(delay_down_ms * 1e6) - EARLY_DELIVERY_NS
    checked, busiest = 0, 0.0
    before_upload = up.data_marks[0][1] if up.data_marks[0][1] < KIB else 0  # the warm-up Ping
    for t_ns, data_bytes in up.data_marks:
        if t_ns > until:
            break
        conn_allowed = 65_535 + _credit_before(conn_times, conn_incs, t_ns - lag)
        stream_credit = sum(u.increment for u in stream if u.t_ns <= t_ns - lag)
        stream_allowed = initial_stream + stream_credit
        assert data_bytes <= conn_allowed, (t_ns, data_bytes, conn_allowed)
        assert data_bytes - before_upload <= stream_allowed, (t_ns, data_bytes, stream_allowed)
        busiest = max(busiest, (data_bytes - before_upload) / stream_allowed)
        checked += 1
    return checked, busiest


def _server_initial_window(down: DirectionSummary) -> int:
    first = next(s for s in down.settings if not s.ack)
    return first.values.get("INITIAL_WINDOW_SIZE", 65_535)


def test_h2_never_has_more_in_flight_than_the_servers_windows_allow() -> None:
    """From the tap: bytes the client sent by time t <= its initial windows plus the server's
    WINDOW_UPDATEs that could have reached it by then (stamped at the proxy at least one down
    delay earlier), on the connection layer and on the upload's stream."""
    trial = upload(H2, SMALL_SERVER, 20.0, duration_s=1.0)
    with Topology(warm_up=False) as topo:
        since = now_ns()
        measured = topo.measure(trial)
        assert measured.ok, measured.error
        conns = topo.proxy(trial.server, trial.link).new_connections(since, 1, 3.0)
    assert len(conns) == 1
    checked, busiest = _check_in_flight(conns[0], trial.link.delay_down_ms)
    assert checked >= 20  # the check saw a real stretch of the upload
    assert busiest >= 0.5  # ... and the sender did use the window it had (window-bound)


def test_a_static_server_window_bounds_upload_throughput() -> None:
    """16 KiB messages, server window 64 KiB, 50 ms: C-core's extra credit is at most one
    message (min(bytes missing, 1 MiB)), so each RTT carries at most 64 + 16 KiB.

    Upper tolerance +10%: the delay line can fire ~1 ms early (2% of 50 ms) and frames add
    9 bytes per 16 KiB; the measured time also includes the final round trip, which only
    lowers the result. Lower bar half of window/RTT: the processes are nearly idle at
    ~1.5 MiB/s, so only a grossly broken sender (or a machine stalled for 0.5 s) misses it.
    """
    bound = (64 + 16) * KIB / 0.050 / MIB
    with Topology(warm_up=False) as topo:
        for client in (H2, GRPCIO):
            trial = upload(client, SMALL_SERVER, 50.0, duration_s=1.0, message_bytes=16 * KIB)
            m = topo.measure(trial)
            assert m.ok and m.result is not None and m.theory_mib_s is not None, m.error
            assert 0.5 * m.theory_mib_s <= m.result.throughput_mib_s <= bound * 1.10, client.kind


def test_the_servers_extra_credit_lifts_a_64KiB_window_with_256KiB_messages() -> None:
    """The note the kit prints, checked: with 256 KiB messages C-core grants up to 256 KiB
    more, so "64 KiB" carries well over 64 KiB per RTT (measured ~3.4x), and never more
    than 64 + 256 KiB per RTT (+10%, as above)."""
    with Topology(warm_up=False) as topo:
        m = topo.measure(upload(H2, SMALL_SERVER, 20.0, duration_s=1.0))
    assert m.ok and m.result is not None and m.theory_mib_s is not None, m.error
    assert m.result.throughput_mib_s >= 1.5 * m.theory_mib_s
    assert m.result.throughput_mib_s <= (64 + 256) * KIB / 0.020 / MIB * 1.10
    assert m.frames is not None and max(m.frames.server.conn_window_updates.first) > 64 * KIB
    assert any("extra credit" in n for n in m.result.notes)


@pytest.mark.parametrize(
    ("client", "how"), [("h2", "kill"), ("grpcio", "kill"), ("h2", "freeze"), ("grpcio", "freeze")]
)
def test_an_upload_to_a_server_that_dies_fails_in_seconds(
    client: str, how: str, tmp_path: Path
) -> None:
    """A killed server fails the upload at once (the connection resets); a frozen one when
    the upload's deadline passes: the 2 s timed phase + 5 s to drain, then teardown (a
    stopped server is continued after SIGTERM). Never the whole 60 s --timeout, never a
    traceback. The server is stopped 1 s into the measured run (not the warm-up's)."""
    records = tmp_path / "runs.jsonl"
    duration, limit_s = ("30s", 10.0) if how == "kill" else ("2s", 15.0)
    cmd = [sys.executable, "-m", "kit.cli", "run", "--workload", "upload", "--client", client,
           "--rtt", "20ms", "--server-window", "1MiB", "--duration", duration,
           "--records", str(records)]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        server = child_of(proc.pid, "servers.grpcio_server", 20.0)
        role = f"kit.clients.{'h2' if client == 'h2' else 'grpcio_client'}"
        # The client worker runs the discarded warm-up run, then the measured one: the
        # measured run is the second connection it opens.
        nth_connection(child_of(proc.pid, role, 20.0), 2, 20.0)
        time.sleep(1.0)  # it has connected and warmed its connection; the upload is under way
        if how == "kill":
            server.send_signal(signal.SIGKILL)
        else:
            server.suspend()
        stopped = time.monotonic()
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - stopped
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 4, (out, err)
    assert took < limit_s, f"failed {took:.1f} s after the server was stopped"
    failed = [line for line in out.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and "Traceback" not in out + err and "KeyError" not in out + err
    if how == "freeze":
        assert "the server stopped taking the upload" in failed[0]
    saved = read_records(records).measurements
    assert len(saved) == 1 and saved[0].status == "failed" and saved[0].error
    assert "\n" not in saved[0].error


def test_run_upload_h2_with_a_server_window_end_to_end(tmp_path: Path) -> None:
    out = kit_here("run", "--workload", "upload", "--rtt", "20ms", "--server-window", "64KiB",
              "--client", "h2", "--duration", "0.5s", "--json",
              "--records", str(tmp_path / "r.jsonl"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["workload"] == "upload" and data["server_window_mode"] == "static"
    assert data["server_window_bytes"] == 64 * KIB
    assert data["theory_mib_s"] == pytest.approx(64 * KIB / 0.020 / MIB)
    assert data["result_bytes"] == data["result_sent_bytes"] > 0
    assert data["result_credit_wait_s"] > 0
    assert data["frames_server_settings"]["INITIAL_WINDOW_SIZE"] == 64 * KIB
    assert any("extra credit" in n for n in data["result_notes"])


def test_run_upload_grpcio_with_server_mode_and_option_end_to_end(tmp_path: Path) -> None:
    """--server-option reaches the server: bdp-off + lookahead 256 KiB is on the wire."""
    out = kit_here("run", "--workload", "upload", "--rtt", "10ms", "--server-mode", "bdp-off",
              "--server-option", "grpc.http2.lookahead_bytes=262144", "--client", "grpcio",
              "--message-size", "64KiB", "--duration", "0.4s",
              "--records", str(tmp_path / "r.jsonl"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "server receive window" in out.stdout and "bdp-off" in out.stdout
    assert "INITIAL_WINDOW_SIZE=262144" in out.stdout  # the server's SETTINGS, from the tap
    assert "extra credit" in " ".join(out.stdout.split())  # the table wraps long notes
    (record,) = read_records(tmp_path / "r.jsonl").measurements
    assert record.trial.server.channel_options == (("grpc.http2.lookahead_bytes", 262144),)
    assert record.result is not None and record.result.bytes == record.result.sent_bytes > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--workload", "upload", "--server-mode", "static"], "--server-mode"),
        (["run", "--server-window", "3GiB"], "--server-window"),
        (["run", "--server-option", "bdp_probe=0"], "--server-option"),
        (["serve", "--server-window", "64KiB", "--server-mode", "bdp-off"], "--server-window"),
    ],
)
def test_bad_server_flags_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    out = kit_here(*args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kit: error:") and message in lines[0]


def _server_settings(port: int) -> dict[int, int]:
    """Open a raw HTTP/2 connection and read the server's first SETTINGS frame."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + SettingsFrame(0).serialize())
        data = b""
        while len(data) < 9 or len(data) < 9 + int.from_bytes(data[:3], "big"):
            chunk = sock.recv(65536)
            assert chunk, "the server closed the connection"
            data += chunk
    frame, length = Frame.parse_frame_header(memoryview(data[:9]))
    frame.parse_body(memoryview(data[9 : 9 + length]))
    assert isinstance(frame, SettingsFrame)
    return dict(frame.settings)


@pytest.mark.parametrize("stack", ["grpcio", "grpc-go", "grpc-java", "grpc-js", "tonic"])
def test_serve_with_a_server_window_end_to_end(stack: str) -> None:
    """``kit serve`` (``--server`` a stack: its program, in the foreground) with a 64 KiB
    window: on the wire, and Ctrl-C stops it with nothing left running."""
    need_built(stack)
    cmd = [sys.executable, "-m", "kit.cli", "serve", "--listen", "127.0.0.1:0",
           "--server", stack, "--server-window", "64KiB"]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("serving on 127.0.0.1:") and "server static 64 KiB" in first
        assert stack == "grpcio" or stack in first
        # Where to reach it, then (C-core) the extra-credit note.
        banner = [proc.stdout.readline() for _ in range(3 if stack == "grpcio" else 2)]
        assert stack != "grpcio" or any("extra credit" in line for line in banner), banner
        port = int(first.split()[2].rsplit(":", 1)[1])
        assert _server_settings(port)[0x4] == 64 * KIB  # SETTINGS_INITIAL_WINDOW_SIZE
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0


def test_compare_a_server_candidate_end_to_end(tmp_path: Path) -> None:
    out = kit_here("compare", "--workload", "upload", "--rtt", "20ms", "--duration", "0.4s",
              "--rounds", "2", "--baseline", "server:window=64KiB",
              "--candidate", "server:window=4MiB", "--records", str(tmp_path / "c.jsonl"),
              "--json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    (data,) = json.loads(out.stdout)["comparisons"]
    rows = {r["name"]: r for r in data["rows"]}
    assert rows["server:window=4MiB"]["label"] == "faster"  # ~4x at 20 ms, far above noise
    assert rows["baseline"]["runs_ok"] == 4
    saved = read_records(tmp_path / "c.jsonl").measurements
    assert {m.trial.server.window_bytes for m in saved} == {64 * KIB, 4 * MIB}
    assert all(m.trial.workload.kind == "upload" for m in saved)


def test_tables_only_uploads_quick_end_to_end(tmp_path: Path) -> None:
    """The uploads table from a stored quick run, three cells measured again: one per RTT,
    one per client, and the client-window row (see tables_resume)."""
    take_out = {
        "table5-rtt20ms/h2-server-64KiB",
        "table5-rtt103ms/grpcio-server-1.4MB",
        "table5-rtt103ms/h2-server-4MiB-client-16MiB",
    }
    resumed = resume_quick_table("uploads", take_out, tmp_path)
    text = resumed.text
    assert "## Table 5" in text and "### RTT 20 ms" in text and "### RTT 103 ms" in text
    assert "## Table 1" not in text and "HAProxy" in text
    cells = resumed.cells
    assert len(cells) == 2 * 8 + 1 + 2  # both RTTs, the client-window row, 2 control copies
    assert all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    assert all(c["trial"]["workload"]["kind"] == "upload" for c in cells)
    assert "uploads: the client's receive window" in resumed.done.stdout + text
