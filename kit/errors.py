"""The kit's one exception tree.

Every error a user can cause or meet is a ``KitError``; the CLI maps each class to a
one-line message and an exit code (see ``kit.cli``). Outside errors (OSError, grpc.RpcError,
h2 protocol errors) are translated into these at the IO shell, in one place each.
"""

from __future__ import annotations

import contextlib
import string
from collections.abc import Iterator, Mapping, Sequence


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


class FieldError(UsageError):
    """A usage error about named fields of a frozen config (``Link``, ``Workload``...).

    ``template`` names each field as ``{field}`` and holds the offending values as ``{0}``,
    ``{1}``. A config cannot know whether its values came from ``--rate-up`` or from a plan
    file's ``rate-up``, so it names its own fields; the plan builder, which knows, spells
    them as the user did (``named``). Values are formatted in, never parsed as a template.
    """

    def __init__(
        self, template: str, values: Sequence[object] = (), names: Mapping[str, str] | None = None
    ) -> None:
        self.template, self.values, self.names = template, tuple(values), dict(names or {})
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f and not f.isdigit()}
        spelled = {f: self.names.get(f, f) for f in fields}
        super().__init__(template.format(*self.values, **spelled))


class TopologyError(KitError):
    """A server, proxy or client process could not be started or reached."""

    exit_code = 3


class MeasurementError(KitError):
    """A measurement started but failed: timeout, protocol error, lost connection."""

    exit_code = 4


class ChecksFailed(KitError):
    """A check fails: against the reference study (``kit tables``, after the tables), or an
    expectation of ``kit check`` (after every line)."""

    exit_code = 6


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


@contextlib.contextmanager
def named(names: Mapping[str, str]) -> Iterator[None]:
    """Spell the fields of a ``FieldError`` raised inside as ``names`` says (``{"rate_up_bits_s":
    "--rate-up"}``); a name given by an inner ``named`` stays."""
    try:
        yield
    except FieldError as exc:
        raise FieldError(exc.template, exc.values, {**names, **exc.names}) from None
