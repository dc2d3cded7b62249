"""The reflect pipeline's values: the five phases, a source it reads, a claim it stages and the
connections and plan each later phase adds to the claim, and what a phase run reports.

A claim is one statement read from one source (a capture, a transcript, a decision trace),
kept in its source's namespace. Its ``status`` says how far it went: ``staged`` (reduce),
``connected`` (reflect), ``planned`` (reweave), ``applying`` (verify began its write),
``written`` or ``rejected`` (verify); archive sets ``archived`` once its source is processed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping

from ..identity import Namespace, Scope

REFLECT_ORIGIN = "memory.reflect"  # the provenance origin of every row the pipeline writes
REFLECT_ACTOR = "worker:reflect"
TAG = "memory.reflect:claim:"  # a written row's provenance source: the claim it came from

PHASES = ("reduce", "reflect", "reweave", "verify", "archive")
# Each phase after reduce works on the claims its upstream phase has finished with.
UPSTREAM = {"reflect": "reduce", "reweave": "reflect", "verify": "reweave", "archive": "verify"}

STAGED, CONNECTED, PLANNED, APPLYING, WRITTEN, REJECTED = (
    "staged",
    "connected",
    "planned",
    "applying",
    "written",
    "rejected",
)
CLAIM_STATUSES = (STAGED, CONNECTED, PLANNED, APPLYING, WRITTEN, REJECTED)

CAPTURE, TRANSCRIPT, DECISION = "capture", "transcript", "decision"

SUPPORTS, CONTRADICTS, SHARES_ENTITY = "supports", "contradicts", "shares_entity"
# What reweave decides for a claim (``Plan.action``).
NEW, HELD, UPDATE, REINFORCE, REFINE, SUPERSEDE, STALE = (
    "new",
    "held",
    "update",
    "reinforce",
    "refine",
    "supersede",
    "stale",
)


@dataclass(frozen=True, slots=True)
class Source:
    """One input reduce read: a row (capture, transcript chunk, conversation note) or a decision
    trace's version, with the text it says."""

    ref: str  # ``fact:<id>`` / ``note:<id>`` / ``decision:<id>@v<n>``
    kind: str  # capture | transcript | decision
    tenant: str
    scope: str
    owner_id: str
    seq: int  # the state-change event it was read from
    fact_id: str  # the row's fact, or the decision's id
    key: str  # the row's key, or ``decision:<id>``
    text: str
    subject: str | None
    memory_type: str
    observed_at: datetime
    holds_statement: bool = False  # a capture: a fact that states its own text
    window: bool = False  # a transcript window: ``speaker: words`` lines


@dataclass(frozen=True, slots=True)
class Connection:
    kind: str  # supports | contradicts | shares_entity
    fact_id: str
    key: str
    cosine: float | None = None
    entity: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "fact_id": self.fact_id,
            "key": self.key,
            "cosine": self.cosine,
            "entity": self.entity,
        }


@dataclass(frozen=True, slots=True)
class Plan:
    """How a claim updates what the namespace knows. ``key``/``value``: the write that states it
    (None: nothing to write, its source already holds it or it reinforces ``target``);
    ``holder``: the fact that already states it; ``target``: the fact it reinforces, refines,
    supersedes, updates or is contradicted by."""

    action: str
    key: str | None = None
    value: Any = None
    memory_type: str | None = None
    holder: str | None = None
    target: tuple[str, str] | None = None  # (fact id, key)
    cosine: float | None = None
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "key": self.key,
            "value": self.value,
            "memory_type": self.memory_type,
            "holder": self.holder,
            "target": list(self.target) if self.target else None,
            "cosine": self.cosine,
            "why": self.why,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Plan:
        target = d.get("target")
        return cls(
            d["action"],
            d.get("key"),
            d.get("value"),
            d.get("memory_type"),
            d.get("holder"),
            (target[0], target[1]) if target else None,
            d.get("cosine"),
            d.get("why", ""),
        )


@dataclass(frozen=True, slots=True)
class Claim:
    claim_id: str
    tenant: str
    scope: str
    owner_id: str
    source_ref: str
    source_kind: str
    source_seq: int
    source_fact: str
    source_key: str
    ordinal: int  # its place among its source's claims
    text: str
    key: str  # where it is written when it is new
    memory_type: str
    subject: str | None
    observed_at: datetime
    relations: tuple[tuple[str, str, str], ...] = ()
    whole: bool = False  # it is its source's whole statement, and the source is a fact: the source holds it
    status: str = STAGED
    connections: tuple[Connection, ...] = ()
    plan: Plan | None = None
    reason: str | None = None  # why verify rejected it
    fact_id: str | None = None  # the fact that states it once written (or the one it reinforced)
    fact_key: str | None = None
    outcome: str | None = None  # what its write did (the event types it produced)
    applying_from: int | None = None  # the event seq verify began its write after
    archived: bool = False

    @property
    def namespace(self) -> Namespace:
        return Namespace(self.tenant, Scope(self.scope), self.owner_id)

    @property
    def tag(self) -> str:
        return f"{TAG}{self.claim_id}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim_id": self.claim_id,
            "scope": self.scope,
            "owner_id": self.owner_id,
            "source_ref": self.source_ref,
            "source_kind": self.source_kind,
            "source_seq": self.source_seq,
            "ordinal": self.ordinal,
            "text": self.text,
            "key": self.key,
            "memory_type": self.memory_type,
            "status": self.status,
            "connections": [c.to_dict() for c in self.connections],
            "plan": self.plan.to_dict() if self.plan else None,
            "reason": self.reason,
            "fact_key": self.fact_key,
            "outcome": self.outcome,
            "archived": self.archived,
        }


def connections_json(connections: tuple[Connection, ...]) -> str:
    return json.dumps([c.to_dict() for c in connections], sort_keys=True)


def connections_of(text: str) -> tuple[Connection, ...]:
    return tuple(Connection(**d) for d in json.loads(text or "[]"))


@dataclass(frozen=True)
class ReflectSettings:
    link_cosine: float = 0.5  # a live peer this close is a connection
    act_cosine: float | None = None  # reweave acts on a connection this close (None: the tenant's conflict threshold)
    max_links: int = 8  # connections of each kind kept per claim
    max_claim_chars: int = 500  # a claim is one statement: longer is refused
    page: int = 500  # events read, claims saved, inputs archived per step


@dataclass(frozen=True)
class PhaseReport:
    tenant: str
    phase: str
    since: int  # the phase's cursor before the run
    upto: int  # after it
    counts: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"tenant": self.tenant, "phase": self.phase, "since": self.since, "upto": self.upto, **self.counts}
