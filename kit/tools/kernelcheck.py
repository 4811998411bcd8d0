"""``python -m kit.tools.kernelcheck``: the ``linux`` window model beside the real kernel.

1. The real kernel: a bulk TCP transfer across the packet link (the kit's forwarder and its
   two network namespaces; both sockets opened from this process, one in each namespace),
   the receiver reading as the kit's paced reader does (``--read-rate``; none: as fast as
   it can). After every read and at least every ``SAMPLE_MS`` it reads its socket's
   ``TCP_INFO``: the window it advertises (``rcv_wnd``), its ``rcv_space`` (DRS) and what
   it received, with what the application copied so far.
2. The model: ``kit run --link packet --client h2 --window-policy linux`` on the same link
   (rate, RTT, queue), the same duration and reader (``--slow-streams 1 --read-rate``);
   its window trace from the record.
3. A table (``kit.analysis.kernel``): time, the kernel's window (advertised + unread),
   its advertised window and rcv_space, the model's window, model / real; and the second
   half's median ratio.

Needs root and /dev/net/tun (the packet link); without them one line says so. Every process
and namespace it starts goes when it ends (the forwarder's children die with it).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from kit.analysis.kernel import Row, Sample, parse_tcp_info, rows, summarize
from kit.clients.h2.policies import linux
from kit.clients.pacing import ReadPacer
from kit.delayline.netns import CLIENT_NS_FD, SERVER_NS_FD, inside, missing
from kit.errors import KitError
from kit.plan.jobs import READ_JITTER, READ_SEED
from kit.plan.packet import SERVER_ADDR, ForwarderConfig
from kit.plan.programs import forwarder_program
from kit.plan.trial import Link
from kit.plan.units import KIB, MIB, parse_duration_ms, parse_rate_bits_s
from kit.topology.processes import spawn

SAMPLE_MS = 5.0
SEND_CHUNK = 256 * KIB
UNPACED_READ = 1 * MIB
CONNECT_TIMEOUT_S = 10.0
MODEL_TIMEOUT_S = 180.0
TCP_INFO_BYTES = 512


@dataclass(frozen=True)
class Check:
    """One comparison: the link and the reader, both sides the same."""

    rate_bits_s: float
    rtt_ms: float
    duration_s: float
    read_rate_bits_s: float | None  # None: the application reads as fast as it can
    server: str = "grpc-go"

    @property
    def link(self) -> Link:
        half = self.rtt_ms / 2
        return Link(half, half, self.rate_bits_s, self.rate_bits_s, kind="packet")


# -- the real kernel ----------------------------------------------------------------------------


@contextlib.contextmanager
def _handle(forwarder_pid: int, ns_fd: int) -> Iterator[int]:
    fd = os.open(f"/proc/{forwarder_pid}/fd/{ns_fd}", os.O_RDONLY)
    try:
        yield fd
    finally:
        os.close(fd)


def _connected_pair(forwarder_pid: int) -> tuple[socket.socket, socket.socket]:
    """(receiver in the client namespace, sender in the server namespace), autotuned: no
    SO_RCVBUF (setting it would switch Linux's auto-tuning off)."""
    with _handle(forwarder_pid, SERVER_NS_FD) as ns, inside(ns):
        listener = socket.create_server((SERVER_ADDR, 0))
    try:
        listener.settimeout(CONNECT_TIMEOUT_S)
        with _handle(forwarder_pid, CLIENT_NS_FD) as ns, inside(ns):
            receiver = socket.create_connection(
                (SERVER_ADDR, listener.getsockname()[1]), timeout=CONNECT_TIMEOUT_S
            )
        sender, _ = listener.accept()
    finally:
        listener.close()
    return receiver, sender


def _send_until_closed(sender: socket.socket, stop: threading.Event) -> None:
    """The source: after the receiver's 1-byte request, as much as TCP takes."""
    chunk = bytes(SEND_CHUNK)
    with contextlib.suppress(OSError):
        sender.recv(1)
        while not stop.is_set():
            sender.sendall(chunk)


def _queued(sock: socket.socket) -> int:
    """Bytes waiting in the socket's receive queue (SIOCINQ)."""
    raw = fcntl.ioctl(sock.fileno(), termios.FIONREAD, struct.pack("i", 0))
    return int(struct.unpack("i", raw)[0])


class _Receiver:
    """The application: reads paced (or not) and samples ``TCP_INFO`` as it goes."""

    def __init__(self, sock: socket.socket, check: Check) -> None:
        self.sock = sock
        rate = check.read_rate_bits_s
        # The h2 client's first slow stream reads with these (``kit.plan.jobs``).
        pacer = ReadPacer(rate / 8, 0, seed=READ_SEED, jitter=READ_JITTER) if rate else None
        self.pacer = pacer
        self.copied = 0
        self.samples: list[Sample] = []
        self.t0_ns = 0

    def sample(self, now_ns: int) -> None:
        raw = self.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_BYTES)
        info = parse_tcp_info(raw)
        t_ms = (now_ns - self.t0_ns) / 1e6
        fields = (info.rcv_wnd, info.rcv_space, info.rcv_ssthresh, info.rcv_rtt_us)
        self.samples.append(Sample(t_ms, self.copied, info.bytes_received, *fields))

    def run(self, duration_s: float) -> list[Sample]:
        self.sock.settimeout(SAMPLE_MS / 1000)
        self.t0_ns = time.monotonic_ns()
        if self.pacer is not None:
            self.pacer.due_ns += self.t0_ns
        self.sock.sendall(b"\x01")
        end_ns = self.t0_ns + round(duration_s * 1e9)
        next_sample = self.t0_ns
        while (now := time.monotonic_ns()) < end_ns:  # bounded by the duration
            self._read(now)
            now = time.monotonic_ns()
            if now >= next_sample:
                self.sample(now)
                next_sample = now + round(SAMPLE_MS * 1e6)
        return self.samples

    def _read(self, now_ns: int) -> None:
        if self.pacer is None:
            with contextlib.suppress(TimeoutError):
                self.copied += len(self.sock.recv(UNPACED_READ))
            return
        if now_ns < self.pacer.due_ns:
            time.sleep(min(SAMPLE_MS / 1000, (self.pacer.due_ns - now_ns) / 1e9))
            return
        want = self.pacer.take(now_ns, _queued(self.sock))
        while want > 0:  # the bytes are queued: recv returns at once
            data = self.sock.recv(want)
            if not data:
                break
            want -= len(data)
            self.copied += len(data)


def measure_kernel(check: Check) -> list[Sample]:
    """The real kernel's receiver across the packet link, sampled."""
    forwarder = spawn("forwarder", forwarder_program(), ForwarderConfig(link=check.link))
    try:
        receiver, sender = _connected_pair(forwarder.pid)
        stop = threading.Event()
        source = threading.Thread(target=_send_until_closed, args=(sender, stop), daemon=True)
        source.start()
        try:
            return _Receiver(receiver, check).run(check.duration_s)
        finally:
            stop.set()
            receiver.close()
            with contextlib.suppress(OSError):
                sender.shutdown(socket.SHUT_RDWR)
            source.join(timeout=5)
            sender.close()
    finally:
        forwarder.close()


# -- the model -----------------------------------------------------------------------------------


def model_argv(check: Check) -> list[str]:
    """``kit run`` of the h2 client's ``linux`` model on the same link and reader."""
    argv = [
        sys.executable, "-m", "kit.cli", "run", "--json", "--full", "--no-records",
        "--link", "packet", "--client", "h2", "--window-policy", "linux",
        "--server", check.server, "--rate", f"{check.rate_bits_s / 1e3:.0f}kbit",
        "--rtt", f"{check.rtt_ms}ms", "--duration", f"{check.duration_s}s",
    ]  # fmt: skip
    if check.read_rate_bits_s is not None:
        argv += ["--slow-streams", "1", "--read-rate", f"{check.read_rate_bits_s / 1e3:.0f}kbit"]
    return argv


def measure_model(check: Check) -> tuple[tuple[float, int], ...]:
    """The model's window trace (ms since its timed start, window bytes)."""
    done = subprocess.run(
        model_argv(check), capture_output=True, text=True, timeout=MODEL_TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise KitError(f"kernelcheck: the model's run failed: {tail}")
    data = json.loads(done.stdout)
    trace = data.get("result_window_trace") or []
    return tuple((float(t), int(w)) for t, w in trace)


# -- the table -----------------------------------------------------------------------------------


def _kib(n: int) -> str:
    return f"{n / KIB:,.0f}"


def render(check: Check, table: list[Row]) -> str:
    reader = (
        "as fast as it can"
        if check.read_rate_bits_s is None
        else f"{check.read_rate_bits_s / 1e6:g} Mbit/s"
    )
    head = (
        f"Linux {os.uname().release} beside the `linux` model ({linux.KERNEL} rules): "
        f"{check.rate_bits_s / 1e6:g} Mbit/s x {check.rtt_ms:g} ms, reader {reader}, "
        f"{check.duration_s:g} s"
    )
    body = [
        [f"{r.t_ms:.0f}", _kib(r.real_window), _kib(r.advertised), _kib(r.rcv_space),
         _kib(r.model_window), "-" if r.ratio is None else f"{r.ratio:.2f}"]
        for r in table
    ]  # fmt: skip
    headers = ["t (ms)", "kernel window (KiB)", "advertised", "rcv_space", "model", "model/real"]
    s = summarize(table)
    tail = (
        f"second half: model / real median {s.median_ratio:.2f} "
        f"(range {s.low:.2f}-{s.high:.2f}); final kernel {_kib(s.final_real)} KiB, model "
        f"{_kib(s.final_model)} KiB; the application read {s.real_copied_mib_s:.2f} MiB/s"
        if s.median_ratio is not None and s.low is not None and s.high is not None
        else "no ratio: the kernel advertised no window"
    )
    return "\n".join([head, tabulate(body, headers=headers, disable_numparse=True), tail])


def check_once(check: Check, step_ms: float, samples_path: Path | None = None) -> str:
    """Measure the kernel, then the model, on the same link; the table."""
    samples = measure_kernel(check)
    if samples_path is not None:
        samples_path.write_text(json.dumps([s.row() for s in samples]) + "\n")
    trace = measure_model(check)
    return render(check, rows(samples, trace, linux.INITIAL_WINDOW_BYTES, step_ms))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kit.tools.kernelcheck", description=__doc__)
    parser.add_argument("--rate", default="100Mbit")
    parser.add_argument("--rtt", default="20ms")
    parser.add_argument("--duration", default="3s")
    parser.add_argument("--read-rate", default=None, help="the reader's rate (none: unpaced)")
    parser.add_argument("--step", default="100ms", help="one table row per STEP")
    parser.add_argument("--server", default="grpc-go", help="the model's server")
    parser.add_argument("--samples", type=Path, help="also write the kernel's samples here")
    args = parser.parse_args(argv)
    why = missing()
    if why is not None:
        print(f"kernelcheck: the packet link cannot run here: {why}", file=sys.stderr)
        return 2
    try:
        check = Check(
            rate_bits_s=parse_rate_bits_s(args.rate),
            rtt_ms=parse_duration_ms(args.rtt, option="--rtt"),
            duration_s=parse_duration_ms(args.duration, option="--duration") / 1000,
            read_rate_bits_s=None
            if args.read_rate is None
            else parse_rate_bits_s(args.read_rate, option="--read-rate"),
            server=args.server,
        )
        step_ms = parse_duration_ms(args.step, option="--step")
        print(check_once(check, step_ms, args.samples))
    except KitError as exc:
        print(f"kernelcheck: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
