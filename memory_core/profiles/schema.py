"""A structured profile's schema: which properties a user's profile has, each with its type, what
it means, and which of the user's facts feed it (by memory type, by key pattern, or both).

A schema is set per namespace (``MemoryTool.profile_schema_set``): the tenant's applies to every
user of the tenant, a user's own replaces it for that user. It is checked whole before anything
is stored (``parse_schema``), and named by the hash of its canonical form, which every profile
built from it carries: a profile built under another schema is stale (docs/workers.md).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping

from ..errors import InvalidInput
from ..inputs import integer, mapping, text
from ..model import FactVersion
from ..write.settle import validate_memory_type

PROFILE_KEY = "profile:structured"  # every user's profile lives at this key of their user scope
PROFILE_TYPE = "profile"  # a builtin type that is never embedded: no search leg serves it
# The actor the worker writes as. No token maps to a ``worker:`` actor, so a row at the profile
# key whose value another actor wrote is never served or counted as a built profile.
PROFILE_ACTOR = "worker:structured-profile"

PROPERTY_TYPES = ("string", "number", "integer", "boolean", "array")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
MAX_PROPERTIES = 64
MAX_SELECTORS = 16  # memory types, and key patterns, per property
MAX_ITEMS = 50
DEFAULT_ITEMS = 10
_SPEC_FIELDS = ("type", "description", "from", "max_items")
_FROM_FIELDS = ("memory_types", "keys")


@dataclass(frozen=True, slots=True)
class ProfileProperty:
    name: str
    type: str
    description: str
    memory_types: tuple[str, ...]  # a feeding fact is of one of these (when any are named)
    keys: tuple[str, ...]  # and its key matches one of these patterns (when any are named)
    max_items: int = DEFAULT_ITEMS  # an array keeps at most this many values, newest first

    def feeds(self, state: FactVersion) -> bool:
        """Whether the fact feeds this property: every selector it names holds."""
        if self.memory_types and state.memory_type not in self.memory_types:
            return False
        return not self.keys or any(fnmatch.fnmatchcase(state.key, p) for p in self.keys)

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": self.type, "description": self.description, "from": {}}
        if self.memory_types:
            body["from"]["memory_types"] = list(self.memory_types)
        if self.keys:
            body["from"]["keys"] = list(self.keys)
        if self.type == "array":
            body["max_items"] = self.max_items
        return body


@dataclass(frozen=True, slots=True)
class ProfileSchema:
    properties: tuple[ProfileProperty, ...]  # by name

    def to_dict(self) -> dict[str, Any]:
        return {p.name: p.to_dict() for p in self.properties}

    @property
    def hash(self) -> str:
        """SHA-256 of the canonical schema: the same schema, however it was spelled, one hash."""
        body = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(body.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class ProfileSchemaInfo:
    """A schema as stored: which namespace it was set for, its version there, who set it."""

    tenant: str
    scope: str  # tenant | user
    owner_id: str
    version: int
    schema_hash: str
    properties: dict[str, Any]  # the canonical schema (``ProfileSchema.to_dict``)
    actor: str
    set_at: datetime

    def schema(self) -> ProfileSchema:
        return parse_schema(self.properties)


def _selectors(value: Any, field: str, check) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or len(value) > MAX_SELECTORS:
        raise InvalidInput(f"{field} must be a list of at most {MAX_SELECTORS} strings", field=field)
    return tuple(sorted({check(v, f"{field}[{i}]") for i, v in enumerate(value)}))


def _memory_type(value: Any, field: str) -> str:
    if isinstance(value, str) and value.strip() == PROFILE_TYPE:
        raise InvalidInput("a profile is never fed from profiles", field=field)
    return validate_memory_type(text(value, field, max_chars=200))


def _pattern(value: Any, field: str) -> str:
    return text(value, field, max_chars=200)


def _property(name: Any, spec: Any) -> ProfileProperty:
    field = f"properties.{name}"
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidInput(
            f"a property name is lower-case letters, digits and _ (1 to 64, a letter first), got {name!r:.60}",
            field="properties",
        )
    spec = mapping(spec, field)
    unknown = sorted(set(spec) - set(_SPEC_FIELDS))
    if unknown:
        raise InvalidInput(f"{field}: unknown field {unknown[0]!r}; expected {', '.join(_SPEC_FIELDS)}", field=field)
    kind = spec.get("type")
    if kind not in PROPERTY_TYPES:
        raise InvalidInput(f"{field}.type must be one of {', '.join(PROPERTY_TYPES)}", field=f"{field}.type")
    description = text(spec.get("description", ""), f"{field}.description", blank=True, max_chars=500)
    source = mapping(spec.get("from"), f"{field}.from")
    unknown = sorted(set(source) - set(_FROM_FIELDS))
    if unknown:
        raise InvalidInput(f"{field}.from: unknown field {unknown[0]!r}; expected memory_types, keys", field=field)
    types = _selectors(source.get("memory_types"), f"{field}.from.memory_types", _memory_type)
    keys = _selectors(source.get("keys"), f"{field}.from.keys", _pattern)
    if not types and not keys:
        raise InvalidInput(f"{field}.from names no memory type and no key pattern", field=f"{field}.from")
    items = spec.get("max_items")
    if items is not None and kind != "array":
        raise InvalidInput(f"{field}.max_items is for an array", field=f"{field}.max_items")
    limit = integer(items, f"{field}.max_items", low=1, high=MAX_ITEMS) if items is not None else DEFAULT_ITEMS
    return ProfileProperty(name, kind, description.strip(), types, keys, limit)


def parse_schema(body: Any) -> ProfileSchema:
    """A schema from its mapping of property name -> {type, description, from: {memory_types,
    keys}, max_items (arrays)}; refused whole (``InvalidInput`` naming the field) when any part is
    wrong, so a bad schema stores nothing."""
    body = mapping(body, "properties")
    if not body or len(body) > MAX_PROPERTIES:
        raise InvalidInput(f"a schema names 1 to {MAX_PROPERTIES} properties", field="properties")
    return ProfileSchema(tuple(_property(name, body[name]) for name in sorted(body, key=str)))


def canonical(properties: Mapping[str, Any]) -> str:
    return json.dumps(properties, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
