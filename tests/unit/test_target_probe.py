"""What the first bytes back to an HTTP/2 preface say about a ``--target`` (pure)."""

from __future__ import annotations

import pytest

from kit.topology.target import CLIENT_PREFACE, answer_problem

SETTINGS_FRAME = bytes([0, 0, 6, 4, 0, 0, 0, 0, 0])


def test_an_http2_server_opens_with_settings_on_stream_0() -> None:
    assert answer_problem(SETTINGS_FRAME) is None


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (b"", "closed the connection"),
        (CLIENT_PREFACE[:9], "echo server"),
        (b"HTTP/1.1 400 Bad Request\r\n\r\n"[:9], "HTTP/1"),
        (b"SSH-2.0-Op", "not an HTTP/2 SETTINGS frame"),
        (bytes([0, 0, 8, 7, 0, 0, 0, 0, 0]), "not an HTTP/2 SETTINGS frame"),  # GOAWAY first
        (b"ab", "not an HTTP/2 frame"),
    ],
)
def test_anything_else_is_named(answer: bytes, said: str) -> None:
    problem = answer_problem(answer)
    assert problem is not None and said in problem
