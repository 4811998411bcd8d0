"""The one place where typed data becomes JSON and back: records, tap lines, process configs.

``to_json`` turns a frozen dataclass (recursively) into JSON-ready values; ``from_json``
rebuilds it from the field types, strictly: an unknown or missing field, or a value of the
wrong type, is a ``UsageError`` naming its path (``trial.link.delay_up_ms: ...``). The
dataclass's own validation runs as it is built, so a decoded config is a valid config.

Every line of a kit JSON-lines file carries an envelope, ``{"schema": N, "kind": ...,
...fields}`` (``encode_line`` / ``decode_line``); which kinds a file holds, and which schema
version, is that file's module's business (records files: ``kit.results.store``, which also
converts older records' lines; tap files: ``kit.capture.tapfile``). Each file format has its
own version, bumped when its lines change: a records file's lines can change while the tap
file's stay as they were. This module imports no record type, so a client process that
only sends a result pays nothing for the others.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, cast, get_args, get_origin

import orjson

from kit.errors import UsageError

T = TypeVar("T")


# --- typed data -> JSON -------------------------------------------------------------------


_SCALARS = (str, int, float, bool, type(None))


def to_json(value: Any) -> Any:
    """Dataclasses become objects (field order), tuples lists; everything else as it is.

    Scalars are tested first: a tap line holds thousands of them and is written on the
    relay's event loop when a connection closes."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    if hasattr(type(value), "__dataclass_fields__"):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    return value


# --- JSON -> typed data -------------------------------------------------------------------


def from_json(cls: type[T], data: Any, where: str = "value") -> T:
    """Rebuild a ``cls`` from ``to_json`` output; ``UsageError`` names what is wrong, where."""
    return cast(T, _decoder(cls)(data, where))


Decoder = Callable[[Any, str], Any]
# A frozen record type that sets ``__codec_cache__`` is decoded once per distinct JSON (a
# records file repeats its trials run after run; building one validates every field).
CACHE_SIZE = 4096
Valid = Callable[[Any], bool]
# One decoder per type, built once from its annotations: records are decoded by the
# thousand, and working out a type's shape for every value cost most of a report's time.
_DECODERS: dict[Any, Decoder] = {}
# For the types whose JSON is already the value (a str, an int in range, a finite float, a
# bool, None where allowed): a check that lets a value through without a decoder's call or
# its path (a record holds hundreds of such numbers; their messages come from the decoder).
_AS_IS: dict[Any, Valid] = {}


def _as_is(tp: Any) -> Valid | None:
    if tp in _AS_IS:
        return _AS_IS[tp]
    if get_origin(tp) in (typing.Union, types.UnionType):
        options = [o for o in get_args(tp) if o is not type(None)]
        if type(None) in get_args(tp) and len(options) == 1 and options[0] in _AS_IS:
            inner = _AS_IS[options[0]]
            return lambda v: v is None or inner(v)
    return None


def _decoder(tp: Any) -> Decoder:
    found = _DECODERS.get(tp)
    if found is None:
        found = _DECODERS[tp] = _build(tp)
    return found


def _hints(cls: type[Any]) -> dict[str, Any]:
    """A dataclass's resolved field types."""
    return typing.get_type_hints(cls)


def _fail(where: str, message: str) -> UsageError:
    return UsageError(f"{where}: {message}")


def _build(tp: Any) -> Decoder:
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass_decoder(tp)
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(get_args(tp))
    if origin is Literal:
        return _literal_decoder(get_args(tp))
    if origin is tuple:
        return _tuple_decoder(get_args(tp))
    if origin is dict:
        return _dict_decoder(get_args(tp)[1])
    return _scalar_decoder(tp)


def _dataclass_decoder(cls: type[Any]) -> Decoder:
    fields = [f for f in dataclasses.fields(cls) if f.init]
    names = frozenset(f.name for f in fields)
    required = [
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    types_of = _hints(cls)
    as_is = {name: _as_is(types_of[name]) for name in names}
    decoders: dict[str, Decoder] = {}

    def field_decoder(name: str) -> Decoder:
        # Built on first use: a dataclass may refer to itself, or to one being built.
        if name not in decoders:
            decoders[name] = _decoder(types_of[name])
        return decoders[name]

    cache: dict[bytes, Any] | None = {} if getattr(cls, "__codec_cache__", False) else None

    def decode(data: Any, where: str) -> Any:
        if cache is None:
            return build(data, where)
        try:
            key = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # an integer past 64 bits: refused by build, uncached
            return build(data, where)
        found = cache.get(key)
        if found is None:
            found = build(data, where)
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            cache[key] = found
        return found

    def build(data: Any, where: str) -> Any:
        if not isinstance(data, dict):
            raise _fail(where, f"a JSON object, not {type(data).__name__}")
        if not names.issuperset(data):
            raise _fail(where, f"unknown field(s) {', '.join(sorted(set(data) - names))}")
        missing = [name for name in required if name not in data]
        if missing:
            raise _fail(where, f"missing field(s) {', '.join(missing)}")
        kwargs = {}
        for name, value in data.items():
            valid = as_is[name]
            if valid is not None and valid(value):
                kwargs[name] = value
            else:
                kwargs[name] = field_decoder(name)(value, f"{where}.{name}")
        try:
            return cls(**kwargs)
        except UsageError as exc:
            raise _fail(where, str(exc)) from None

    return decode


def _union_decoder(options: tuple[Any, ...]) -> Decoder:
    nullable = type(None) in options
    decoders = [_decoder(o) for o in options if o is not type(None)]

    def decode(data: Any, where: str) -> Any:
        if data is None and nullable:
            return None
        errors = []
        for option in decoders:
            try:
                return option(data, where)
            except UsageError as exc:
                errors.append(str(exc))
        raise UsageError(
            errors[0] if len(errors) == 1 else f"{where}: {data!r} fits no allowed type"
        )

    return decode


def _literal_decoder(allowed: tuple[Any, ...]) -> Decoder:
    choices = ", ".join(repr(a) for a in allowed)

    def decode(data: Any, where: str) -> Any:
        if data not in allowed or isinstance(data, bool):
            raise _fail(where, f"{data!r} is not one of {choices}")
        return data

    return decode


def _tuple_decoder(args: tuple[Any, ...]) -> Decoder:
    if len(args) == 2 and args[1] is Ellipsis:
        item = _decoder(args[0])
        valid = _as_is(args[0])

        def decode_all(data: Any, where: str) -> tuple[Any, ...]:
            if not isinstance(data, list | tuple):
                raise _fail(where, f"a JSON array, not {type(data).__name__}")
            if valid is not None and all(map(valid, data)):
                return tuple(data)
            return tuple(item(v, f"{where}[{i}]") for i, v in enumerate(data))

        return decode_all
    items = [_decoder(a) for a in args]
    checks = [_as_is(a) for a in args]
    simple = all(c is not None for c in checks)

    def decode_fixed(data: Any, where: str) -> tuple[Any, ...]:
        if not isinstance(data, list | tuple):
            raise _fail(where, f"a JSON array, not {type(data).__name__}")
        if len(items) != len(data):
            raise _fail(where, f"an array of {len(items)} items, not {len(data)}")
        if simple and all(c(v) for c, v in zip(checks, data, strict=True)):  # type: ignore[misc]
            return tuple(data)
        pairs = enumerate(zip(items, data, strict=True))
        return tuple(d(v, f"{where}[{i}]") for i, (d, v) in pairs)

    return decode_fixed


def _dict_decoder(value_type: Any) -> Decoder:
    value = _decoder(value_type)

    def decode(data: Any, where: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise _fail(where, f"a JSON object, not {type(data).__name__}")
        return {str(k): value(v, f"{where}.{k}") for k, v in data.items()}

    return decode


def _scalar_decoder(tp: Any) -> Decoder:
    scalars: dict[Any, Decoder] = {
        Any: _any,
        bool: _bool,
        int: _int,
        float: _float,
        str: _str,
    }
    if tp in scalars:
        return scalars[tp]

    def unknown(data: Any, where: str) -> Any:  # a kit bug: a field type not handled
        raise _fail(where, f"cannot decode type {tp!r}")

    return unknown


def _any(data: Any, where: str) -> Any:
    return data


def _bool(data: Any, where: str) -> bool:
    if data is True or data is False:
        return bool(data)
    raise _fail(where, f"{data!r} is not true or false")


def _int(data: Any, where: str) -> int:
    if type(data) is int and -MAX_INT <= data <= MAX_INT:
        return data
    if isinstance(data, int) and not isinstance(data, bool) and abs(data) <= MAX_INT:
        return int(data)
    raise _fail(where, f"{_short(data)} is not a whole number within +-(2^63-1)")


def _float(data: Any, where: str) -> float:
    if type(data) is float and math.isfinite(data):
        return data
    if isinstance(data, int | float) and not isinstance(data, bool) and _finite(data):
        return float(data)
    raise _fail(where, f"{_short(data)} is not a finite number")


def _str(data: Any, where: str) -> str:
    if isinstance(data, str):
        return data
    raise _fail(where, f"{data!r} is not a string")


_AS_IS.update(
    {
        Any: lambda v: True,
        bool: lambda v: v is True or v is False,
        int: lambda v: type(v) is int and -MAX_INT <= v <= MAX_INT,
        float: lambda v: type(v) is float and math.isfinite(v),
        str: lambda v: type(v) is str,
    }
)


# Every whole number the kit writes (bytes, counts, ns timestamps) fits in 64 bits; JSON's
# do not have to, and a float of 10**400 overflows every report that divides by it.
MAX_INT = 2**63 - 1


def _finite(number: int | float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an int beyond a float's range
        return False


def _short(data: Any) -> str:
    """A value for a message: a huge number is not printed in its 400 digits."""
    text = repr(data) if not isinstance(data, int) or data.bit_length() < 200 else "a huge number"
    return text if len(text) <= 60 else text[:57] + "..."


# --- JSON-lines envelopes --------------------------------------------------------------------


def encode_line(kind: str, value: Any, schema: int) -> dict[str, Any]:
    """One line of a kit JSON-lines file: the envelope (schema, kind), then the fields."""
    return {"schema": schema, "kind": kind, **to_json(value)}


def decode_line(data: Any, kinds: Mapping[str, type[Any]], what: str, schema: int) -> Any:
    """A line of the file format's ``schema`` -> the typed value its kind names;
    ``UsageError`` if it is not one. Older schemas are the caller's to convert first
    (``kit.results.store``)."""
    if not isinstance(data, dict):
        raise UsageError(f"a {what} is a JSON object, not {type(data).__name__}")
    body = dict(data)
    found = body.pop("schema", None)
    if found != schema:
        raise UsageError(f"schema {found!r} is not one this release reads ({schema})")
    kind = body.pop("kind", None)
    if not isinstance(kind, str) or kind not in kinds:
        raise UsageError(f"unknown {what} kind {kind!r}")
    return from_json(kinds[kind], body, kind)
