"""The wire form of the Memory tool's arguments, answers and errors: JSON, and back to the same types.

The memory service answers every op with ``encode(result)``; the remote client rebuilds the op's
declared return type with ``decode(annotation, body)``, so ``RemoteMemory(...).tool().get(...)``
returns the ``FactVersion`` that ``MemoryTool.get`` returns. A dataclass is an object of its fields,
a datetime ISO 8601 text, an enum its value, a tuple or set a list. Where a field's type is ``Any``
(a fact's value is JSON already; a SQL answer's cells may be dates, decimals, bytes), a value JSON
cannot spell is tagged ``{"$t": kind, "v": text}``, and a plain object that happens to have a
``"$t"`` member is wrapped as ``{"$t": "object", "v": {...}}``, so every value comes back as it
left. Errors travel as ``{"error": MemcoreError.to_dict()}`` and come back as the class that owns
the code.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import enum
import functools
import math
import types
import typing
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import MemcoreError

TAG = "$t"


def encode(value: Any, hint: Any = Any) -> Any:
    """``value`` as JSON-ready data (dicts, lists, text, numbers, booleans, None). ``hint``: its
    declared type; where that names a datetime the datetime is plain ISO text, elsewhere tagged."""
    if value is None or isinstance(value, (bool, str)) or (isinstance(value, int) and not isinstance(value, enum.Enum)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {TAG: "float", "v": repr(value)}
    if isinstance(value, enum.Enum):
        return encode(value.value)
    if isinstance(value, dt.datetime) and _names(hint, dt.datetime):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: encode(getattr(value, name), hint) for name, hint in _fields(type(value))}
    if isinstance(value, Mapping):
        value_hint = _item_hint(hint, 1)
        body = {_key(k): encode(v, value_hint) for k, v in value.items()}
        return {TAG: "object", "v": body} if TAG in body else body
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        item_hint = _item_hint(hint, 0)
        return [encode(v, item_hint) for v in items]
    return _tagged(value)


@functools.cache
def _names(hint: Any, cls: type) -> bool:
    if hint is cls:
        return True
    return typing.get_origin(hint) in (typing.Union, types.UnionType) and cls in typing.get_args(hint)


@functools.cache
def _item_hint(hint: Any, position: int) -> Any:
    """The declared type of a container's items (0) or a mapping's values (1)."""
    args = [a for a in typing.get_args(hint) if a is not Ellipsis]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        containers = [a for a in args if typing.get_origin(a) is not None]
        return _item_hint(containers[0], position) if len(containers) == 1 else Any
    if not args:
        return Any
    if typing.get_origin(hint) in (dict, Mapping, typing.Mapping):
        return args[1] if position == 1 and len(args) == 2 else Any
    return args[0] if len(args) == 1 or typing.get_origin(hint) is not tuple else Any


def _key(key: Any) -> str:
    if isinstance(key, enum.Enum):
        return str(key.value)
    if isinstance(key, str):
        return key
    raise TypeError(f"a mapping key of type {type(key).__name__} has no JSON spelling")


def _tagged(value: Any) -> dict[str, Any]:
    if isinstance(value, dt.datetime):
        return {TAG: "datetime", "v": value.isoformat()}
    if isinstance(value, dt.date):
        return {TAG: "date", "v": value.isoformat()}
    if isinstance(value, dt.time):
        return {TAG: "time", "v": value.isoformat()}
    if isinstance(value, dt.timedelta):
        return {TAG: "timedelta", "v": str(value // dt.timedelta(microseconds=1))}  # exact: whole microseconds
    if isinstance(value, decimal.Decimal):
        return {TAG: "decimal", "v": str(value)}
    if isinstance(value, uuid.UUID):
        return {TAG: "uuid", "v": str(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {TAG: "bytes", "v": base64.b64encode(bytes(value)).decode("ascii")}
    raise TypeError(f"a {type(value).__name__} has no wire form")


_UNTAG = {
    "datetime": dt.datetime.fromisoformat,
    "date": dt.date.fromisoformat,
    "time": dt.time.fromisoformat,
    "timedelta": lambda v: dt.timedelta(microseconds=int(v)),
    "decimal": decimal.Decimal,
    "uuid": uuid.UUID,
    "bytes": base64.b64decode,
    "float": float,
}


def decode_any(data: Any) -> Any:
    """Wire data of unknown type (an ``Any`` field): JSON as it is, tagged values as they were."""
    if isinstance(data, list):
        return [decode_any(v) for v in data]
    if isinstance(data, dict):
        tag = data.get(TAG)
        if isinstance(tag, str) and set(data) == {TAG, "v"}:
            if tag == "object":
                return {k: decode_any(v) for k, v in data["v"].items()}
            if tag in _UNTAG:
                return _UNTAG[tag](data["v"])
        return {k: decode_any(v) for k, v in data.items()}
    return data


def decode(annotation: Any, data: Any) -> Any:
    """Rebuild a value of type ``annotation`` from its wire form."""
    if annotation is Any or annotation is object:
        return decode_any(data)
    if annotation is None or annotation is type(None):
        return None
    origin, args = _shape(annotation)
    if origin in (typing.Union, types.UnionType):
        return _decode_union(args, data)
    if origin is typing.Literal:
        return data
    if origin is not None:
        return _decode_generic(origin, args, data)
    if isinstance(annotation, type):
        return _decode_class(annotation, data)
    return decode_any(data)  # a string annotation that did not resolve, a TypeVar, ...


def _decode_union(members: tuple[Any, ...], data: Any) -> Any:
    if data is None and type(None) in members:
        return None
    candidates = [m for m in members if m is not type(None)]
    if len(candidates) == 1:
        return decode(candidates[0], data)
    # Plain types first: a text that could also be read as a datetime stays text where text is allowed.
    for member in candidates:
        if member in (str, int, float, bool) and type(data) is member:
            return data
    for member in candidates:
        try:
            return decode(member, data)
        except (TypeError, ValueError, KeyError):
            continue
    return decode_any(data)


def _decode_generic(origin: Any, args: tuple[Any, ...], data: Any) -> Any:
    if origin in (list, Sequence, typing.Sequence) or origin is getattr(typing, "MutableSequence", None):
        item = args[0] if args else Any
        return [decode(item, v) for v in data]
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v) for v in data)
        if not args:
            return tuple(decode_any(v) for v in data)
        return tuple(decode(a, v) for a, v in zip(args, data))
    if origin in (frozenset, set):
        item = args[0] if args else Any
        return origin(decode(item, v) for v in data)
    if origin in (dict, Mapping, typing.Mapping):
        key_type, value_type = args if len(args) == 2 else (Any, Any)
        if isinstance(data, dict) and set(data) == {TAG, "v"} and data.get(TAG) == "object":
            data = data["v"]
        return {decode(key_type, k): decode(value_type, v) for k, v in data.items()}
    return decode_any(data)


def _decode_class(cls: type, data: Any) -> Any:
    if data is None:
        return None
    if dataclasses.is_dataclass(cls):
        return cls(**{name: decode(hint, data[name]) for name, hint in _fields(cls) if name in data})
    if issubclass(cls, enum.Enum):
        return cls(data)
    if cls is dt.datetime:
        return dt.datetime.fromisoformat(data) if isinstance(data, str) else decode_any(data)
    if cls is float:
        return decode_any(data) if isinstance(data, dict) else float(data)
    if cls in (str, int, bool):
        if not isinstance(data, cls):
            raise TypeError(f"expected {cls.__name__}, got {type(data).__name__}")
        return data
    if cls in (dict, list, tuple, set, frozenset):
        return _decode_generic(cls, (), data)
    return decode_any(data)


@functools.cache
def _shape(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    """(origin, args) of an annotation, once per annotation: every field of every answer asks."""
    return typing.get_origin(annotation), typing.get_args(annotation)


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Any], ...]:
    """A dataclass's constructor fields with their resolved types, once per class."""
    hints = _hints(cls)
    return tuple((f.name, hints.get(f.name, Any)) for f in dataclasses.fields(cls) if f.init)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except (NameError, TypeError):  # an annotation imported only for type checking: read it as Any
        return {}


# -- errors -----------------------------------------------------------------------------------------


def error_body(exc: MemcoreError) -> dict[str, Any]:
    """The wire form of a refusal: ``{"error": {"code", "status", "message", "details"?}}``."""
    body = exc.to_dict()
    if "details" in body:
        try:
            body["details"] = encode(body["details"])
        except TypeError:  # details the wire cannot spell: the code and the message still can
            body.pop("details")
    return {"error": body}


def _error_classes() -> dict[str, type[MemcoreError]]:
    found: dict[str, type[MemcoreError]] = {}
    pending: list[type[MemcoreError]] = [MemcoreError]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if "code" in vars(cls):
            # The library's own class wins over a face's subclass that reuses its code.
            if cls.code not in found or cls.__module__ == "memory_core.errors":
                found[cls.code] = cls
    return found


def raise_error(body: Mapping[str, Any], status: int) -> typing.NoReturn:
    """Raise the typed error a wire refusal names (a code this build does not know: the nearest
    base by status, keeping the code and status it was sent with)."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        error = {"code": "INTERNAL" if status >= 500 else "BAD_REQUEST", "message": f"HTTP {status}"}
    code = str(error.get("code", "BAD_REQUEST"))
    message = str(error.get("message", ""))
    details = error.get("details") if isinstance(error.get("details"), Mapping) else {}
    cls = _error_classes().get(code, MemcoreError)
    exc = cls.__new__(cls)
    MemcoreError.__init__(exc, message, **{str(k): decode_any(v) for k, v in details.items()})
    if cls.code != code or cls.status != error.get("status", status):
        exc.code, exc.status = code, int(error.get("status", status))
    raise exc
