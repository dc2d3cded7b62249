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
from typing import Any, Callable

from .errors import MemcoreError

TAG = "$t"


def encode(value: Any, hint: Any = Any) -> Any:
    """``value`` as JSON-ready data (dicts, lists, text, numbers, booleans, None). ``hint``: its
    declared type; where that names a datetime the datetime is plain ISO text, elsewhere tagged."""
    kind = type(value)
    if kind in _AS_IS:  # exact types first: most of an answer's leaves (an enum member is not one)
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {TAG: "float", "v": repr(value)}
    if kind is dict or kind is list or kind is tuple:
        return _container(value, hint)
    fields = _dataclass_fields(kind)
    if fields is not None:
        return {name: encode(getattr(value, name), field_hint) for name, field_hint in fields}
    if isinstance(value, (bool, str)) or (isinstance(value, int) and not isinstance(value, enum.Enum)):
        return value
    if isinstance(value, enum.Enum):
        return encode(value.value)
    if isinstance(value, dt.datetime) and _names(hint, dt.datetime):
        return value.isoformat()
    if isinstance(value, (Mapping, list, tuple, set, frozenset)):
        return _container(value, hint)
    return _tagged(value)


def _container(value: Any, hint: Any) -> Any:
    """A mapping as an object (wrapped when it has a ``"$t"`` member), a sequence or set as a list."""
    if isinstance(value, Mapping):
        value_hint = _item_hint(hint, 1)
        body = {_key(k): encode(v, value_hint) for k, v in value.items()}
        return {TAG: "object", "v": body} if TAG in body else body
    items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
    item_hint = _item_hint(hint, 0)
    return [encode(v, item_hint) for v in items]


_AS_IS = frozenset({str, int, bool, type(None)})


@functools.cache
def _dataclass_fields(kind: type) -> tuple[tuple[str, Any], ...] | None:
    """The fields ``encode`` writes for instances of ``kind``; None when it is not a dataclass."""
    return _fields(kind) if dataclasses.is_dataclass(kind) else None


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
    return _decoder(annotation)(data)


Decoder = Callable[[Any], Any]


@functools.cache
def _decoder(annotation: Any) -> Decoder:
    """How to rebuild values of ``annotation``, worked out once per annotation: a client decodes
    every answer of an op with the same one, and a recall's hits walked the annotations field by
    field each time (0.6 ms of a 10-hit answer; docs/benchmarks.md)."""
    if annotation is Any or annotation is object:
        return decode_any
    if annotation is None or annotation is type(None):
        return _none
    origin, args = _shape(annotation)
    if origin in (typing.Union, types.UnionType):
        candidates = [m for m in args if m is not type(None)]
        if len(candidates) == 1:
            return _or_none(_decoder(candidates[0]))
        return functools.partial(_decode_union, args)
    if origin is typing.Literal:
        return _same
    if origin is not None:
        return _generic_decoder(origin, args)
    if isinstance(annotation, type):
        return _class_decoder(annotation)
    return decode_any  # a string annotation that did not resolve, a TypeVar, ...


def _none(data: Any) -> None:
    return None


def _same(data: Any) -> Any:
    return data


def _or_none(inner: Decoder) -> Decoder:
    return lambda data: None if data is None else inner(data)


def _decode_union(members: tuple[Any, ...], data: Any) -> Any:
    if data is None and type(None) in members:
        return None
    candidates = [m for m in members if m is not type(None)]
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


def _generic_decoder(origin: Any, args: tuple[Any, ...]) -> Decoder:
    if origin in (list, Sequence, typing.Sequence) or origin is getattr(typing, "MutableSequence", None):
        item = _decoder(args[0] if args else Any)
        return lambda data: [item(v) for v in data]
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder(args[0])
            return lambda data: tuple(item(v) for v in data)
        if not args:
            return lambda data: tuple(decode_any(v) for v in data)
        items = [_decoder(a) for a in args]
        return lambda data: tuple(d(v) for d, v in zip(items, data))
    if origin in (frozenset, set):
        item = _decoder(args[0] if args else Any)
        return lambda data: origin(item(v) for v in data)
    if origin in (dict, Mapping, typing.Mapping):
        key, value = (_decoder(a) for a in (args if len(args) == 2 else (Any, Any)))

        def mapping(data: Any) -> dict[Any, Any]:
            if isinstance(data, dict) and set(data) == {TAG, "v"} and data.get(TAG) == "object":
                data = data["v"]
            return {key(k): value(v) for k, v in data.items()}

        return mapping
    return decode_any


def _class_decoder(cls: type) -> Decoder:
    """A class's decoder; every one answers None for None (a field the service left empty)."""
    if dataclasses.is_dataclass(cls):
        return _dataclass_decoder(cls)
    if issubclass(cls, enum.Enum):
        return _or_none(cls)
    if cls is dt.datetime:
        return _or_none(_datetime)
    if cls is float:
        return _or_none(_float)
    if cls in (str, int, bool):
        return functools.partial(_exactly, cls)
    if cls in (dict, list, tuple, set, frozenset):
        return _or_none(_generic_decoder(cls, ()))
    return _or_none(decode_any)


def _datetime(data: Any) -> Any:
    return dt.datetime.fromisoformat(data) if isinstance(data, str) else decode_any(data)


def _float(data: Any) -> Any:
    return decode_any(data) if isinstance(data, dict) else float(data)


def _exactly(cls: type, data: Any) -> Any:
    if data is None:
        return None
    if not isinstance(data, cls):
        raise TypeError(f"expected {cls.__name__}, got {type(data).__name__}")
    return data


def _dataclass_decoder(cls: type) -> Decoder:
    # The fields' decoders are worked out at the first decode, not here: a dataclass may name
    # itself among its fields' types (a tree), and this runs inside ``_decoder``'s cache.
    fields: tuple[tuple[str, Decoder], ...] | None = None

    def build(data: Any) -> Any:
        nonlocal fields
        if data is None:
            return None
        if fields is None:  # one assignment: another thread sees all of them or none
            fields = tuple((name, _decoder(hint)) for name, hint in _fields(cls))
        return cls(**{name: field(data[name]) for name, field in fields if name in data})

    return build


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
