"""Server + delay lines + one client at a time, each its own process; always torn down.

A ``Topology`` starts a grpcio server per server config and one delay line per link
(lazily, so a table that sweeps three RTTs keeps three proxies in front of one server).
Each measurement runs a fresh client process; its connections are matched to the proxy's
frame-tap records by time. ``close()`` (and the context manager) stops every process it
started, on success, on errors and on KeyboardInterrupt.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from kit import __version__
from kit.capture.summary import conn_records, parse_tap_lines, summarize
from kit.cpu import CpuSampler, machine_load
from kit.errors import KitError, MeasurementError, TopologyError
from kit.measure import ClientResult, Measurement, ProcessCpu, now_ns
from kit.plan import Link, ServerConfig, Trial, theory_mib_s
from kit.processes import Child, communicate, spawn, stop

CLIENT_GRACE_S = 20.0
TAP_SETTLE_S = 3.0
LOOPBACK = "127.0.0.1"


class _Proxy:
    def __init__(self, child: Child, tap_path: Path, link: Link) -> None:
        self.child, self.tap_path, self.link = child, tap_path, link
        self._offset = 0  # end of the last whole line already parsed
        self._records: list[dict[str, Any]] = []

    def new_records(self, since_ns: int, expect: int, timeout_s: float) -> list[dict[str, Any]]:
        """Connection records of connections opened since ``since_ns`` (waits for ``expect``)."""
        deadline = time.monotonic() + timeout_s
        while True:
            self._read_new()
            found = [r for r in conn_records(self._records) if r.get("opened_ns", 0) >= since_ns]
            if len(found) >= expect or time.monotonic() >= deadline:
                return found
            time.sleep(0.02)

    def _read_new(self) -> None:
        """Parse only the whole lines appended since the last call: the tap file grows over a
        whole table run, and this is polled every 20 ms after every cell."""
        try:
            with self.tap_path.open("rb") as tap:
                tap.seek(self._offset)
                chunk = tap.read()
        except OSError:
            return
        whole = chunk.rfind(b"\n") + 1
        if whole == 0:
            return
        self._offset += whole
        with contextlib.suppress(KitError):
            self._records += parse_tap_lines(chunk[:whole].decode("utf-8", errors="replace"))


class Topology:
    """Owns every process it starts. Use as a context manager."""

    def __init__(
        self,
        workdir: Path | None = None,
        direct: bool = False,
        client_grace_s: float | None = None,
        warm_up: bool = True,
    ) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="kit-") if workdir is None else None
        self.workdir = Path(self._tmp.name if self._tmp else workdir)  # type: ignore[arg-type]
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.direct = direct
        self.client_grace_s = client_grace_s
        self.warm_up = warm_up
        self._warmed: set[tuple[ServerConfig, Link]] = set()
        self._servers: dict[ServerConfig, Child] = {}
        self._proxies: dict[tuple[ServerConfig, Link], _Proxy] = {}
        self._children: list[Child] = []

    def __enter__(self) -> Topology:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pids(self) -> list[int]:
        return [c.pid for c in self._children]

    def close(self) -> None:
        """Stop proxies first (they flush tap records), then servers; a second Ctrl-C waits."""
        with _signals_deferred():
            self._stop_all()

    def _stop_all(self) -> None:
        for child in reversed(self._children):
            with contextlib.suppress(Exception):
                stop(child)
            with contextlib.suppress(Exception):
                child.stderr_file.close()
        self._children.clear()
        self._servers.clear()
        self._proxies.clear()
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                self._tmp.cleanup()

    def server(self, config: ServerConfig) -> Child:
        if config not in self._servers:
            args = [
                "servers.grpcio_server",
                "--listen",
                f"{LOOPBACK}:0",
                "--window-mode",
                config.window_mode,
            ]
            if config.window_bytes is not None:
                args += ["--window-bytes", str(config.window_bytes)]
            for key, value in config.channel_options:
                args += ["--option", f"{key}={value}"]
            self._servers[config] = self._track(spawn("server", args))
        return self._servers[config]

    def proxy(self, config: ServerConfig, link: Link) -> _Proxy:
        key = (config, link)
        if key not in self._proxies:
            server = self.server(config)
            tap_path = self.workdir / f"tap-{len(self._proxies)}.jsonl"
            args = [
                "kit.delayline",
                "--listen",
                f"{LOOPBACK}:0",
                "--upstream",
                f"{LOOPBACK}:{server.port}",
                "--delay-up-ms",
                repr(link.delay_up_ms),
                "--delay-down-ms",
                repr(link.delay_down_ms),
                "--tap-file",
                str(tap_path),
            ]
            self._proxies[key] = _Proxy(self._track(spawn("proxy", args)), tap_path, link)
        return self._proxies[key]

    def _track(self, child: Child) -> Child:
        self._children.append(child)
        return child

    def measure(self, trial: Trial, tags: dict[str, Any] | None = None) -> Measurement:
        """Run one client for one trial. A failure of the trial becomes a failed record."""
        started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        meta = _meta(started_at, self.direct)
        base: dict[str, Any] = {
            "trial": trial.to_dict(),
            "theory_mib_s": theory_mib_s(trial),
            "meta": meta,
            "tags": dict(tags or {}),
        }
        server = self.server(trial.server)
        proxy = None if self.direct else self.proxy(trial.server, trial.link)
        port = server.port if proxy is None else proxy.child.port
        self._warm(trial, port)
        pids = {"server": server.pid} | ({"proxy": proxy.child.pid} if proxy else {})
        since = now_ns()
        try:
            with CpuSampler(pids) as sampler:
                result = self._run_client(trial, port)
        except MeasurementError as exc:
            return Measurement(status="failed", error=str(exc), **base)
        cpu = _cpu(result, sampler.fractions(result.t_start_ns, result.t_end_ns))
        path_cores = sum(c.cpu_fraction for c in cpu)
        machine = machine_load(sampler.machine, result.t_start_ns, result.t_end_ns, path_cores)
        if machine is not None:
            base["meta"]["machine"] = machine
        frames = self._frames(proxy, since, trial) if proxy else {}
        return Measurement(status="ok", result=result.to_dict(), cpu=cpu, frames=frames, **base)

    def _warm(self, trial: Trial, port: int) -> None:
        """One discarded short run per (server, link) before the first measured one.

        Why: the first run through a fresh server and delay line measured ~30% low (cold
        code paths in both), whichever cell came first; clients warm only their connection.
        """
        key = (trial.server, trial.link)
        if not self.warm_up or key in self._warmed:
            return
        self._warmed.add(key)
        with contextlib.suppress(MeasurementError):  # the measured run will report it
            self._run_client(warm_trial(trial), port)

    def _run_client(self, trial: Trial, port: int) -> ClientResult:
        args = [
            "kit.clients",
            "--target",
            f"{LOOPBACK}:{port}",
            "--trial",
            json.dumps(trial.to_dict()),
        ]
        child = spawn("client", args, wait_ready=False)
        grace = CLIENT_GRACE_S if self.client_grace_s is None else self.client_grace_s
        timeout_s = trial.workload.timeout_s + grace
        try:
            return _parse_client_output(communicate(child, timeout_s), child)
        except TopologyError as exc:
            # A client that cannot reach a live server and proxy is a failed cell (a hung or
            # frozen server); only a dead server or proxy stops the whole campaign.
            if all(c.popen.poll() is None for c in self._children):
                raise MeasurementError(str(exc)) from None
            raise
        except subprocess.TimeoutExpired:
            raise MeasurementError(
                f"client timed out after {timeout_s:g} s and was stopped"
            ) from None
        finally:
            stop(child)
            child.stderr_file.close()

    def _frames(self, proxy: _Proxy, since_ns: int, trial: Trial) -> dict[str, Any]:
        expect = min(trial.client.connections, trial.workload.streams)
        records = proxy.new_records(since_ns, expect, TAP_SETTLE_S)
        if not records:
            return {}
        summary = summarize(records, proxy.link.delay_down_ms)
        summary["window_growth"] = _window_growth(records)
        return summary


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ignore SIGINT/SIGTERM while tearing down, so teardown itself is not interrupted."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {
        signum: signal.signal(signum, signal.SIG_IGN) for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


WARM_UP_S = 0.3


def warm_trial(trial: Trial) -> Trial:
    """The same client and link, a short timed download: the warm-up run."""
    workload = replace(
        trial.workload,
        kind="download",
        duration_s=WARM_UP_S,
        bytes_per_stream=None,
        streams=min(trial.workload.streams, 4),
        timeout_s=min(trial.workload.timeout_s, 30.0),
    )
    return replace(trial, workload=workload, label="warm-up")


def _parse_client_output(out: str, child: Child) -> ClientResult:
    lines = [line for line in out.strip().splitlines() if line.strip()]
    try:
        last = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        last = {}
    if "result" in last:
        return ClientResult.from_dict(last["result"])
    reason = (
        last.get("error")
        or child.stderr_tail()
        or f"client exited with code {child.popen.returncode}"
    )
    if last.get("exit_code") == 3:
        raise TopologyError(str(reason))
    raise MeasurementError(str(reason))


def _window_growth(records: list[dict[str, Any]]) -> list[int]:
    """INITIAL_WINDOW_SIZE values the client announced, in order (first connection)."""
    settings = records[0]["up"].get("settings", []) if records else []
    return [
        s["values"]["INITIAL_WINDOW_SIZE"]
        for s in settings
        if not s.get("ack") and "INITIAL_WINDOW_SIZE" in s.get("values", {})
    ]


def _cpu(result: ClientResult, others: dict[str, float]) -> tuple[ProcessCpu, ...]:
    return (
        ProcessCpu("client", result.cpu_fraction),
        *(ProcessCpu(r, f) for r, f in sorted(others.items())),
    )


def _meta(started_at: str, direct: bool) -> dict[str, Any]:
    import grpc
    import h2

    return {
        "started_at": started_at,
        "host": socket.gethostname(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
        "h2": h2.__version__,
        "kit": __version__,
        "path": "direct" if direct else "delay line",
    }
