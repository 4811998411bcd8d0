"""The tap scanner's rules as data: HTTP/2 byte streams cut into chunks, and what the
reference scanner (``kit.capture.scanner``) hands the decoder for each chunk, in
``tests/vectors/scanner.json``. linkd's scanner (``linkd/tests/scanner_vectors.rs``) passes
the same file, byte for byte; ``test_scanner_vectors.py`` holds the Python one to it.
Written by ``python tests/unit/scanner_vectors.py``, only when a rule changes on purpose.

Each case: ``client_side``, the ``chunks`` (hex), and per chunk the record the relay puts in
the ring: ``["bytes", hex]`` (the chunk whole) or ``["scanned", hex]`` (``encode_scanned``:
native-endian counts, then the kept bytes); then ``held`` (a header cut at the end) and
``in_data_payload`` (DATA bytes announced but not seen).
"""

from __future__ import annotations

import json
import random
import struct
import sys
from pathlib import Path
from typing import Any

from kit.capture.frametap import CLIENT_PREFACE
from kit.capture.scanner import DataScanner, encode_scanned

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "scanner.json"


def frame(ftype: int, payload: bytes, stream: int = 0, flags: int = 0) -> bytes:
    n = len(payload)
    return struct.pack(">HBBBL", n >> 8, n & 0xFF, ftype, flags, stream) + payload


def records(client_side: bool, chunks: list[bytes]) -> dict[str, Any]:
    """What the relay's tap hands over for each chunk (``kit.capture.channel.TapFeed``)."""
    scanner = DataScanner(client_side)
    out = []
    for chunk in chunks:
        scanned = scanner.split(chunk)
        if scanned is None or (not scanned[0] and scanned[1] == [(0, len(chunk))]):
            out.append(["bytes", chunk.hex()])
            continue
        data, span, streams = scanner.take_data(), scanner.span, scanner.take_streams()
        out.append(["scanned", encode_scanned(chunk, *scanned, data, span, streams).hex()])
    return {
        "records": out,
        "held": scanner.take_held().hex(),
        "in_data_payload": scanner.in_data_payload,
    }


def streams() -> list[tuple[str, bool, bytes]]:
    settings = frame(0x4, b"\x00\x04\x00\x10\x00\x00")
    client = CLIENT_PREFACE + settings + frame(0x1, b"\x82" * 40, 1, 0x4)
    client += b"".join(frame(0x0, bytes([i]) * (i * 37 % 700), 1 + 2 * (i % 3)) for i in range(30))
    client += frame(0x8, b"\x00\x01\x00\x00") + frame(0x6, b"\x00" * 8)
    server = settings + frame(0x6, b"\x01" * 8, flags=1)
    server += b"".join(frame(0x0, b"d" * n, 3) for n in (0, 1, 9000, 9))
    server += frame(0x0, b"cut" * 50, 5)[:200]  # the stream ends inside a DATA payload
    tiny = CLIENT_PREFACE + settings + frame(0x6, b"\x00" * 8) * 120  # past the walk's cap
    garbage = random.Random(9).randbytes(1500)
    return [("client", True, client), ("server", False, server), ("tiny frames", True, tiny),
            ("garbage", True, garbage)]  # fmt: skip


def cuts(data: bytes, rng: random.Random, style: str) -> list[bytes]:
    if style == "whole":
        return [data]
    if style == "bytes":
        return [data[i : i + 1] for i in range(min(len(data), 200))] + [data[200:]]
    out, at = [], 0
    while at < len(data):
        step = rng.choice([1, 2, 5, 8, 9, 10, 17, 100, 1000, 4096])
        out.append(data[at : at + step])
        at += step
    return out


def build() -> dict[str, Any]:
    rng = random.Random(2025)
    cases = []
    for name, client_side, data in streams():
        for style in ("whole", "bytes", "random", "random"):
            chunks = [c for c in cuts(data, rng, style) if c]
            cases.append({"name": f"{name}, {style} chunks", "client_side": client_side,
                          "chunks": [c.hex() for c in chunks],
                          **records(client_side, chunks)})  # fmt: skip
    return {"about": "The tap scanner's records per chunk (tests/unit/scanner_vectors.py).",
            "cases": cases}  # fmt: skip


def main() -> int:
    rows = ",\n".join(json.dumps(c, separators=(",", ":")) for c in build()["cases"])
    about = json.dumps(build()["about"])
    VECTORS.write_text(f'{{\n"about": {about},\n"cases": [\n{rows}\n]\n}}\n', encoding="utf-8")
    print(f"wrote {VECTORS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
