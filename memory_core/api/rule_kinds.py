"""The kinds of rule ``validate.py``'s tables (and ``validate_surface.py``'s) give an argument:
each checks one value, by the pure checks of ``memory_core.inputs`` and the validators the ops use
themselves, and refuses with a typed ``InvalidInput``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from ..documents import validate_doc_key
from ..errors import InvalidInput, UnknownScope
from ..inputs import MAX_DEPTH, batch, check_tree, flag, integer, known_options, mapping, number, text, texts
from ..temporal import parse_instant
from ..write.settle import label_entry, validate_key, validate_memory_type
from .boundary import Rule

MAX_BODY_CHARS = 4_000_000  # a document body (chunked into values far below the value cap)
MAX_STATEMENT_CHARS = 100_000


def _later(value: Any, field: str, nullable: bool) -> None:
    """Checked whole by the op's own request builder (a transcript, a snapshot, settings)."""


def _set_option(value: Any, field: str, nullable: bool) -> None:
    """A ``set`` option: ``SetOptions.parse`` checks them all at once, the first thing ``set``
    does (``session.point.set_value``), before anything is read; checking twice would cost a
    point write about 1% more (35 µs)."""


def _key(value: Any, field: str, nullable: bool) -> None:
    validate_key(value)


def _optional_key(value: Any, field: str, nullable: bool) -> None:
    if value is not None:
        validate_key(value)


def _unit(value: Any, field: str, nullable: bool) -> None:
    number(value, field, low=0, high=1, low_open=False, optional=True)


def _doc_key(value: Any, field: str, nullable: bool) -> None:
    validate_doc_key(value)


def _memory_type(value: Any, field: str, nullable: bool) -> None:
    validate_memory_type(value)


def _scope(value: Any, field: str, nullable: bool) -> None:
    if not isinstance(value, str):  # a Scope is a str; Scope.parse names the unknown ones
        raise UnknownScope(f"scope must be one of agent, user, tenant, global; got {type(value).__name__}")


def _flag(value: Any, field: str, nullable: bool) -> None:
    flag(value, field)


def _instant(value: Any, field: str, nullable: bool) -> None:
    parse_instant(value, field)


def _text(*, blank: bool = False, max_chars: int | None = None) -> Rule:
    def rule(value: Any, field: str, nullable: bool) -> None:
        text(value, field, optional=nullable, blank=blank, **({"max_chars": max_chars} if max_chars else {}))

    return rule


def _integer(low: int, high: int) -> Rule:
    def rule(value: Any, field: str, nullable: bool) -> None:
        integer(value, field, low=low, high=high, optional=nullable)

    return rule


def _names(value: Any, field: str, nullable: bool) -> None:
    texts(value, field, optional=nullable)


def _batch(value: Any, field: str, nullable: bool) -> None:
    """A list of entries, each checked on its own: a refusal names the entry (its index)."""
    for index, entry in enumerate(batch(value, field)):
        try:
            check_tree(entry, field, MAX_DEPTH + 1)  # the entry object's own level
        except InvalidInput as exc:
            raise label_entry(exc, index) from None


def _object(value: Any, field: str, nullable: bool) -> None:
    mapping(value, field, optional=nullable)


_SQL_SCALARS = (str, int, float, bytes, type(None))


def _sql_params(value: Any, field: str, nullable: bool) -> None:
    """A list (for ``?``) or an object (for ``$name``) of plain values: no sets, no nesting."""
    if value is None:
        return
    if isinstance(value, Mapping):
        mapping(value, field)
        values = list(value.values())
    elif isinstance(value, (list, tuple)):
        values = list(value)
    else:
        raise InvalidInput(f"params must be a list or an object, got {type(value).__name__}", field=field)
    for item in values:
        if not isinstance(item, _SQL_SCALARS) or (isinstance(item, int) and not -(2**127) <= item < 2**127):
            raise InvalidInput(
                "each SQL parameter must be a string, a number (128-bit at most), bytes, a boolean or null",
                field=field,
            )


def _has(*methods: str) -> Rule:
    """An object that offers ``methods`` (an extractor, a judge, a clock): or None where that is the default."""

    def rule(value: Any, field: str, nullable: bool) -> None:
        if value is None and nullable:
            return
        if not all(callable(getattr(value, m, None)) for m in methods):
            raise InvalidInput(f"{field} must offer {', '.join(methods)}()", field=field)

    return rule


def _named(value: Any, field: str, nullable: bool) -> None:
    """An extractor or a judge: None (the default), or an object with a name and its method."""
    if value is None:
        return
    method = {"extractor": "extract", "merger": "merge"}.get(field, "judge")
    if not isinstance(getattr(value, "name", None), str) or not callable(getattr(value, method, None)):
        raise InvalidInput(f"{field} must have a name (a string) and a {method}() method", field=field)


def _callable(value: Any, field: str, nullable: bool) -> None:
    if not (value is None and nullable) and not callable(value):
        raise InvalidInput(f"{field} must be callable", field=field)


def _instance(cls: type) -> Rule:
    def rule(value: Any, field: str, nullable: bool) -> None:
        if not (value is None and nullable) and not isinstance(value, cls):
            raise InvalidInput(f"{field} must be a {cls.__name__}", field=field)

    return rule


def _home(value: Any, field: str, nullable: bool) -> None:
    """A folder's path: text UTF-8 can spell, without NUL (no file system takes one)."""
    if value is None and nullable:
        return
    path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(path, str) or "\x00" in path:
        raise InvalidInput(f"{field} must be a path (a string or a Path, without NUL)", field=field)
    text(path, field)


def _embedder(value: Any, field: str, nullable: bool) -> None:
    if value is None or isinstance(value, str):
        text(value, field, optional=True)
    elif not callable(getattr(value, "embed", None)):
        raise InvalidInput("embedder must be a name (static, minilm, hashing, openai) or an embedder", field=field)


def _seconds(value: Any, field: str, nullable: bool) -> None:
    number(value, field, low=0, high=7 * 24 * 3600)


EMBEDDER_OPTIONS = ("api_key", "base_url", "dim", "model", "model_path")


def _embedder_options(value: Any, field: str, nullable: bool) -> None:
    known_options(value, EMBEDDER_OPTIONS, "an embedder option")
    if "dim" in value:
        integer(value["dim"], "dim", low=1, high=65_536)
    for name in ("api_key", "base_url", "model"):
        text(value.get(name), name, optional=True)
    if value.get("model_path") is not None and not isinstance(value["model_path"], (str, Path)):
        raise InvalidInput("model_path must be a folder's path", field="model_path")
