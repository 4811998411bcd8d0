"""The link's bottleneck end to end: `kit run --rate`, `kit proxy --rate --jitter`, the
estimator table, and bad input. Real server, real delay line, real clients over 127.0.0.1.

Physics with stated tolerances, never absolute speeds: the rates used here (20-100 Mbit/s)
are far below what the machine carries, so a loaded machine moves them by little.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import kit_here
from relay_support import delay_line, run, upstream
from tables_resume import resume_quick_table

from kit.plan.programs import DELAYLINE_ENV

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def run_json(tmp_path: Path, *args: str, line: str | None = None) -> dict[str, Any]:
    """``kit run ARGS --json``, through the delay line ``line`` (None: the kit's choice)."""
    env = None if line is None else {**os.environ, DELAYLINE_ENV: line}
    proc = kit_here("run", *args, "--json", "--records", str(tmp_path / "r.jsonl"), env=env)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_rate_bounds_a_large_window(tmp_path: Path, line: str) -> None:
    """Window 4 MiB >> BDP (122 KiB): throughput follows the rate, BDP and theory reported."""
    data = run_json(
        tmp_path, "--rtt", "20ms", "--rate", "50Mbit", "--client", "h2", "--window", "4MiB",
        "--duration", "1.5s", line=line,
    )  # fmt: skip
    assert data["rate_up_bits_s"] == data["rate_down_bits_s"] == 50e6
    assert data["bdp_bytes"] == 125_000 and data["jitter_ms"] == 0.0
    assert data["theory_mib_s"] == pytest.approx(50e6 / 8 / 2**20, rel=1e-3)  # 4 figures
    assert data["window_final_bytes"] == 4 * 2**20
    # Whole phase: the first RTT carries nothing (1.3% of 1.5 s) -> at least 0.93 of the rate;
    # never above it by more than 2% (the link serialises every byte).
    assert 0.93 <= data["efficiency"] <= 1.02, data["efficiency"]
    assert data["throughput_mbit_s"] == pytest.approx(data["throughput_mib_s"] * 8.388608, rel=1e-3)
    # Steady state from the delivery trace (2 ms buckets): the rate itself.
    assert data["steady_bits_s"] == pytest.approx(50e6, rel=0.03)
    assert data["ramp_90_ms"] is not None and data["ramp_90_ms"] < 200
    # The window above the BDP waits at the bottleneck.
    assert data["peak_queued_bytes"] > 1 * 2**20


def test_small_window_follows_window_over_rtt(tmp_path: Path, line: str) -> None:
    """Window 64 KiB < BDP (250 KiB at 100 Mbit/s x 20 ms): the min rule picks window / RTT."""
    data = run_json(
        tmp_path, "--rtt", "20ms", "--rate", "100Mbit", "--client", "h2", "--window", "64KiB",
        "--duration", "1s", line=line,
    )  # fmt: skip
    assert data["theory_mib_s"] == pytest.approx(64 * 1024 / 0.020 / 2**20, rel=1e-3)
    # Each window turn also waits for the 64 KiB burst to cross the bottleneck (5.2 ms at
    # 100 Mbit/s), so the ceiling is 20 / 25.2 = 0.79 of window / RTT, times the chain's own
    # ~0.93 at 20 ms (see the README): ~0.74; measured 0.66-0.74 here. Never above the bound.
    assert 0.55 <= data["efficiency"] <= 1.03, data["efficiency"]


@pytest.mark.parametrize("rtt_ms", [100, 200])
def test_long_rtts_work(tmp_path: Path, rtt_ms: int, line: str) -> None:
    """100 and 200 ms: asymmetric rates, jitter, a seed; the down rate binds."""
    data = run_json(
        tmp_path, "--rtt", f"{rtt_ms}ms", "--rate-down", "20Mbit", "--rate-up", "5Mbit",
        "--jitter", "1ms", "--seed", "7", "--client", "h2", "--window", "4MiB",
        "--duration", "2s", line=line,
    )  # fmt: skip
    assert data["rate_down_bits_s"] == 20e6 and data["rate_up_bits_s"] == 5e6
    assert data["jitter_ms"] == 1.0 and data["link_seed"] == 7
    assert data["bdp_bytes"] == round(20e6 / 8 * rtt_ms / 1000)
    # The first RTT (5-10% of 2 s) carries nothing, and jitter delays chunks a little.
    assert 0.8 <= data["efficiency"] <= 1.02, data["efficiency"]
    assert data["frames_decodable"]


def test_grpcio_dynamic_window_on_a_rate_limited_link(tmp_path: Path, line: str) -> None:
    """The grpcio client's window is read from the tap too; dynamic theory is the rate."""
    data = run_json(tmp_path, "--rtt", "20ms", "--rate", "100Mbit", "--duration", "1s", line=line)
    assert data["client_window_mode"] == "dynamic"
    assert data["theory_mib_s"] == pytest.approx(100e6 / 8 / 2**20, rel=1e-3)
    assert data["window_final_bytes"] >= 4 * 2**20  # C-core: max(4 MiB, 2 x BDP), low pressure
    assert data["efficiency"] >= 0.85


def test_table_shows_the_link(tmp_path: Path) -> None:
    proc = kit_here(
        "run", "--rtt", "10ms", "--rate", "30Mbit", "--jitter", "0.5ms", "--client", "h2",
        "--window", "1MiB", "--duration", "0.5s", "--records", str(tmp_path / "r.jsonl"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "down 30 Mbit/s, up 30 Mbit/s" in out and "BDP = rate x RTT" in out
    flat = " ".join(out.split())  # the theory names the bound that binds: the rate here
    assert "= the link rate (30 Mbit/s); stream window / RTT (1 MiB / 10 ms) allows" in flat
    assert "+-0.5 ms per chunk (seed 1)" in out and "peak queued at bottleneck" in out


# -- kit proxy --rate --jitter: the standalone delay line ----------------------------------


def test_kit_proxy_with_rate_and_jitter_paces_and_keeps_order(tmp_path: Path, line: str) -> None:
    """A 2 MiB upload through `kit proxy --rate 40Mbit --jitter 2ms` takes its serialisation
    time (0.42 s) and arrives intact and in order."""
    payload = bytes(i % 251 for i in range(2 * 2**20))

    async def main() -> tuple[bytes, float]:
        got: asyncio.Future[tuple[bytes, float]] = asyncio.get_running_loop().create_future()

        async def sink(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            data = b""
            while chunk := await reader.read(1 << 20):
                data += chunk
            got.set_result((data, time.monotonic()))
            writer.close()

        async with upstream(sink) as port:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "kit.cli", "proxy", "--listen", "127.0.0.1:0",
                "--upstream", f"127.0.0.1:{port}", "--rtt", "10ms", "--rate", "40Mbit",
                "--jitter", "2ms", "--seed", "3", cwd=REPO, stdout=asyncio.subprocess.PIPE,
                env={**os.environ, DELAYLINE_ENV: line},
            )  # fmt: skip
            try:
                assert proc.stdout is not None
                first = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()
                assert "rate 40 Mbit/s" in first, first
                assert "jitter +-2 ms (seed 3)" in first, first
                listen_port = int(first.split("listening on 127.0.0.1:")[1].split()[0])
                _, writer = await asyncio.open_connection("127.0.0.1", listen_port)
                start = time.monotonic()
                writer.write(payload)
                await writer.drain()
                writer.write_eof()
                data, end = await asyncio.wait_for(got, 20)
                writer.close()
                return data, end - start
            finally:
                proc.send_signal(signal.SIGINT)
                await asyncio.wait_for(proc.wait(), 10)

    data, elapsed_s = run(main(), 60)
    assert data == payload
    serialise_s = len(payload) * 8 / 40e6
    # At least the serialisation time plus the up delay less the jitter; well under 3x.
    assert serialise_s + 0.003 <= elapsed_s <= 3 * serialise_s, elapsed_s


@pytest.mark.parametrize("rate", [None, 50e6])
def test_jitter_never_reorders_through_the_real_proxy(rate: float | None, line: str) -> None:
    """Numbered messages sent back to back, jitter (8 ms) far above the gap between them and
    above the delay (clamped at 0): they arrive in order, every byte."""
    count, size = 400, 1000

    async def main() -> bytes:
        got: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

        async def sink(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            data = b""
            while chunk := await reader.read(65536):
                data += chunk
            got.set_result(data)
            writer.close()

        async with (
            upstream(sink) as port,
            delay_line(
                port, line, delay_up_ms=2.0, jitter_ms=8.0, seed=11, rate_up_bits_s=rate
            ) as proxy,
        ):
            _, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            for i in range(count):
                writer.write(i.to_bytes(4, "big") * (size // 4))
                await writer.drain()
                await asyncio.sleep(0.0005 if i % 4 else 0)
            writer.write_eof()
            data = await asyncio.wait_for(got, 20)
            writer.close()
            return data

    data = run(main(), 60)
    assert len(data) == count * size
    numbers = [int.from_bytes(data[i : i + 4], "big") for i in range(0, len(data), 4)]
    assert numbers == sorted(numbers)


# -- the estimator table ---------------------------------------------------------------------


def test_quick_links_table(tmp_path: Path) -> None:
    """The links table from a stored quick run, two cold cells measured again: each
    estimator, on each rate (see tables_resume)."""
    take_out = {"table6-links/1Gbit-20ms-grpcio-dynamic", "table6-links/100Mbit-20ms-h2-dynamic"}
    resumed = resume_quick_table("links", take_out, tmp_path)
    cells = resumed.cells
    assert len(cells) == 4 * 3 + 1  # 4 links x (2 estimators + static BDP), control twice
    assert all(c["status"] == "ok" for c in cells), [c["error"] for c in cells]
    assert {c["trial"]["link"]["rate_down_bits_s"] for c in cells} == {100e6, 1e9}
    assert all(c["trial"]["workload"]["warmup"] is False for c in cells)  # cold starts
    text = resumed.text
    assert "## Table 6" in text and "final window / BDP" in text
    assert "links: no window carries more than the rate" in text
    records = tmp_path / "links.jsonl"
    rerendered = kit_here("report", str(records), "--markdown")
    # the file also links the figures written beside it; the re-rendering is the rest
    assert rerendered.returncode == 0 and text.startswith(rerendered.stdout.rstrip("\n"))
    # its dynamic cells' growth is drawn; its cells are no study of static windows
    assert (tmp_path / "window-growth.png").exists()
    assert not (tmp_path / "throughput-vs-window.png").exists()


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "args", "needle"),
    [
        ("run", ["--rate", "0Mbit"], "--rate"),
        ("run", ["--rate", "-5Mbit"], "--rate"),
        ("run", ["--rate", "100"], "--rate"),  # no unit: bits or bytes?
        ("run", ["--rate-up", "fast"], "--rate-up"),
        ("run", ["--rate-down", "0"], "--rate-down"),
        ("run", ["--jitter", "-1ms"], "--jitter"),
        ("run", ["--jitter", "2"], "--jitter"),
        ("run", ["--rate", "2Kbit"], "--rate: at 2 kbit/s one 16 KiB frame takes 66 s"),
        ("run", ["--direct", "--rtt", "0", "--rate", "1Gbit"], "--direct"),
        ("run", ["--rate-down", "5Kbit", "--timeout", "10s"], "--rate-down"),
        ("run", ["--seed", "-3", "--jitter", "1ms"], "--seed"),
        ("proxy", ["--rate", "0Gbit"], "--rate"),
        ("proxy", ["--jitter", "-2ms"], "--jitter"),
        ("run", ["--loss", "1%"], "--loss: only on the packet link (--link packet)"),
        ("run", ["--link", "packet", "--loss", "60%"], "--loss"),
        ("run", ["--link", "packet", "--loss-burst", "1%"], "LOSS:LENGTH"),
        ("run", ["--link", "packet", "--loss", "1%", "--loss-burst", "1%:4"], "not both"),
        ("run", ["--link", "packet", "--queue", "20ms"], "--queue: a queue in time needs"),
        ("run", ["--link", "packet", "--direct", "--rtt", "0"], "takes no --target"),
        ("run", ["--link", "wire"], "--link"),
        ("run", ["--rate-steps", "100Mbit"], "RATE:DURATION"),
        ("run", ["--rate-steps", "1Mbit:1s", "--rate", "1Mbit"], "--rate"),
        ("run", ["--trace", "/nonexistent.trace"], "--trace: cannot read"),
        ("proxy", ["--control", "10.0.0.1:80"], "--control"),
    ],
)
def test_bad_link_input_is_one_line_and_exit_2(command: str, args: list[str], needle: str) -> None:
    proc = kit_here(command, *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], proc.stderr


# -- kit compare on a link with a bottleneck -------------------------------------------------


def test_compare_on_a_rate_limited_link(tmp_path: Path) -> None:
    """A window far above the BDP and one far below it, on 20 Mbit/s: the small one is slower,
    and the setup names the link."""
    proc = kit_here(
        "compare", "--rtt", "20ms", "--rate", "20Mbit", "--jitter", "0.5ms",
        "--duration", "400ms", "--rounds", "1",
        "--baseline", "h2:window=2MiB,conn-window=2MiB",
        "--candidate", "h2:window=16KiB,conn-window=16KiB",
        "--json", "--records", str(tmp_path / "c.jsonl"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "rate 20 Mbit/s, jitter +-0.5 ms (seed 1)" in proc.stdout
    lines = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    cells = [x for x in lines if x.get("kind") == "measurement"]
    assert {c["trial"]["link"]["rate_down_bits_s"] for c in cells} == {20e6}
    by_key: dict[str, list[float]] = {}
    for c in cells:
        by_key.setdefault(c["tags"]["key"], []).append(
            c["result"]["bytes"] / c["result"]["elapsed_s"]
        )
    big = max(by_key["baseline"])
    small = max(v for k, vs in by_key.items() if k != "baseline" for v in vs)
    assert big <= 20e6 / 8 * 1.02  # the link's rate bounds it
    assert small < big / 2  # 16 KiB / 20 ms = 6.6 Mbit/s, a third of the rate


def test_compare_preset_refuses_a_rate() -> None:
    proc = kit_here("compare", "--preset", "windows", "--rate", "1Gbit")
    assert proc.returncode == 2 and "--rate" in proc.stderr


def test_rate_steps_give_their_mean_rate_on_the_stream_link(tmp_path: Path, line: str) -> None:
    """40 then 10 Mbit/s, 200 ms each: a 1.6 s phase holds four loops, whatever phase of
    the loop it starts in, so goodput is the mean (25 Mbit/s): at most +3% over it, at least
    0.85 of it (the first RTT carries nothing, and the machine is shared)."""
    data = run_json(
        tmp_path, "--rtt", "10ms", "--rate-steps", "40Mbit:200ms,10Mbit:200ms", "--client", "h2",
        "--window", "4MiB", "--duration", "1.6s", line=line,
    )  # fmt: skip
    assert 0.85 * 25 <= data["throughput_mbit_s"] <= 1.03 * 25, data["throughput_mbit_s"]


def step_trace(path: Path) -> Path:
    """A mahimahi trace of a 200 ms loop: 3 deliveries of 1500 bytes a ms for 100 ms (36
    Mbit/s), then 1 a ms (12 Mbit/s): a mean of 24 Mbit/s."""
    lines = [str(ms) for ms in range(1, 201) for _ in range(3 if ms <= 100 else 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_mahimahi_trace_gives_its_mean_rate_on_the_stream_link(tmp_path: Path, line: str) -> None:
    """The trace's mean, 24 Mbit/s, over a 1.6 s phase (eight loops, whatever phase of the
    loop it starts in): at most +3% over it, at least 0.85 of it (the first RTT carries
    nothing; measured 0.97-0.98 here). A 512 KiB window keeps the bottleneck busy at 36
    Mbit/s x 10 ms."""
    trace = step_trace(tmp_path / "step.trace")
    data = run_json(
        tmp_path, "--rtt", "10ms", "--trace", str(trace), "--client", "h2", "--window", "512KiB",
        "--duration", "1.6s", line=line,
    )  # fmt: skip
    assert 0.85 * 24 <= data["throughput_mbit_s"] <= 1.03 * 24, data["throughput_mbit_s"]
