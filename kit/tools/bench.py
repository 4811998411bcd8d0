"""``make bench``: speed and accuracy of the measurement path, as ratios.

Measured side by side in one run (these machines are shared and noisy, so no absolute
speed is a pass/fail criterion):
0. the delay lines side by side (``kit.tools.linebench``): the compiled line, the Python
   line, toxiproxy and no proxy: bulk TCP at RTT 0 and 10 ms and CPU per GiB, the delay
   error against the floor at 10 and 20 ms (alone, beside a 1 Gbit/s bulk transfer and,
   reported, beside a full-speed one), h2 static
   1 MiB at 5 ms; each goal a ratio to the floor or to toxiproxy;
1. delay accuracy (of the kit's delay line: the compiled one where built) against the machine's floor (``kit.tools.floorbench``): a blocking
   ping-pong through the delay line beside the same ping-pong with no proxy, the echo
   sleeping the RTT itself, interleaved, at 5 ms, 20 ms, 2+10 ms and 5 ms next to a bulk
   transfer (bar: p50 <= floor + 0.05 ms, p99 <= floor + 0.3 ms; + 1 ms beside the bulk),
   the levers beside their line (the Python line's GC, the compiled line's light threads),
   and a neighbour's 10 ms ping-pong during a
   max-rate PING flood, with and without the tap (bar: p50 <= floor + 1 ms); then with
   busy-polling endpoints at 5 and 20 ms (minus the zero-delay forwarding RTT);
2. relay ceiling at zero delay: bulk bytes through the delay line / direct, same run;
3. h2 client efficiency with static windows (bar: >= 0.90 where window/RTT <= 200 MiB/s,
   never above 1.05);
4. at RTT 0, h2 client / grpcio client throughput, interleaved (bar: >= 1.0);
5. the link with a bottleneck (``kit.tools.linkbench``): rate accuracy and the machine's
   ceiling, the min rule, the jitter distribution, the estimators on 100 Mbit/s x 50 ms.
6. the packet link (``kit.tools.packetbench``): its delay error beside the stream delay
   line's (the same ping-pong, interleaved), and the zero-loss check: packet / stream on
   window-bound cells, steady state within 10% (the whole phase, TCP's slow start
   included, reported beside it), and TCP's slow start after an idle second; then its two
   forwarders side by side (``kit.tools.fwdbench``: the compiled one / the Python one, on
   1 Gbit/s x 10 ms, the ceiling at MTU 1500 and 9000, the delay error, the kit's h2 cell
   / the stream link's);
7. the frame tap's cost (``kit.tools.tapbench``): forwarding rate with the tap / without,
   for a 17-byte PING flood, empty DATA frames, 16 KiB DATA frames and unary-like calls
   (bar: >= 0.8: the decoder skips rather than slow the link);
8. the full ``make tables`` run, read from its newest records in results/ (not run by the
   bench): its time (bar: 12 minutes) and its checks (bar: none fails).

``python -m kit.tools.bench --floor`` runs only part 1's
floor lines; ``--links`` only part 5; ``--lines`` only part 0. ``python -m
kit.tools.packetbench`` runs only part 6 (``python -m kit.tools.fwdbench`` only its
forwarders).
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import tempfile
from pathlib import Path

from tabulate import tabulate

from kit.analysis.cells import efficiency
from kit.plan.processes import LOOPBACK
from kit.plan.programs import PROXY_PROGRAMS
from kit.plan.trial import ClientConfig, Link, Trial, Workload
from kit.plan.units import KIB, MIB
from kit.quantile import percentile
from kit.tools.benchline import BenchLine
from kit.tools.floorbench import Errors, against_floor, flood_neighbour, kit_line
from kit.tools.fwdbench import forwarder_bench
from kit.tools.linebench import _bulk_mib_s, _sink_server, line_bench
from kit.tools.linkbench import link_bench
from kit.tools.packetbench import packet_bench
from kit.tools.pingpong import round_trips_ms
from kit.tools.tablesbench import tables_lines
from kit.tools.tapbench import proxy, read_wake_lag_us, tap_ratio
from kit.topology.topology import Topology

# Levers measured beside their delay line's default (the environment of its process): the
# Python line's garbage collector, the compiled line's light threads (real-time, spinning).
LEVERS = {
    "python": {"GC frozen": {"KIT_DELAYLINE_GC": "freeze"}, "GC off": {"KIT_DELAYLINE_GC": "off"}},
    "compiled": {"light threads off": {"KIT_LINKD_LIGHT": "off"}},
}


def delay_accuracy(rtt_ms: float, pings: int = 200) -> tuple[float, float]:
    """(p50, p99) of measured RTT minus configured RTT minus the zero-delay forwarding RTT."""
    with socket.create_server((LOOPBACK, 0)) as listener:
        port = listener.getsockname()[1]
        with proxy(port, 0.0, None) as zero:
            forwarding = statistics.median(round_trips_ms(zero.port, listener, 50))
        with proxy(port, rtt_ms / 2, None) as delayed:
            rtts = round_trips_ms(delayed.port, listener, pings)
    errors = [r - rtt_ms - forwarding for r in rtts]
    return percentile(errors, 50), percentile(errors, 99)


def relay_ratio(repeats: int = 3) -> tuple[float, float, float]:
    """(median direct MiB/s, median via proxy MiB/s, ratio), interleaved."""
    direct: list[float] = []
    proxied: list[float] = []
    with _sink_server() as port, proxy(port, 0.0, None) as zero:
        for _ in range(repeats):
            direct.append(_bulk_mib_s(port))
            proxied.append(_bulk_mib_s(zero.port))
    d, p = statistics.median(direct), statistics.median(proxied)
    return d, p, p / d


def h2_efficiency(
    topo: Topology, rtt_ms: float, window: int, duration_s: float = 1.5
) -> float | None:
    client = ClientConfig(kind="h2", window_mode="static", window_bytes=window)
    m = topo.measure(
        Trial(link=Link.from_rtt(rtt_ms), client=client, workload=Workload(duration_s=duration_s))
    )
    return efficiency(m.throughput_mib_s, m.theory_mib_s) if m.ok else None


def h2_vs_grpcio_at_rtt0(topo: Topology, repeats: int = 3) -> tuple[float, float]:
    """(median h2 MiB/s / median grpcio MiB/s, median grpcio MiB/s) at RTT 0, interleaved."""
    h2_rates: list[float] = []
    grpcio_rates: list[float] = []
    workload = Workload(duration_s=1.5)
    h2 = ClientConfig(kind="h2", window_mode="static", window_bytes=16 * MIB)
    for _ in range(repeats):
        for config, out in ((h2, h2_rates), (ClientConfig(), grpcio_rates)):
            m = topo.measure(Trial(client=config, workload=workload))
            if m.ok and m.throughput_mib_s:
                out.append(m.throughput_mib_s)
    if not h2_rates or not grpcio_rates:
        return 0.0, 0.0
    return statistics.median(h2_rates) / statistics.median(grpcio_rates), statistics.median(
        grpcio_rates
    )


def _efficiency_lines(topo: Topology) -> list[BenchLine]:
    lines = []
    for rtt_ms, window in (
        (20.0, 64 * KIB),
        (20.0, 256 * KIB),
        (20.0, MIB),
        (5.0, 64 * KIB),
        (5.0, 256 * KIB),
    ):
        eff = h2_efficiency(topo, rtt_ms, window)
        ok = None if eff is None else 0.90 <= eff <= 1.05
        value = "failed" if eff is None else f"{eff:.3f}"
        lines.append(
            BenchLine(
                f"h2 static {window // KIB} KiB @ {rtt_ms:g} ms: efficiency",
                value,
                "0.90 .. 1.05",
                ok,
            )
        )
    return lines


def tap_lines() -> list[BenchLine]:
    lines = []
    with tempfile.TemporaryDirectory(prefix="kit-bench-") as tmp:
        workdir = Path(tmp)
        for kind in ("ping", "empty-data", "large-data", "unary"):
            ratio = tap_ratio(kind, workdir)
            lines.append(
                BenchLine(
                    f"tap / no tap forwarding, {kind} frames",
                    f"{ratio:.2f}",
                    ">= 0.8",
                    ratio >= 0.8,
                )
            )
        lines += flood_lines(workdir)
    return lines


FLOOR_CASES = (
    ("5 ms", 2.5, 2.5, False),
    ("20 ms", 10.0, 10.0, False),
    ("2+10 ms asymmetric", 2.0, 10.0, False),
    ("5 ms, bulk on another connection", 2.5, 2.5, True),
)
P50_OVER_FLOOR_MS = 0.05
P99_OVER_FLOOR_MS = 0.3
P99_OVER_FLOOR_BULK_MS = 1.0


def _over_floor(name: str, errs: Errors, floor: Errors, p99_bar: float) -> BenchLine:
    d50, d99 = errs.p50_ms - floor.p50_ms, errs.p99_ms - floor.p99_ms
    return BenchLine(
        name,
        f"p50 {errs.p50_ms:.3f} / p99 {errs.p99_ms:.3f} ms; floor {floor.p50_ms:.3f} / "
        f"{floor.p99_ms:.3f}; over the floor {d50:+.3f} / {d99:+.3f}",
        f"over the floor p50 <= +{P50_OVER_FLOOR_MS:g}, p99 <= +{p99_bar:g} ms",
        d50 <= P50_OVER_FLOOR_MS and d99 <= p99_bar,
    )


def floor_lines() -> list[BenchLine]:
    """Delay error (RTT - configured) with blocking endpoints, each beside its floor: the
    same ping-pong without a proxy, the echo sleeping the RTT itself (interleaved)."""
    lines = []
    for name, up, down, bulk in FLOOR_CASES:
        found = against_floor(up, down, bulk=bulk)
        bar = P99_OVER_FLOOR_BULK_MS if bulk else P99_OVER_FLOOR_MS
        lines.append(_over_floor(f"delay error @ {name}", found["proxy"], found["floor"], bar))
    return lines


def lever_lines(levers: dict[str, dict[str, dict[str, str]]]) -> list[BenchLine]:
    """Each lever's delay line beside its line's default and the floor, same minute, 5 ms."""
    lines = []
    for kind, by_name in levers.items():
        program = PROXY_PROGRAMS[kind]
        if program.missing() is not None:
            continue
        variants = {"default": {}, **by_name}
        starters = {name: kit_line(program, env) for name, env in variants.items()}
        found = against_floor(2.5, 2.5, starters=starters, rounds=10)
        floor = found.pop("floor")
        lines += [
            _over_floor(f"delay error @ 5 ms, {kind} line, {name}", errs, floor, P99_OVER_FLOOR_MS)
            for name, errs in found.items()
        ]
    return lines


def flood_lines(workdir: Path) -> list[BenchLine]:
    """A 10 ms ping-pong beside a max-rate PING flood on another connection, with and without
    the tap, against the floor measured meanwhile."""
    lines = []
    for name, tap in (("", None), (" (--tap-file)", workdir / "flood.jsonl")):
        found, rate = flood_neighbour(5.0, tap=tap)
        errs, floor = found["neighbour"], found["floor"]
        d50 = errs.p50_ms - floor.p50_ms
        lines.append(
            BenchLine(
                f"neighbour 10 ms ping-pong during a PING flood{name}",
                f"p50 {errs.p50_ms:.3f} / p99 {errs.p99_ms:.3f} ms; floor {floor.p50_ms:.3f} / "
                f"{floor.p99_ms:.3f}; flood alone {rate:.0f} MiB/s",
                "p50 <= floor + 1 ms",
                d50 <= 1.0,
            )
        )
    return lines


def wake_lag_line() -> BenchLine:
    p50, p99 = read_wake_lag_us()
    return BenchLine(
        "idle reader wake-up after the kernel has the bytes (SO_TIMESTAMPNS)",
        f"p50 {p50:.0f} / p99 {p99:.0f} us",
        "report: what kernel receive stamps would take off the delay error",
        None,
    )


def run_bench() -> list[BenchLine]:
    lines = line_bench(_note)
    lines += [*floor_lines(), *lever_lines(LEVERS), *tap_lines(), wake_lag_line()]
    for rtt_ms in (5.0, 20.0):
        p50, p99 = delay_accuracy(rtt_ms)
        lines.append(
            BenchLine(
                f"delay error @ {rtt_ms:g} ms, busy-poll endpoints, p50",
                f"{p50:.3f} ms",
                "<= 0.1 ms",
                abs(p50) <= 0.1,
            )
        )
        lines.append(
            BenchLine(
                f"delay error @ {rtt_ms:g} ms, busy-poll endpoints, p99",
                f"{p99:.3f} ms",
                "<= 0.3 ms",
                abs(p99) <= 0.3,
            )
        )
    direct, proxied, ratio = relay_ratio()
    lines.append(
        BenchLine(
            "relay ceiling / direct loopback (RTT 0)",
            f"{ratio:.2f} ({proxied:.0f} / {direct:.0f} MiB/s)",
            "report",
            None,
        )
    )
    with Topology() as topo:
        topo.measure(Trial(workload=Workload(duration_s=0.5)))  # warm the server and proxy
        lines += _efficiency_lines(topo)
        ratio, grpcio = h2_vs_grpcio_at_rtt0(topo)
        lines.append(
            BenchLine(
                "h2 / grpcio throughput at RTT 0",
                f"{ratio:.2f} (grpcio {grpcio:.0f} MiB/s)",
                ">= 1.0",
                ratio >= 1.0,
            )
        )
        lines += link_bench(topo)
        lines += packet_bench(topo)
    lines += forwarder_bench()
    lines += tables_lines()
    return lines


def _note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kit.tools.bench",
        description="Speed and accuracy of the measurement path, as ratios beside the floor.",
    )
    part = parser.add_mutually_exclusive_group()
    part.add_argument("--links", action="store_true", help="only the link bars (about a minute)")
    part.add_argument(
        "--floor", action="store_true", help="only the delay against the floor (about 2 min)"
    )
    part.add_argument(
        "--lines", action="store_true", help="only the delay lines side by side (about 5 min)"
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.links:
        with Topology() as topo:
            lines = link_bench(topo)
    elif args.lines:
        lines = line_bench(_note)
    elif args.floor:
        with tempfile.TemporaryDirectory(prefix="kit-bench-") as tmp:
            lines = [*floor_lines(), *lever_lines(LEVERS), *flood_lines(Path(tmp))]
    else:
        lines = run_bench()
    verdict = {True: "ok", False: "MISSED", None: "-"}
    rows = [(b.name, b.value, b.bar, verdict[b.ok]) for b in lines]
    print(tabulate(rows, headers=["measure", "value", "bar", ""], tablefmt="github"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
