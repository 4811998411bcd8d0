"""``kit serve``'s banner: which address to give a kit on another machine, or none."""

from __future__ import annotations

import pytest

from kit.cli.run import serve_banner


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "127.1.2.3", "::1", "localhost"])
def test_a_loopback_server_is_never_announced_to_another_machine(host: str) -> None:
    banner = serve_banner(host, 50051)
    assert "on the other machine" not in banner
    assert "loopback only" in banner


def test_a_routable_address_is_given_to_the_other_machine() -> None:
    assert "on the other machine: kit run --target 10.0.0.5:50051" in serve_banner(
        "10.0.0.5", 50051
    )
