"""What a caller may hand the library, checked before anything is read or written.

Pure functions: each takes a value and the name of the argument it came in, and returns it (or
its plain form) or raises a typed ``InvalidInput``. The API boundary (``api/validate.py``)
applies them to every argument of every public op, and the request builders of the write path
use them too, so a face (the CLI, the HTTP service) gets the same answers for the same input.

The rules: booleans are ``bool`` (never 0/1 or "yes"); numbers are finite and bounded; text is
encodable as UTF-8 (a lone surrogate is refused: no store can keep it); structures nest at most
``MAX_DEPTH`` deep; an option the op does not have is refused by name.
"""

from __future__ import annotations

import math
from typing import Any, Collection, Iterable, Mapping

from .errors import InvalidInput, NotUtf8, UnknownOption, ValueTooDeep, ValueTooLarge

MAX_DEPTH = 32  # containers inside containers: far beyond any real value, far below the recursion limit
MAX_TEXT_CHARS = 1_000_000  # one argument's text (a query, a statement, a name): a stored value has its own cap
_CONTAINERS = (dict, list, tuple, set, frozenset)


def utf8(text: str, field: str) -> str:
    """``text`` itself, if UTF-8 can encode it."""
    if not text.isascii():  # the common case costs one scan in C
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise NotUtf8(
                f"{field} is not valid Unicode text (a lone surrogate at character {exc.start}); send UTF-8 text",
                field=field,
            ) from None
    return text


def check_tree(value: Any, field: str, max_depth: int = MAX_DEPTH) -> None:
    """Every string in ``value`` (dict keys too) is UTF-8 text and containers nest at most
    ``max_depth`` deep. Iterative, so a deep or self-containing value cannot exhaust the stack."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        if isinstance(item, str):
            utf8(item, field)
        elif isinstance(item, _CONTAINERS):
            if depth >= max_depth:
                raise ValueTooDeep(f"{field} nests deeper than {max_depth} levels", field=field, limit=max_depth)
            if isinstance(item, dict):
                for name, inner in item.items():
                    push((name, depth + 1))
                    push((inner, depth + 1))
            else:
                for inner in item:
                    push((inner, depth + 1))


def flag(value: Any, field: str) -> bool:
    """A strict boolean: ``True`` or ``False``, nothing read by its truthiness."""
    if not isinstance(value, bool):
        raise InvalidInput(f"{field} must be true or false, got {type(value).__name__}", field=field)
    return value


def number(
    value: Any,
    field: str,
    *,
    low: float,
    high: float,
    low_open: bool = True,
    optional: bool = False,
) -> float | None:
    """A finite int or float in ``(low, high]`` (``[low, high]`` with ``low_open=False``)."""
    if value is None and optional:
        return None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok:
        try:
            as_float = float(value)
        except OverflowError:  # an int too large for a float
            ok = False
        else:
            ok = math.isfinite(as_float) and (low < as_float if low_open else low <= as_float) and as_float <= high
    if not ok:
        bound = f"{'(' if low_open else '['}{low:g}, {high:g}]"
        raise InvalidInput(f"{field} must be a finite number in {bound}, got {value!r:.40}", field=field)
    return as_float


def integer(value: Any, field: str, *, low: int, high: int, optional: bool = False) -> int | None:
    """An ``int`` (not a bool) in ``[low, high]``."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(f"{field} must be an integer from {low} to {high}, got {value!r:.40}", field=field)
    return value


def text(
    value: Any, field: str, *, optional: bool = False, blank: bool = False, max_chars: int = MAX_TEXT_CHARS
) -> str | None:
    """A string of UTF-8 text, at most ``max_chars`` long; blank only with ``blank``."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or (not blank and not value.strip()):
        what = "a string" if blank else "a non-empty string"
        raise InvalidInput(f"{field} must be {what}{' or null' if optional else ''}", field=field)
    if len(value) > max_chars:
        raise ValueTooLarge(f"{field} is {len(value)} characters; the limit is {max_chars}", field=field)
    return utf8(value, field)


def texts(value: Any, field: str, *, optional: bool = False, sets: bool = True) -> tuple[str, ...] | None:
    """A list (or tuple, or with ``sets`` a set) of non-empty strings; never one string."""
    if value is None and optional:
        return None
    kinds = (list, tuple, set, frozenset) if sets else (list, tuple)
    if not isinstance(value, kinds):
        raise InvalidInput(f"{field} must be a list of strings, got {type(value).__name__}", field=field)
    return tuple(text(v, f"{field}[{i}]") for i, v in enumerate(value))


def batch(value: Any, field: str) -> list[Any] | tuple[Any, ...]:
    """A batch's entries: a list or a tuple (a set has no order, a string or a map is one thing)."""
    if not isinstance(value, (list, tuple)):
        raise InvalidInput(f"{field} must be a list, got {type(value).__name__}", field=field)
    return value


def known_options(given: Iterable[str], known: Collection[str], where: str) -> None:
    """Refuse the first option of ``given`` that is not in ``known``, naming it and the known ones."""
    unknown = sorted((str(name) for name in given if name not in known), key=str)
    if unknown:
        raise UnknownOption(
            f"{where}: unknown option(s) {', '.join(map(repr, unknown))}; known: {', '.join(sorted(known))}",
            option=unknown[0],
            unknown=unknown,
            known=sorted(known),
        )


def mapping(value: Any, field: str, *, optional: bool = False) -> Mapping[str, Any] | None:
    """An object with string names."""
    if value is None and optional:
        return None
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise InvalidInput(f"{field} must be an object with string names", field=field)
    return value
