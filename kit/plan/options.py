"""Options as the user gave them: one frozen record per part of a trial, before any parsing.

Each field is one option and knows how the user spells it: on the command line
(``--rate-up``, ``--max-frame-size``, ``--seed``) and in a spec or a plan file (``rate-up``,
``max-frame``, ``jitter-seed``). Values are raw - strings, numbers and booleans as typed (a
TOML file may hold ``rounds = 5`` or ``rtt = "20ms"``), None (or an empty tuple) when not
given. ``kit.plan.builder`` parses and checks them and names each option as it was written
where it came from, which each record knows (its ``source``).

The command line builds these records from its typed parameters. Specs and plan files
build them from key/value items with ``options_from_items``, the one place that reads
their keys, and so the one place an unknown key is refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar

from kit.errors import UsageError

Raw = str | int | float | bool
ChannelArgs = tuple[tuple[str, Raw], ...]
R = TypeVar("R", bound="Options")
_SPELLING = "kit.option"


@dataclass(frozen=True)
class Spelling:
    """How one option is written, and what it sets."""

    key: str  # in a spec or a plan file: ``rate-up``
    flag: str  # on the command line: ``--rate-up``
    aliases: tuple[str, ...] = ()  # other keys a spec may use for it
    item: bool = True  # False: never a key=value item (e.g. a spec names its client before ':')
    sets: str = ""  # the placeholder its config's errors use for it (default: the field's name)
    repeated: bool = False  # a list: each item adds one value
    dotted: bool = False  # collects the items whose key has a dot (grpcio channel arguments)


def option_field(
    key: str,
    flag: str = "",
    *,
    aliases: tuple[str, ...] = (),
    item: bool = True,
    sets: str = "",
) -> Raw | None:
    """One option; None when not given. ``flag`` defaults to ``--`` + ``key``."""
    spelling = Spelling(key, flag or f"--{key}", aliases, item, sets)
    return field(default=None, metadata={_SPELLING: spelling})


def list_field(key: str, flag: str = "", *, item: bool = True, sets: str = "") -> tuple[Raw, ...]:
    """An option given any number of times (``--option k=v --option k2=v2``)."""
    spelling = Spelling(key, flag or f"--{key}", (), item, sets, repeated=True)
    return field(default=(), metadata={_SPELLING: spelling})


def dotted_field(key: str, flag: str = "", *, sets: str = "") -> ChannelArgs:
    """The channel arguments a spec gives as dotted keys (``grpc.http2.bdp_probe=0``), named
    in errors as the option that takes them on the command line."""
    spelling = Spelling(key, flag or f"--{key}", (), False, sets, repeated=True, dotted=True)
    return field(default=(), metadata={_SPELLING: spelling})


@dataclass(frozen=True)
class Source:
    """Where a record's values came from, which says how to name them in errors."""

    spec: bool = False  # a spec or a plan file (``rate-up``), else the command line
    prefix: str = ""  # of its keys in a spec it shares with other settings (``server-``)
    # A command-line record's fields named as a plan file names them: the file gave them,
    # or the command has no flag for them.
    spec_fields: frozenset[str] = frozenset()


COMMAND_LINE = Source()


@dataclass(frozen=True)
class Options:
    """The base of every options record: its values' ``source``, and their names."""

    source: Source = field(default=COMMAND_LINE, kw_only=True)

    def name(self, field_name: str) -> str:
        """The option as the user wrote it where it came from: ``--rate-up`` or ``rate-up``."""
        spelling = spellings(type(self))[field_name]
        if self.source.spec or field_name in self.source.spec_fields:
            return self.source.prefix + spelling.key
        return spelling.flag

    def names(self) -> dict[str, str]:
        """Each option's name by the placeholder its config's errors use (``kit.errors.named``)."""
        return {s.sets: self.name(f) for f, s in spellings(type(self)).items()}


def spellings(cls: type[Options]) -> Mapping[str, Spelling]:
    """Field name -> spelling (``sets`` filled in), in the record's order."""
    return {
        f.name: replace(f.metadata[_SPELLING], sets=f.metadata[_SPELLING].sets or f.name)
        for f in dataclasses.fields(cls)
        if _SPELLING in f.metadata
    }


def item_keys(cls: type[Options], prefix: str = "") -> tuple[str, ...]:
    """The keys a spec or a plan file may give for ``cls``, in the record's order."""
    return tuple(prefix + s.key for s in spellings(cls).values() if s.item)


# --- the records --------------------------------------------------------------------------


@dataclass(frozen=True)
class LinkOptions(Options):
    """The delay line: ``rtt`` splits evenly, ``delay-up`` / ``delay-down`` override a half;
    ``rate`` is both directions' bottleneck, ``rate-up`` / ``rate-down`` one each."""

    rtt: Raw | None = option_field("rtt")
    delay_up: Raw | None = option_field("delay-up", sets="delay_up_ms")
    delay_down: Raw | None = option_field("delay-down", sets="delay_down_ms")
    rate: Raw | None = option_field("rate")
    rate_up: Raw | None = option_field("rate-up", sets="rate_up_bits_s")
    rate_down: Raw | None = option_field("rate-down", sets="rate_down_bits_s")
    jitter: Raw | None = option_field("jitter", sets="jitter_ms")
    # ``kit run --seed``; a plan file's ``seed`` is its rounds' shuffle (``PlanOptions``).
    jitter_seed: Raw | None = option_field("jitter-seed", "--seed", sets="seed")
    # The packet link's (``--link packet``): the kernels' TCP over a lossy IP link.
    link: Raw | None = option_field("link", item=False, sets="kind")
    loss: Raw | None = option_field("loss", item=False)
    loss_burst: Raw | None = option_field("loss-burst", item=False, sets="loss_burst_len")
    queue: Raw | None = option_field("queue", item=False, sets="queue_bytes")
    mtu: Raw | None = option_field("mtu", item=False)
    cc: Raw | None = option_field("cc", item=False, sets="congestion")
    rate_steps: Raw | None = option_field("rate-steps", item=False)
    trace: Raw | None = option_field("trace", item=False)


@dataclass(frozen=True)
class WorkloadOptions(Options):
    """What the client does: a timed or fixed-size download on N streams, unary calls, uploads."""

    streams: Raw | None = option_field("streams")
    message_size: Raw | None = option_field("message-size", sets="message_bytes")
    workload: Raw | None = option_field("workload")
    duration: Raw | None = option_field("duration", sets="duration_s")
    transfer: Raw | None = option_field("bytes", sets="bytes_per_stream")
    calls: Raw | None = option_field("calls")
    timeout: Raw | None = option_field("timeout", sets="timeout_s")
    # Slow readers are ``kit run``'s only: a comparison has no flag and no plan-file key for them.
    slow_streams: Raw | None = option_field("slow-streams", item=False)
    read_rate: Raw | None = option_field("read-rate", item=False, sets="read_rate_bits_s")


@dataclass(frozen=True)
class ClientOptions(Options):
    """Which client and how it sets its receive windows. The h2 client takes every setting;
    grpcio refuses the h2-only ones (``kit.plan.trial.H2_ONLY``) rather than ignore them."""

    client: Raw | None = option_field("client", item=False)  # a spec names it before ':'
    window: Raw | None = option_field("window", sets="window_bytes")
    conn_window: Raw | None = option_field(
        "conn-window", aliases=("conn_window",), sets="conn_window_bytes"
    )
    credit: Raw | None = option_field("credit", sets="credit_policy")
    max_frame: Raw | None = option_field(
        "max-frame", "--max-frame-size", aliases=("max_frame",), sets="max_frame_bytes"
    )
    connections: Raw | None = option_field("connections")
    mode: Raw | None = option_field("mode")
    window_policy: Raw | None = option_field("window-policy", aliases=("window_policy",))
    conn_credit: Raw | None = option_field("conn-credit", aliases=("conn_credit",))
    pool: Raw | None = option_field("pool", sets="pool_bytes")
    option: tuple[Raw, ...] = list_field("option", item=False)  # --option key=value
    channel_args: ChannelArgs = dotted_field("option", sets="channel_options")


@dataclass(frozen=True)
class ServerOptions(Options):
    """Which server and its receive window; a client spec gives these as ``server-window``..."""

    window: Raw | None = option_field("window", "--server-window", sets="window_bytes")
    mode: Raw | None = option_field("mode", "--server-mode")
    option: tuple[Raw, ...] = list_field("option", "--server-option")
    channel_args: ChannelArgs = dotted_field("option", "--server-option", sets="channel_options")
    kind: Raw | None = option_field("stack", "--server", sets="kind")


@dataclass(frozen=True)
class PlanOptions(WorkloadOptions, LinkOptions):
    """A comparison's settings (``kit compare``'s flags, a plan file's top-level keys): its
    link's, its workload's (the link's come first), and its rounds."""

    rounds: Raw | None = option_field("rounds")
    # Of the per-round shuffle; ``{seed}`` in a link's errors is the jitter's (``jitter-seed``).
    seed: Raw | None = option_field("seed", sets="shuffle_seed")


# --- from key/value items -----------------------------------------------------------------

DEFAULT_UNKNOWN = "unknown setting {keys} (use {known})"


def options_from_items(
    cls: type[R],
    items: Iterable[tuple[str, object]],
    unknown: str = DEFAULT_UNKNOWN,
    prefix: str = "",
) -> R:
    """A ``cls`` record from a spec's or a plan file's key/value items, named as written there.

    Each key is an option's key (or alias) after ``prefix``; where the record takes channel
    arguments and there is no prefix, a dotted key is one. An unknown key, or one given twice,
    is a one-line UsageError naming it as written; ``unknown`` words the former, with
    ``{keys}`` (the unknown ones) and ``{known}`` (the keys ``cls`` takes).
    """
    fields = spellings(cls)
    dotted = "" if prefix else next((f for f, s in fields.items() if s.dotted), "")
    values, args, strangers = _sort_items(fields, items, prefix, bool(dotted))
    if strangers:
        known = ", ".join(item_keys(cls, prefix))
        raise UsageError(unknown.format(keys=", ".join(sorted(strangers)), known=known))
    keys = [k for k, _ in args]
    twice = {k for k in keys if keys.count(k) > 1} | {
        prefix + fields[f].key for f, v in values.items() if len(v) > 1 and not fields[f].repeated
    }
    if twice:
        raise UsageError(f"{', '.join(sorted(twice))} given twice")
    given: dict[str, object] = {
        f: tuple(v) if fields[f].repeated else v[0] for f, v in values.items()
    }
    if args:
        given[dotted] = tuple(args)
    build: Callable[..., R] = cls  # each value was checked above (``_raw``)
    return build(source=Source(spec=True, prefix=prefix), **given)


def _sort_items(
    fields: Mapping[str, Spelling],
    items: Iterable[tuple[str, object]],
    prefix: str,
    dotted: bool,
) -> tuple[dict[str, list[Raw]], list[tuple[str, Raw]], set[str]]:
    """Items -> values by field, channel arguments (dotted keys), and the unknown keys."""
    by_key = {k: f for f, s in fields.items() if s.item for k in (s.key, *s.aliases)}
    values: dict[str, list[Raw]] = {}
    args: list[tuple[str, Raw]] = []
    strangers: set[str] = set()
    for key, value in items:
        name = by_key.get(key.removeprefix(prefix)) if key.startswith(prefix) else None
        if name is not None:
            values.setdefault(name, []).append(_raw(key, value))
        elif dotted and "." in key:
            args.append((key, _raw(key, value)))
        else:
            strangers.add(key)
    return values, args, strangers


def _raw(key: str, value: object) -> Raw:
    # TOML also has arrays, tables and dates; no option takes one.
    if not isinstance(value, str | int | float):
        raise UsageError(f"{key}: {value!r} is not a string or a number")
    return value


def overlay(below: R, above: R) -> R:
    """``above``'s given options over ``below``'s (command-line flags over a plan file's
    settings), each still named where it was given."""
    taken = {
        f: getattr(below, f)
        for f in spellings(type(above))
        if _absent(getattr(above, f)) and not _absent(getattr(below, f))
    }
    from_spec = {f for f in taken if below.source.spec or f in below.source.spec_fields}
    source = replace(above.source, spec_fields=above.source.spec_fields | from_spec)
    return replace(above, **taken, source=source)


def _absent(value: object) -> bool:
    return value is None or value == ()
