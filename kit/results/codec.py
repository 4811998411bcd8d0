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
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast, get_args, get_origin

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
    return cast(T, _decode(cls, data, where))


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    """A dataclass's resolved field types (cached: records are decoded by the thousand)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _fail(where: str, message: str) -> UsageError:
    return UsageError(f"{where}: {message}")


def _decode(tp: Any, data: Any, where: str) -> Any:
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _decode_dataclass(tp, data, where)
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _decode_union(get_args(tp), data, where)
    if origin is Literal:
        if data not in get_args(tp) or isinstance(data, bool):
            choices = ", ".join(repr(a) for a in get_args(tp))
            raise _fail(where, f"{data!r} is not one of {choices}")
        return data
    if origin is tuple:
        return _decode_tuple(get_args(tp), data, where)
    if origin is dict:
        return _decode_dict(get_args(tp)[1], data, where)
    return _decode_scalar(tp, data, where)


def _decode_dataclass(cls: type[Any], data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise _fail(where, f"a JSON object, not {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise _fail(where, f"unknown field(s) {', '.join(unknown)}")
    missing = [
        name
        for name, f in fields.items()
        if name not in data
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise _fail(where, f"missing field(s) {', '.join(missing)}")
    hints = _hints(cls)
    kwargs = {name: _decode(hints[name], value, f"{where}.{name}") for name, value in data.items()}
    try:
        return cls(**kwargs)
    except UsageError as exc:
        raise _fail(where, str(exc)) from None


def _decode_union(options: tuple[Any, ...], data: Any, where: str) -> Any:
    if data is None and type(None) in options:
        return None
    errors = []
    for option in options:
        if option is type(None):
            continue
        try:
            return _decode(option, data, where)
        except UsageError as exc:
            errors.append(str(exc))
    raise UsageError(errors[0] if len(errors) == 1 else f"{where}: {data!r} fits no allowed type")


def _decode_tuple(args: tuple[Any, ...], data: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(data, list | tuple):
        raise _fail(where, f"a JSON array, not {type(data).__name__}")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(data))
    if len(args) != len(data):
        raise _fail(where, f"an array of {len(args)} items, not {len(data)}")
    pairs = enumerate(zip(args, data, strict=True))
    return tuple(_decode(a, v, f"{where}[{i}]") for i, (a, v) in pairs)


def _decode_dict(value_type: Any, data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _fail(where, f"a JSON object, not {type(data).__name__}")
    return {str(k): _decode(value_type, v, f"{where}.{k}") for k, v in data.items()}


def _decode_scalar(tp: Any, data: Any, where: str) -> Any:
    if tp is Any:
        return data
    if tp is bool:
        if isinstance(data, bool):
            return data
        raise _fail(where, f"{data!r} is not true or false")
    if tp is int:
        if isinstance(data, int) and not isinstance(data, bool) and abs(data) <= MAX_INT:
            return data
        raise _fail(where, f"{_short(data)} is not a whole number within +-(2^63-1)")
    if tp is float:
        if isinstance(data, int | float) and not isinstance(data, bool) and _finite(data):
            return float(data)
        raise _fail(where, f"{_short(data)} is not a finite number")
    if tp is str:
        if isinstance(data, str):
            return data
        raise _fail(where, f"{data!r} is not a string")
    raise _fail(where, f"cannot decode type {tp!r}")  # a kit bug: a field type not handled


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
