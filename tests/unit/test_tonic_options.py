"""tonic's named options as the kit checks them before it starts anything (the tonic programs
refuse the same, in the same words: stacks/tonic/src/options.rs)."""

from __future__ import annotations

import pytest

from kit.errors import UsageError
from kit.plan.trial import ClientConfig, ServerConfig


def test_the_adaptive_window_is_an_option_of_dynamic_windows() -> None:
    on = ClientConfig(kind="tonic", channel_options=(("http2_adaptive_window", 1),))
    assert on.window_mode == "dynamic"
    off = ClientConfig(
        kind="tonic", window_mode="static", window_bytes=65536,
        channel_options=(("http2_adaptive_window", 0),),
    )  # fmt: skip
    assert off.window_bytes == 65536


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (
            lambda: ClientConfig(
                kind="tonic",
                window_mode="static",
                window_bytes=65536,
                channel_options=(("http2_adaptive_window", "true"),),
            ),
            "tonic client: option http2_adaptive_window with a static window",
        ),
        (
            lambda: ClientConfig(
                kind="tonic",
                window_mode="static",
                window_bytes=65536,
                channel_options=(("initial_connection_window_size", 1 << 20),),
            ),
            "tonic client: option initial_connection_window_size with a static window",
        ),
        (
            lambda: ClientConfig(
                kind="tonic",
                channel_options=(("http2_adaptive_window", 1), ("initial_stream_window_size", 1)),
            ),
            "http2_adaptive_window=1 overrides",
        ),
        (
            lambda: ServerConfig(
                kind="tonic",
                window_mode="static",
                window_bytes=65536,
                channel_options=(("initial_stream_window_size", 1),),
            ),
            "tonic server: option initial_stream_window_size with a static server window",
        ),
        (
            lambda: ServerConfig(kind="tonic", channel_options=(("max_concurrent_streams", 0),)),
            "max_concurrent_streams takes an integer in 1..4294967295",
        ),
        (
            lambda: ClientConfig(kind="tonic", max_frame_bytes=1 << 20),
            "--option max_frame_size=N",
        ),
    ],
)
def test_what_tonic_would_not_do_as_asked_is_refused(make: object, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        make()  # type: ignore[operator]
