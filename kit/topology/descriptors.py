"""Enough file descriptors for a trial, checked before it starts.

Every process of a trial inherits the kit's RLIMIT_NOFILE. The busiest is the delay line:
two sockets per connection (one each side), beside its runtime's own files; a client holds
one socket per connection beside its runtime's (a JVM opens about forty files of its own).
A plan that needs more than the hard limit is refused in one line naming the limit; below
it, the kit raises its soft limit (its children inherit that), as a user would with
``ulimit -n``. Without this, running out shows up as an unreachable server.
"""

from __future__ import annotations

import resource

from kit.errors import UsageError
from kit.plan.trial import Trial

PER_CONNECTION = 2  # the delay line: the client's socket and the server's
RUNTIME_FILES = 64  # what a process opens besides its connections (a JVM's jars, pipes, ...)


def needed(trial: Trial) -> int:
    """File descriptors the busiest process of ``trial`` may hold at once."""
    connections = min(trial.client.connections, trial.workload.streams)
    return PER_CONNECTION * connections + RUNTIME_FILES


def ensure(trial: Trial) -> None:
    """Raise the soft limit to what ``trial`` needs, or refuse it (``UsageError``)."""
    ensure_count(needed(trial), trial.client.connections)


def ensure_count(want: int, connections: int | None = None) -> None:
    """Raise the soft limit to ``want`` descriptors, or refuse (``UsageError``)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or want <= soft:
        return
    if hard != resource.RLIM_INFINITY and want > hard:
        what = f"{connections} connection(s)" if connections is not None else "these trials"
        raise UsageError(
            f"--connections: {what} need about {want} file descriptors per process, and this "
            f"shell allows {hard} (ulimit -n); raise it (ulimit -n {want}) or use fewer "
            "connections"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
