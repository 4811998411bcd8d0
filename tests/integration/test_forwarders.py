"""The packet link's two forwarders, each as a process of the kit's process protocol: the
compiled one (``kit-linkfwd``, where built) and the Python one take the same ``ForwarderJob``,
refuse the same bad jobs in one line (exit 2), carry TCP between the namespaces they make
with the link's delay, feed the frame tap, and leave no process or namespace behind.

Needs root and /dev/net/tun; the compiled forwarder's cases are skipped where it is not built.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import psutil
import pytest

from kit.delayline.netns import missing
from kit.plan.packet import ForwarderConfig
from kit.plan.programs import FORWARDER_PROGRAMS
from kit.plan.trial import Link
from kit.protocol import config_text
from kit.tools.nspairs import packet_pair
from kit.topology.processes import spawn

REASON = missing() or (None if os.geteuid() == 0 else "needs root (setns)")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.alone,  # counts the machine's network namespaces
    pytest.mark.skipif(REASON is not None, reason=REASON or ""),
]

BAD_JOBS = [
    ('{"bogus": 1}', "bogus"),
    ('{"mtu": 1500, "loss": 1.5}', "loss"),
    ('{"mtu": 1500, "loss": 0.1, "loss_burst_len": 0.5}', "burst"),
    ("not json", ""),
]


def net_namespaces() -> int:
    out = subprocess.run(["lsns", "-t", "net", "-n", "-o", "NS"], capture_output=True, text=True)
    return len(set(out.stdout.split()))


@pytest.mark.parametrize(("job", "word"), BAD_JOBS)
def test_a_bad_job_is_one_error_line_and_exit_2(forwarder: str, job: str, word: str) -> None:
    argv = [*FORWARDER_PROGRAMS[forwarder].argv, "--config", job]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stdout.strip().splitlines()
    error = json.loads(line)
    assert error["exit_code"] == 2 and word in error["error"]


def test_tcp_crosses_the_link_with_its_delay_and_the_tap_sees_it(
    forwarder: str, tmp_path: Path
) -> None:
    before = net_namespaces()
    tap = tmp_path / "tap.jsonl"
    config = ForwarderConfig(link=Link(5.0, 5.0, kind="packet"), tap_path=str(tap))
    child = spawn("forwarder", FORWARDER_PROGRAMS[forwarder], config)
    family = {p.pid for p in psutil.Process(child.pid).children(recursive=True)}
    try:
        pair = packet_pair(child.pid)
        t0 = time.monotonic()
        pair.client.send(b"p")
        assert pair.echo.recv(8) == b"p"
        pair.echo.send(b"p")
        assert pair.client.recv(8) == b"p"
        assert time.monotonic() - t0 >= 0.0095  # the link's 10 ms round trip
        payload = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes(2 * 1024 * 1024)
        assert _carried(pair.client, pair.echo, payload, timeout_s=30) == payload
        pair.client.close()
        pair.echo.close()
        time.sleep(0.1)
    finally:
        child.close()
    assert child.popen.returncode == 0
    result = child.final
    data = getattr(result, "data", {})
    assert data["up"]["delivered_bytes"] >= len(payload) and data["device_drops"] == 0
    kinds = [json.loads(line)["kind"] for line in tap.read_text().splitlines()]
    assert "link" in kinds and "conn" in kinds and kinds[-1] == "packet"
    conn = next(json.loads(x) for x in tap.read_text().splitlines() if '"kind":"conn"' in x)
    assert conn["up"]["bytes"] == len(payload) + 1  # and the ping's byte
    assert not [p for p in family | {child.pid} if psutil.pid_exists(p)]
    assert net_namespaces() == before


def test_tcp_survives_loss_a_rate_and_jitter_byte_for_byte(forwarder: str, tmp_path: Path) -> None:
    """Packets dropped by the queue and the wire, spaced by a rate and jittered: TCP
    recovers every byte (the compiled forwarder cuts its offloaded super-packets into the
    segments the rules dropped or spaced), and the tap reassembles them all."""
    link = Link(2.0, 2.0, 200e6, 200e6, 0.5, kind="packet", loss=0.01, queue_bytes=64 * 1024)
    tap = tmp_path / "tap.jsonl"
    child = spawn(
        "forwarder", FORWARDER_PROGRAMS[forwarder], ForwarderConfig(link=link, tap_path=str(tap))
    )
    payload = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + os.urandom(4 * 1024 * 1024)
    try:
        pair = packet_pair(child.pid)
        for sock in (pair.client, pair.echo):
            sock.settimeout(60)
        assert _carried(pair.echo, pair.client, payload, timeout_s=60) == payload
        pair.client.close()
        pair.echo.close()
        time.sleep(0.1)
    finally:
        child.close()
    data = getattr(child.final, "data", {})
    assert data["down"]["lost_packets"] > 0 and data["down"]["delivered_bytes"] >= len(payload)
    conn = next(json.loads(x) for x in tap.read_text().splitlines() if '"kind":"conn"' in x)
    assert conn["down"]["bytes"] == len(payload)


def _carried(
    sender: socket.socket, receiver: socket.socket, payload: bytes, timeout_s: float
) -> bytes:
    """``payload`` sent and half-closed on one side; what the other read until the end."""
    got = bytearray()
    reader = threading.Thread(target=lambda: _read_all(receiver, got), daemon=True)
    reader.start()
    sender.sendall(payload)
    sender.shutdown(socket.SHUT_WR)
    reader.join(timeout=timeout_s)
    return bytes(got)


def _read_all(sock: socket.socket, into: bytearray) -> None:
    while chunk := sock.recv(1 << 20):
        into += chunk


def test_both_forwarders_take_the_job_the_kit_writes() -> None:
    """The job is protobuf's canonical JSON of ``ForwarderJob``: every queue worked out."""
    link = Link(5.0, 5.0, None, 1e9, kind="packet", loss=0.01, mtu=9000)
    job = json.loads(config_text(ForwarderConfig(link=link)))
    assert job["queue_down_bytes"] == "1250000" and job["queue_up_bytes"] == "65536"
    assert job["mtu"] == 9000 and job["loss"] == 0.01 and "tap_path" not in job
