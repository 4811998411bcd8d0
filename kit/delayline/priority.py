"""The delay line's scheduling priority: optionally above the endpoints it delays.

A delay line that waits for the CPU behind the traffic it carries stretches every delay.
``KIT_DELAYLINE_PRIORITY=high`` makes the proxy process ask for ``PROXY_NICE`` (needs root
or CAP_SYS_NICE; when refused it says so, once, and runs as it is). It is off by default
because measured side by side on a busy 2-vCPU VM it did not help: idle ping-pong error was
the same, and next to a max-rate bulk transfer it was worse (the boosted proxy starved the
endpoints whose RTT is being measured). ``make bench`` and ``make soak`` show both.
"""

from __future__ import annotations

import os

PROXY_NICE = -10
PRIORITY_ENV = "KIT_DELAYLINE_PRIORITY"


def raise_priority(nice: int = PROXY_NICE) -> str | None:
    """Ask for ``nice``; None when granted (or not wanted), else a one-line warning."""
    if os.environ.get(PRIORITY_ENV, "") != "high" or not hasattr(os, "setpriority"):
        return None
    current = os.getpriority(os.PRIO_PROCESS, 0)
    if current <= nice:
        return None
    try:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    except PermissionError:
        return (
            f"note: running at normal scheduling priority (nice {current}); raising it to "
            f"{nice} needs root or CAP_SYS_NICE, so delays may stretch while the CPU is busy"
        )
    return None
