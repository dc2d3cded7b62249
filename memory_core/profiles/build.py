"""A user's structured profile, decided from their live facts (pure): which facts are its sources,
the digest that names them, the profile held to the schema (rule-based: each property takes the
values of the facts that feed it, newest first, that read as its type), whether a stored profile
is current, and the profile as the text an agent reads.

The digest is an XOR of a hash of each source's fact id, content hash and valid time: it does not
depend on the order the facts are read in, a fact that is edited, deleted, restored, expired or
ends changes it, and a restatement or a recall (which change none of the three) does not.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Sequence

from ..model import FactVersion
from ..temporal import iso
from ..texts import value_text
from .schema import PROFILE_ACTOR, PROFILE_KEY, PROFILE_TYPE, ProfileProperty, ProfileSchema

EMPTY_DIGEST = "0" * 64
_INTEGER = re.compile(r"^[+-]?\d{1,18}$")
_TRUE, _FALSE = frozenset({"true", "yes", "y", "1"}), frozenset({"false", "no", "n", "0"})

CURRENT, STALE, ABSENT, EMPTY, NO_SCHEMA = "current", "stale", "absent", "empty", "no_schema"
BEHIND = (STALE, ABSENT)  # what a build run writes


def sources_of(schema: ProfileSchema, live: Sequence[FactVersion]) -> list[FactVersion]:
    """The live facts that feed a property. Never a profile, and never a ``high`` fact: a profile
    is read into an agent's context, where a high row is never shown."""
    return [
        s
        for s in live
        if s.memory_type != PROFILE_TYPE and s.sensitivity != "high" and any(p.feeds(s) for p in schema.properties)
    ]


def source_digest(sources: Sequence[FactVersion]) -> str:
    acc = 0
    for s in sources:
        line = f"{s.fact_id}\x1f{s.content_sha256}\x1f{iso(s.valid_at)}"
        acc ^= int.from_bytes(hashlib.sha256(line.encode("utf-8")).digest(), "big")
    return f"{acc:064x}"


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        found = float(value)
    elif isinstance(value, str):
        try:
            found = float(value.strip().replace(",", ""))
        except ValueError:
            return None
    else:
        return None
    return found if math.isfinite(found) else None


def _coerce(prop: ProfileProperty, value: Any) -> Any:
    """The value as the property's type, or None when it does not read as one."""
    if prop.type == "string":
        said = value_text(value).strip()
        return said or None
    if prop.type == "number":
        return _number(value)
    if prop.type == "integer":
        if isinstance(value, str) and _INTEGER.match(value.strip()):
            return int(value.strip())
        found = _number(value)
        return int(found) if found is not None and found.is_integer() and abs(found) < 2**53 else None
    if isinstance(value, bool):
        return value
    said = value.strip().lower() if isinstance(value, str) else None
    return True if said in _TRUE else False if said in _FALSE else None


@dataclass(frozen=True, slots=True)
class ProfileBody:
    """What a profile row holds (its value): the properties, and what they were built from."""

    properties: dict[str, Any]
    fed_by: dict[str, list[str]]  # property -> the fact ids its value came from
    schema_hash: str
    sources_digest: str
    source_count: int

    def to_value(self) -> dict[str, Any]:
        return {
            "properties": self.properties,
            "fed_by": self.fed_by,
            "schema_hash": self.schema_hash,
            "sources_digest": self.sources_digest,
            "source_count": self.source_count,
        }


def build_profile(schema: ProfileSchema, sources: Sequence[FactVersion]) -> ProfileBody:
    """Each property from the facts that feed it, newest valid time first (then key): a scalar
    takes the newest value that reads as its type, an array every distinct value up to its
    ``max_items``. A property nothing feeds is left out; nothing outside the schema is added."""
    newest = sorted(sources, key=lambda s: (s.valid_at, s.key), reverse=True)
    properties: dict[str, Any] = {}
    fed_by: dict[str, list[str]] = {}
    for prop in schema.properties:
        fed = [s for s in newest if prop.feeds(s)]
        if prop.type == "array":
            values: list[str] = []
            used: list[str] = []
            for s in fed:
                parts = s.value if isinstance(s.value, list) else [s.value]
                for part in parts:
                    said = value_text(part).strip()
                    if said and said not in values and len(values) < prop.max_items:
                        values.append(said)
                        if s.fact_id not in used:
                            used.append(s.fact_id)
            if values:
                properties[prop.name], fed_by[prop.name] = values, used
            continue
        for s in fed:
            found = _coerce(prop, s.value)
            if found is not None:
                properties[prop.name], fed_by[prop.name] = found, [s.fact_id]
                break
    return ProfileBody(properties, fed_by, schema.hash, source_digest(sources), len(sources))


def built_body(row: FactVersion | None) -> ProfileBody | None:
    """The body of a profile row the worker wrote, or None: a row at the key whose value another
    actor wrote (a plain ``set``), or that does not hold a profile, is no built profile."""
    if row is None or row.key != PROFILE_KEY or row.provenance.actor != PROFILE_ACTOR:
        return None
    value = row.value
    if not isinstance(value, dict) or not isinstance(value.get("properties"), dict):
        return None
    return ProfileBody(
        dict(value["properties"]),
        dict(value.get("fed_by") or {}),
        str(value.get("schema_hash", "")),
        str(value.get("sources_digest", "")),
        int(value.get("source_count", 0)) if isinstance(value.get("source_count"), int) else 0,
    )


def status_of(schema: ProfileSchema | None, built: ProfileBody | None, digest: str, count: int) -> str:
    """Where a user's profile stands: ``current`` (built under this schema from these sources),
    ``stale`` (either changed since), ``absent`` (none built, and sources to build from),
    ``empty`` (none built, nothing to build from), ``no_schema``."""
    if schema is None:
        return NO_SCHEMA
    if built is None:
        return ABSENT if count else EMPTY
    return CURRENT if (built.schema_hash, built.sources_digest) == (schema.hash, digest) else STALE


def render_profile(schema: ProfileSchema | None, properties: dict[str, Any], source_count: int) -> str:
    """The profile as an agent reads it: one line per property, in the schema's order (then any
    the schema no longer names), headed as derived, not said."""
    order = [p.name for p in schema.properties] if schema is not None else []
    names = [n for n in order if n in properties] + sorted(n for n in properties if n not in order)
    lines = [f"Structured profile (derived from {source_count} facts):"]
    for name in names:
        value = properties[name]
        said = "; ".join(value_text(v) for v in value) if isinstance(value, list) else value_text(value)
        lines.append(f"- {name}: {said}")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class StructuredProfile:
    """``MemoryTool.profile``: the caller's profile as stored, and whether it is still what its
    sources say (the digest recomputed now, nothing written)."""

    owner_id: str
    status: str  # current | stale | absent | empty | no_schema
    stale: bool
    properties: dict[str, Any]
    text: str | None
    schema_scope: str | None  # the scope whose schema applies: user, else tenant
    schema_version: int | None
    schema_hash: str | None  # the schema's now
    built_schema_hash: str | None  # the one the profile was built under
    sources_digest: str | None  # as built
    source_count: int
    current_digest: str  # of the sources as they stand now
    current_count: int
    fed_by: dict[str, list[str]]
    fact_id: str | None
    version_id: str | None
    content_sha256: str | None
    built_at: datetime | None
