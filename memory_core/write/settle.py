"""Turn a caller's set/bulk/import arguments into validated requests (typed errors, nothing written)."""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from typing import Any, Mapping

from ..errors import EmptyKey, InvalidInput, MemcoreError
from ..graph.model import Relation, parse_relations
from ..identity import Namespace
from ..model import ON_EXPIRE, Kind, Provenance
from ..temporal import check_interval, parse_instant
from ..values import canonical_json
from .request import SetRequest

MAX_KEY_LENGTH = 512
_CONTROL = re.compile("[\x00-\x1f]")
SET_OPTIONS = (
    "kind",
    "memory_type",
    "valid_at",
    "invalid_at",
    "observed_at",
    "subject",
    "context",
    "ttl_seconds",
    "pin",
    "proposed",
    "if_match_sha256",
    "sensitivity",
    "source_class",
    "on_expire",
    "confidence",
    "relations",
    "subject_type",
    "source_quote",
    "source_turn",
    "source_span",
    "compaction_generation",
)
_ENTRY_FIELDS = frozenset(("key", "value", *SET_OPTIONS))


def validate_key(key: object) -> str:
    if not isinstance(key, str) or not key.strip():
        raise EmptyKey("key must be a non-empty string")
    if len(key) > MAX_KEY_LENGTH:
        raise InvalidInput(f"key is {len(key)} characters long; the limit is {MAX_KEY_LENGTH}", field="key")
    if _CONTROL.search(key):
        raise InvalidInput("key must not contain control characters", field="key")
    return key


def optional_text(value: object, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must be a non-empty string when given", field=field)
    return value.strip()


def validate_memory_type(memory_type: object) -> str:
    if not isinstance(memory_type, str) or not memory_type.strip():
        raise InvalidInput("memory_type must be a non-empty string", field="memory_type")
    return memory_type.strip()


def _flag(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"{field} must be true or false", field=field)
    return value


def _number(value: object, field: str, low: float, high: float | None = None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= low or (high and value > high):
        bound = f"in ({low}, {high}]" if high else f"above {low}"
        raise InvalidInput(f"{field} must be a number {bound}, got {value!r}", field=field)
    return float(value)


def make_request(
    namespace: Namespace,
    key: Any,
    value: Any,
    provenance: Provenance,
    now: datetime,
    *,
    kind: Any = Kind.FACT,
    memory_type: Any = "general",
    valid_at: Any = None,
    invalid_at: Any = None,
    observed_at: Any = None,
    subject: Any = None,
    context: Any = None,
    ttl_seconds: Any = None,
    pin: Any = False,
    proposed: Any = False,
    if_match_sha256: Any = None,
    sensitivity: Any = None,
    source_class: Any = None,
    on_expire: Any = None,
    confidence: Any = None,
    dry_run: bool = False,
    reinforce: bool = True,
    relations: Any = None,
    subject_type: Any = None,
    source_quote: Any = None,
    source_turn: Any = None,
    source_span: Any = None,
    compaction_generation: Any = None,
) -> SetRequest:
    key = validate_key(key)
    provenance = _source(provenance, source_quote, source_turn, source_span, compaction_generation)
    canonical = canonical_json(value)
    start = parse_instant(valid_at, "valid_at") or now
    end = parse_instant(invalid_at, "invalid_at")
    check_interval(start, end)
    if if_match_sha256 is not None and (not isinstance(if_match_sha256, str) or len(if_match_sha256) != 64):
        raise InvalidInput("if_match_sha256 must be a 64-character hex digest", field="if_match_sha256")
    if on_expire is not None and on_expire not in ON_EXPIRE:
        raise InvalidInput(f"on_expire must be one of {', '.join(ON_EXPIRE)}", field="on_expire")
    for name, text in (("sensitivity", sensitivity), ("source_class", source_class)):
        if text is not None and not isinstance(text, str):
            raise InvalidInput(f"{name} must be a string", field=name)
    return SetRequest(
        namespace=namespace,
        key=key,
        value=value,
        value_json=canonical,
        kind=Kind.parse(kind),
        memory_type=validate_memory_type(memory_type),
        valid_at=start,
        invalid_at=end,
        invalid_at_given=invalid_at is not None,
        observed_at=parse_instant(observed_at, "observed_at"),
        provenance=provenance,
        now=now,
        subject=optional_text(subject, "subject"),
        context=optional_text(context, "context"),
        ttl_seconds=_number(ttl_seconds, "ttl_seconds", 0),
        pin=_flag(pin, "pin"),
        proposed=_flag(proposed, "proposed"),
        if_match_sha256=if_match_sha256,
        sensitivity=sensitivity,
        source_class=source_class,
        on_expire=on_expire,
        confidence=_number(confidence, "confidence", 0, 1),
        dry_run=_flag(dry_run, "dry_run"),
        reinforce=reinforce,
        relations=_relations(relations, subject, subject_type),
    )


def _source(provenance: Provenance, quote: Any, turn: Any, span: Any, generation: Any) -> Provenance:
    """Where in a transcript the value was read: the quote, its message, its span, the boundary."""
    if quote is None and turn is None and span is None and generation is None:
        return provenance
    if span is not None and (
        isinstance(span, (str, bytes))
        or not isinstance(span, (list, tuple))
        or len(span) != 2
        or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in span)
        or span[0] > span[1]
    ):
        raise InvalidInput("source_span must be [start, end] character offsets", field="source_span")
    if generation is not None and (isinstance(generation, bool) or not isinstance(generation, int) or generation < 0):
        raise InvalidInput("compaction_generation must be a non-negative integer", field="compaction_generation")
    return dataclasses.replace(
        provenance,
        source_quote=optional_text(quote, "source_quote") or provenance.source_quote,
        source_turn=optional_text(turn, "source_turn"),
        source_span=tuple(span) if span is not None else None,
        compaction_generation=generation,
    )


def _relations(raw: Any, subject: Any, subject_type: Any) -> tuple[Relation, ...]:
    """The graph facts a write names; ones built by the tool itself (document chunks) pass as they are."""
    if isinstance(raw, tuple) and raw and all(isinstance(r, Relation) for r in raw):
        return raw
    subject_type = optional_text(subject_type, "subject_type")
    return parse_relations(
        raw, subject_type=subject_type, default_subject=subject if isinstance(subject, str) else None
    )


def entry_request(
    namespace: Namespace, index: int, entry: Any, provenance: Provenance, now: datetime, **overrides: Any
) -> SetRequest:
    """One bulk entry: {"key": ..., "value": ..., and any set option}."""
    if not isinstance(entry, Mapping):
        raise InvalidInput(f"entry {index}: each entry must be an object with key and value", entry=index)
    plain = len(entry) == 2 and "key" in entry and "value" in entry
    unknown = set() if plain else entry.keys() - _ENTRY_FIELDS
    if not plain and (unknown or "key" not in entry or "value" not in entry):
        raise InvalidInput(
            f"entry {index}: needs key and value; unknown field(s): {', '.join(sorted(unknown)) or '-'}", entry=index
        )
    try:
        if plain and not overrides:
            return plain_request(namespace, entry["key"], entry["value"], provenance, now)
        options = {k: v for k, v in entry.items() if k not in ("key", "value")}
        options.update(overrides)
        return make_request(namespace, entry["key"], entry["value"], provenance, now, **options)
    except InvalidInput as exc:
        label_entry(exc, index)
        raise


def plain_request(namespace: Namespace, key: Any, value: Any, provenance: Provenance, now: datetime) -> SetRequest:
    """``make_request`` for a key and a value with every option at its default: the usual bulk
    entry, built without the option checks (a batch of 100k spent a second in them)."""
    return SetRequest(
        namespace,
        validate_key(key),
        value,
        canonical_json(value),
        Kind.FACT,
        "general",
        now,
        None,
        False,
        None,
        provenance,
        now,
    )


def label_entry(exc: MemcoreError, index: int) -> MemcoreError:
    """Name the batch entry a refusal is about (the whole batch is refused)."""
    exc.details["entry"] = index
    exc.message = f"entry {index}: {exc.message}"
    exc.args = (exc.message,)
    return exc
