"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages, NUL-terminated, on the browser's fds 3 and 4): no websocket library, no port.

``render(path)`` opens a local HTML file and gives back what a reader would meet: every
console message and error the page caused (a Content-Security-Policy refusal is one), each
image's decoded and laid-out size, each inline SVG's, every request that was not for the file
itself or a ``data:`` URI, and a full-page PNG screenshot.
"""

from __future__ import annotations

import base64
import fcntl
import io
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matplotlib import image

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)
SIZES = """JSON.stringify({
  images: Array.from(document.images).map(i => ({alt: i.alt, natural: [i.naturalWidth,
    i.naturalHeight], shown: [i.getBoundingClientRect().width,
    i.getBoundingClientRect().height], complete: i.complete})),
  svgs: Array.from(document.querySelectorAll('svg')).map(s => [s.getBoundingClientRect().width,
    s.getBoundingClientRect().height]),
  details: document.querySelectorAll('details').length,
  height: document.documentElement.scrollHeight,
  title: document.title,
})"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Page:
    console: list[str] = field(default_factory=list)  # errors and warnings, as the browser said
    requests: list[str] = field(default_factory=list)  # anything but the file and data: URIs
    images: list[dict[str, Any]] = field(default_factory=list)
    svgs: list[list[float]] = field(default_factory=list)
    details: int = 0
    height: int = 0
    title: str = ""
    screenshot: bytes = b""


class _Pipe:
    """One DevTools session over the browser's pipe."""

    def __init__(self, proc: subprocess.Popen[bytes], to_browser: int, from_browser: int) -> None:
        self.proc, self.out, self.inp = proc, to_browser, from_browser
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        reply = self.wait(lambda m: m.get("id") == self.next_id)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def wait(self, wanted: Any, timeout_s: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                message = json.loads(raw)
                if wanted(message):
                    return message  # type: ignore[no-any-return]
                self.events.append(message)
            chunk = os.read(self.inp, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self.buffer += chunk
        raise TimeoutError("chromium did not answer in time")


def _launch(profile: str, width: int, height: int) -> tuple[subprocess.Popen[bytes], int, int]:
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    # Chromium reads fd 3 and writes fd 4; move our ends out of the way first.
    child_in, child_out = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_r, from_w))

    def fds() -> None:
        os.dup2(child_in, 3)
        os.dup2(child_out, 4)

    proc = subprocess.Popen(
        [
            chromium() or "chromium",
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            "about:blank",
        ],
        pass_fds=(3, 4),
        preexec_fn=fds,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for fd in (to_r, from_w, child_in, child_out):
        os.close(fd)
    return proc, to_w, from_r


def render(path: Path, width: int = 1280, height: int = 900) -> Page:
    """Open ``path`` in headless Chromium and read the page as a reader would meet it."""
    with tempfile.TemporaryDirectory(prefix="kit-chromium-") as profile:
        proc, to_w, from_r = _launch(profile, width, height)
        pipe = _Pipe(proc, to_w, from_r)
        try:
            return _visit(pipe, path.resolve().as_uri())
        finally:
            try:
                pipe.call("Browser.close")
            except (RuntimeError, TimeoutError, OSError):
                proc.kill()
            proc.wait(timeout=30)
            os.close(to_w)
            os.close(from_r)


def _visit(pipe: _Pipe, url: str) -> Page:
    target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        pipe.call(f"{domain}.enable", session=session)
    pipe.call("Page.navigate", {"url": url}, session)
    pipe.wait(lambda m: m.get("method") == "Page.loadEventFired")
    found = pipe.call("Runtime.evaluate", {"expression": SIZES, "returnByValue": True}, session)[
        "result"
    ]["value"]
    shot = pipe.call(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session
    )
    page = Page(screenshot=base64.b64decode(shot["data"]), **json.loads(found))
    page.console, page.requests = _console(pipe.events), _requests(pipe.events, url)
    return page


def _console(events: list[dict[str, Any]]) -> list[str]:
    said = []
    for e in events:
        params = e.get("params", {})
        if e.get("method") == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            said.append(f"{params['entry']['level']}: {params['entry']['text']}")
        elif e.get("method") == "Runtime.consoleAPICalled" and params["type"] in ("error", "warn"):
            said.append(f"console.{params['type']}: {params['args']}")
        elif e.get("method") == "Runtime.exceptionThrown":
            said.append(f"exception: {params['exceptionDetails'].get('text')}")
    return said


def _requests(events: list[dict[str, Any]], url: str) -> list[str]:
    wanted = [
        e["params"]["request"]["url"]
        for e in events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    return [u for u in wanted if u != url and not u.startswith("data:")]


def png_is_blank(png: bytes) -> bool:
    """Whether a PNG is one colour: decoded with matplotlib's reader (a kit dependency)."""
    pixels = image.imread(io.BytesIO(png), format="png")
    return bool((pixels == pixels[0, 0]).all())
