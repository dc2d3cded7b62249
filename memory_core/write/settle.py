"""Turn a caller's set/bulk/import arguments into validated requests (typed errors, nothing written)."""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from typing import Any, Mapping

from ..errors import EmptyKey, InvalidInput, MemcoreError
from ..identity import Namespace
from ..inputs import flag, known_options, utf8
from ..model import Kind, Provenance
from ..temporal import check_interval
from ..values import canonical_json
from .options import OPTION_NAMES, SetOptions
from .request import SetRequest

MAX_KEY_LENGTH = 512
_CONTROL = re.compile("[\x00-\x1f]")
SET_OPTIONS = tuple(sorted(OPTION_NAMES))
_ENTRY_FIELDS = frozenset(("key", "value", *SET_OPTIONS))


def validate_key(key: object) -> str:
    if not isinstance(key, str) or not key.strip():
        raise EmptyKey("key must be a non-empty string")
    if len(key) > MAX_KEY_LENGTH:
        raise InvalidInput(f"key is {len(key)} characters long; the limit is {MAX_KEY_LENGTH}", field="key")
    if _CONTROL.search(key):
        raise InvalidInput("key must not contain control characters", field="key")
    return utf8(key, "key")


def optional_text(value: object, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must be a non-empty string when given", field=field)
    return utf8(value, field).strip()


def validate_memory_type(memory_type: object) -> str:
    if not isinstance(memory_type, str) or not memory_type.strip():
        raise InvalidInput("memory_type must be a non-empty string", field="memory_type")
    return utf8(memory_type, "memory_type").strip()


def make_request(
    namespace: Namespace,
    key: Any,
    value: Any,
    provenance: Provenance,
    now: datetime,
    *,
    dry_run: bool = False,
    reinforce: bool = True,
    **options: Any,
) -> SetRequest:
    """A write's request from what the caller named: an option ``set`` does not have is refused by
    name (``UNKNOWN_OPTION``), never a ``TypeError``."""
    return request_of(namespace, key, value, provenance, now, SetOptions.parse(options), dry_run, reinforce)


def request_of(
    namespace: Namespace,
    key: Any,
    value: Any,
    provenance: Provenance,
    now: datetime,
    options: SetOptions,
    dry_run: bool = False,
    reinforce: bool = True,
) -> SetRequest:
    key = validate_key(key)
    canonical = canonical_json(value)
    start = options.valid_at or now
    check_interval(start, options.invalid_at)
    return SetRequest(
        namespace=namespace,
        key=key,
        value=value,
        value_json=canonical,
        kind=options.kind,
        memory_type=options.memory_type,
        valid_at=start,
        invalid_at=options.invalid_at,
        invalid_at_given=options.invalid_at is not None,
        observed_at=options.observed_at,
        provenance=options.provenance(provenance),
        now=now,
        subject=options.subject,
        context=options.context,
        ttl_seconds=options.ttl_seconds,
        pin=options.pin,
        proposed=options.proposed,
        if_match_sha256=options.if_match_sha256,
        sensitivity=options.sensitivity,
        source_class=options.source_class,
        on_expire=options.on_expire,
        confidence=options.confidence,
        dry_run=flag(dry_run, "dry_run"),
        reinforce=reinforce,
        relations=options.relations,
    )


def entry_request(
    namespace: Namespace, index: int, entry: Any, provenance: Provenance, now: datetime, **overrides: Any
) -> SetRequest:
    """One bulk entry: {"key": ..., "value": ..., and any set option}."""
    if not isinstance(entry, Mapping):
        raise InvalidInput(f"entry {index}: each entry must be an object with key and value", entry=index)
    plain = len(entry) == 2 and "key" in entry and "value" in entry
    try:
        if not plain:
            known_options(entry, _ENTRY_FIELDS, "a bulk entry")
            if "key" not in entry or "value" not in entry:
                raise InvalidInput("an entry needs key and value", field="entries")
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


def restamped(request: SetRequest, now: datetime) -> SetRequest:
    """The request as of the moment it decides: ``now`` is read under the store's lock. A request
    stamped before it waited for the lock would otherwise see a fact the write ahead of it just
    closed as still live at its older instant, and close it a second time. A ``valid_at`` that
    defaulted to the old stamp moves with it (unless that would pass a stated end). The clock is
    the writer's: replicas on several machines need their clocks in step (docs/scaling.md)."""
    if now <= request.now:
        return request
    valid_at = request.valid_at
    if valid_at == request.now and (request.invalid_at is None or now < request.invalid_at):
        valid_at = now
    return dataclasses.replace(request, now=now, valid_at=valid_at)
