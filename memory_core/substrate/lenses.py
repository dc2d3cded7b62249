"""Lenses: what a consumer sees of the substrate and may do to it, kept in the store.

A lens is a contract (which entity types it loads, which graph relations are in scope, which
state changes it watches, which capabilities it grants, which scopes it reads, which other
lenses' captures it may read, how sensitive a row it may show, when it expires) and preferences
(how ``get_context`` weighs what it admits). Capabilities come from the contract and from the
permission groups it names.

Wearing several lenses unions them: a row is admitted when any worn lens admits it, and a
capability is held when any worn lens grants it, so a second lens can only widen what is seen.
Every lens works inside the caller's identity: the scopes a lens reads are intersected with the
identity's grants, never added to them.

Here an entity type is a row's ``memory_type`` (``lesson``, ``preference``, ``general``, ...);
a decision trace's entity type is ``decision``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, Mapping

from ..errors import InvalidInput
from ..identity import Scope
from ..inputs import known_options, number, text, texts
from ..model import SENSITIVITIES, sensitivity_rank
from ..temporal import parse_instant
from .events import type_matches

ANY = "*"
LENS_ID_CHARS = 64


class Capability(str, Enum):
    READ = "read"  # render, get_context, events
    CAPTURE = "capture"  # write a capture envelope
    DECIDE = "decide"  # record a decision trace
    APPROVE = "approve"  # approve a proposal (the approval gate of consolidation)

    @classmethod
    def parse(cls, value: object, field: str = "capabilities") -> "Capability":
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            names = ", ".join(c.value for c in cls)
            raise InvalidInput(f"unknown capability {value!r:.40}; expected one of {names}", field=field) from None


SCOPE_ORDER = (Scope.AGENT, Scope.USER, Scope.TENANT, Scope.GLOBAL)  # narrowest first


@dataclass(frozen=True, slots=True)
class LensPreferences:
    """How ``get_context`` ranks what a lens admits: a priority per entity type (default 1), tags
    it favours, and the half-life of recency in days."""

    priorities: Mapping[str, float] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    half_life_days: float = 30.0

    def to_dict(self) -> dict[str, Any]:
        return {"priorities": dict(self.priorities), "tags": list(self.tags), "half_life_days": self.half_life_days}


@dataclass(frozen=True, slots=True)
class Lens:
    """One lens as stored (its newest version)."""

    lens_id: str
    tenant: str
    version: int
    title: str
    entity_types: frozenset[str] = frozenset({ANY})
    relationships: frozenset[str] = frozenset({ANY})
    watches: frozenset[str] = frozenset({ANY})
    capabilities: frozenset[Capability] = frozenset({Capability.READ})
    groups: tuple[str, ...] = ()
    scopes: frozenset[Scope] = frozenset({Scope.AGENT, Scope.USER, Scope.TENANT})
    cross_lens: frozenset[str] = frozenset()
    max_sensitivity: str = "normal"
    expires_at: datetime | None = None
    preferences: LensPreferences = field(default_factory=LensPreferences)
    defined_at: datetime | None = None
    defined_by: str | None = None

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    def contract(self) -> dict[str, Any]:
        """The contract as stored (everything but the preferences and the bookkeeping)."""
        return {
            "title": self.title,
            "entity_types": sorted(self.entity_types),
            "relationships": sorted(self.relationships),
            "watches": sorted(self.watches),
            "capabilities": sorted(c.value for c in self.capabilities),
            "groups": list(self.groups),
            "scopes": [s.value for s in SCOPE_ORDER if s in self.scopes],
            "cross_lens": sorted(self.cross_lens),
            "max_sensitivity": self.max_sensitivity,
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
        }


CONTRACT_FIELDS = (
    "title",
    "entity_types",
    "relationships",
    "watches",
    "capabilities",
    "groups",
    "scopes",
    "cross_lens",
    "max_sensitivity",
    "expires_at",
)


def lens_id_of(value: object, field: str = "lens_id") -> str:
    found = text(value, field, max_chars=LENS_ID_CHARS)
    if not all(ch.isalnum() or ch in "-_." for ch in found):
        raise InvalidInput(f"{field} may hold letters, digits, '-', '_' and '.' only; got {found!r}", field=field)
    return found


def _names(value: object, field: str, default: frozenset[str]) -> frozenset[str]:
    if value is None:
        return default
    found = frozenset(v.strip() for v in texts(value, field))
    return frozenset({ANY}) if ANY in found else found


def parse_preferences(body: Mapping[str, Any] | None) -> LensPreferences:
    if body is None:
        return LensPreferences()
    if not isinstance(body, Mapping):
        raise InvalidInput("preferences must be an object", field="preferences")
    known_options(body, ("priorities", "tags", "half_life_days"), "a lens preference")
    priorities = body.get("priorities") or {}
    if not isinstance(priorities, Mapping):
        raise InvalidInput("preferences.priorities must be an object of entity type -> weight", field="priorities")
    weights = {
        text(k, "priorities"): float(number(v, f"priorities.{k}", low=0, high=100)) for k, v in priorities.items()
    }
    tags = tuple(t.lower() for t in texts(body.get("tags") or (), "preferences.tags"))
    half_life = float(number(body.get("half_life_days", 30.0), "half_life_days", low=0.01, high=36_500))
    return LensPreferences(dict(sorted(weights.items())), tags, half_life)


def parse_lens(
    tenant: str,
    lens_id: str,
    contract: Mapping[str, Any],
    preferences: Mapping[str, Any] | None,
    *,
    version: int,
    defined_at: datetime | None,
    defined_by: str | None,
) -> Lens:
    """A lens from its contract's fields (as a caller gives them, or as stored): every field is
    checked and a wrong one refused by name."""
    known_options(contract, CONTRACT_FIELDS, "a lens contract field")
    scopes = contract.get("scopes")
    parsed_scopes = (
        frozenset(Scope.parse(s) for s in texts(scopes, "scopes"))
        if scopes is not None
        else frozenset({Scope.AGENT, Scope.USER, Scope.TENANT})
    )
    capabilities = contract.get("capabilities")
    caps = (
        frozenset(Capability.parse(c) for c in texts(capabilities, "capabilities"))
        if capabilities is not None
        else frozenset({Capability.READ})
    )
    sensitivity = contract.get("max_sensitivity", "normal")
    if sensitivity not in SENSITIVITIES:
        raise InvalidInput(f"max_sensitivity must be one of {', '.join(SENSITIVITIES)}", field="max_sensitivity")
    cross = frozenset(
        lens_id_of(v, "cross_lens") if v != ANY else ANY for v in texts(contract.get("cross_lens") or (), "cross_lens")
    )
    return Lens(
        lens_id=lens_id_of(lens_id),
        tenant=tenant,
        version=version,
        title=text(contract.get("title") or lens_id, "title", max_chars=200),
        entity_types=_names(contract.get("entity_types"), "entity_types", frozenset({ANY})),
        relationships=_names(contract.get("relationships"), "relationships", frozenset({ANY})),
        watches=_names(contract.get("watches"), "watches", frozenset({ANY})),
        capabilities=caps,
        groups=tuple(dict.fromkeys(lens_id_of(g, "groups") for g in texts(contract.get("groups") or (), "groups"))),
        scopes=parsed_scopes,
        cross_lens=cross,
        max_sensitivity=sensitivity,
        expires_at=parse_instant(contract.get("expires_at"), "expires_at"),
        preferences=parse_preferences(preferences),
        defined_at=defined_at,
        defined_by=defined_by,
    )


@dataclass(frozen=True, slots=True)
class PermissionGroup:
    """A named set of capabilities a lens may name (``groups``)."""

    tenant: str
    name: str
    version: int
    permissions: frozenset[Capability]
    defined_at: datetime
    defined_by: str


def parse_permissions(values: object) -> frozenset[Capability]:
    return frozenset(Capability.parse(v, "permissions") for v in texts(values, "permissions"))


@dataclass(frozen=True, slots=True)
class Worn:
    """The lenses a call wears, with what their permission groups grant: the union of them all."""

    lenses: tuple[Lens, ...]
    group_grants: Mapping[str, frozenset[Capability]] = field(default_factory=dict)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(lens.lens_id for lens in self.lenses)

    def capabilities_of(self, lens: Lens) -> frozenset[Capability]:
        granted = set(lens.capabilities)
        for group in lens.groups:
            granted |= self.group_grants.get(group, frozenset())
        return frozenset(granted)

    def holding(self, capability: Capability) -> tuple[Lens, ...]:
        return tuple(lens for lens in self.lenses if capability in self.capabilities_of(lens))

    def granting(self, capability: Capability) -> Worn:
        """Only the worn lenses that grant ``capability``: a lens that may not read admits nothing
        to a read, whatever else is worn beside it."""
        return Worn(self.holding(capability), self.group_grants)

    def scopes(self) -> frozenset[Scope]:
        return frozenset(s for lens in self.lenses for s in lens.scopes)


def watches(lens: Lens, event_type: str) -> bool:
    """Does the lens watch this state-change type? (``*``, an exact type, or a ``fact.*`` family)."""
    return any(type_matches(pattern, event_type) for pattern in lens.watches)


def admits_row(
    lens: Lens,
    *,
    scope: Scope,
    entity_type: str | None,
    relation: str | None = None,
    lens_id: str | None = None,
    sensitivity: str | None = None,
) -> bool:
    """Does this lens admit a row of this shape? ``relation``: a graph relation's name (its
    relationships decide, not entity types); ``lens_id``: the lens it was captured under (None:
    shared substrate, admitted by any lens)."""
    if scope not in lens.scopes:
        return False
    if sensitivity_rank(sensitivity) > sensitivity_rank(lens.max_sensitivity):
        return False
    if (
        lens_id is not None
        and lens_id != lens.lens_id
        and ANY not in lens.cross_lens
        and lens_id not in lens.cross_lens
    ):
        return False
    if relation is not None:
        return ANY in lens.relationships or relation in lens.relationships
    return ANY in lens.entity_types or (entity_type or "general") in lens.entity_types


@dataclass(frozen=True, slots=True)
class Assignment:
    """One line of the assignment log: ``consumer`` wears (``assigned``) or no longer wears a lens
    (``version`` counts the lines of one lens and consumer; the newest holds)."""

    tenant: str
    lens_id: str
    consumer: str
    version: int
    assigned: bool
    at: datetime
    actor: str


def parse_consumer(value: object, field: str = "consumer") -> str:
    """A consumer as the store names it: ``agent:<id>``, ``user:<id>`` or ``tenant:<id>``."""
    found = text(value, field, max_chars=300).strip()
    kind, _, name = found.partition(":")
    if kind not in ("agent", "user", "tenant") or not name.strip():
        raise InvalidInput(f"{field} must be agent:<id>, user:<id> or tenant:<id>; got {found!r:.80}", field=field)
    return found
