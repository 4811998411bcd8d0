"""The kit's one exception tree.

Every error a user can cause or meet is a ``KitError``; the CLI maps each class to a
one-line message and an exit code (see ``kit.cli``). Outside errors (OSError, grpc.RpcError,
h2 protocol errors) are translated into these at the IO shell, in one place each.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class KitError(Exception):
    """Base of every error the kit raises on purpose."""

    exit_code = 1


class UsageError(KitError):
    """Bad user input: an unknown unit, a window out of range, a malformed option.

    ``contexts`` are the places already named in the message (see ``prefixed``).
    """

    exit_code = 2

    def __init__(self, message: str, contexts: frozenset[str] = frozenset()) -> None:
        super().__init__(message)
        self.contexts = contexts


class TopologyError(KitError):
    """A server, proxy or client process could not be started or reached."""

    exit_code = 3


class MeasurementError(KitError):
    """A measurement started but failed: timeout, protocol error, lost connection."""

    exit_code = 4


class RecordsError(KitError):
    """A records file could not be read or written."""

    exit_code = 5


class RecordsPathError(RecordsError):
    """The records file the user named does not exist (or is a directory): bad input."""

    exit_code = UsageError.exit_code


class Interrupted(BaseException):
    """SIGINT or SIGTERM: raised from the signal handler so every ``with`` block tears down.

    A ``BaseException``, like ``KeyboardInterrupt``: raised wherever the main thread happens to
    be, it must not be taken for an ordinary error by an ``except Exception`` (or ``except
    KitError``) on the way, which would swallow the signal and let the run go on.

    The handler names the signal (``SIGTERM``): this module imports no ``signal``, so that
    the pure layers, which all import it, import no process code either.
    """

    exit_code: int

    def __init__(self, signum: int, signal_name: str) -> None:
        super().__init__(f"interrupted by {signal_name}; every process the kit started was stopped")
        self.exit_code = 128 + signum
        self.signal_name = signal_name


@contextlib.contextmanager
def prefixed(context: str) -> Iterator[None]:
    """Say where a usage error arose: ``candidate 'h2:...': window: ...``, once.

    Nested contexts do not stack the same prefix twice (a candidate built inside a plan
    file names the candidate, not the candidate twice).
    """
    try:
        yield
    except UsageError as exc:
        if context in exc.contexts:
            raise
        raise UsageError(f"{context}: {exc}", exc.contexts | {context}) from None
