"""What an erasure covers and the request row its saga checkpoints into."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from ..errors import InvalidInput
from ..identity import Namespace, Scope


class TargetKind(StrEnum):
    USER = "user"  # the user's own scope (tenant, user, <user>) and the user's keys and records
    AGENT = "agent"  # the agent's scope (tenant, agent, <agent>) and the agent's keys and records
    NAMESPACES = "namespaces"  # a list of (scope, owner) of one tenant
    TENANT = "tenant"  # every row of the tenant, every scope


class ErasureStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    VERIFIED = "verified"  # every step ran and the census counted nothing
    FAILED = "failed"  # the census found residue after re-running its step: recovery retries
    ABANDONED = "abandoned"  # recovery gave up after the most attempts


# A request in one of these holds its scope: nothing is written there until it ends. A failed
# one still holds: what it was asked to erase is not erased yet.
HOLDING = frozenset({ErasureStatus.QUEUED, ErasureStatus.RUNNING, ErasureStatus.FAILED})

# The saga's steps, in order; each is idempotent, so a run killed inside one repeats it.
STEPS = (
    "collect",  # what to look for afterwards (kept beside the home until the census is done)
    "index",  # the retrieval index's rows, old Lance versions and the text index's files
    "rows",  # every row in scope of every content table (facts, documents, graph, queues, records)
    "audit_keys",  # the keys the audit chain and its ledger name (the chain still verifies)
    "sql",  # the scopes' SQL memory databases
    "caches",  # what any process holds in memory, and files under the home that quote content
    "compact",  # the DuckDB file rewritten, so no freed page keeps a deleted byte
    "census",  # count what is left: rows in scope, and the erased bytes in every file
)


@dataclass(frozen=True, slots=True)
class ErasureTarget:
    kind: TargetKind
    tenant: str
    owner_id: str | None = None  # the user or the agent
    namespaces: tuple[tuple[str, str], ...] = ()  # (scope, owner_id) pairs, for NAMESPACES

    def __post_init__(self) -> None:
        if not self.tenant:
            raise InvalidInput("an erasure names its tenant")
        if self.kind in (TargetKind.USER, TargetKind.AGENT) and not self.owner_id:
            raise InvalidInput(f"a {self.kind.value} erasure names the {self.kind.value}")
        if self.kind is TargetKind.NAMESPACES:
            if not self.namespaces:
                raise InvalidInput("a namespaces erasure names at least one (scope, owner) pair")
            for scope, owner in self.namespaces:
                if scope not in {s.value for s in Scope} or scope == Scope.GLOBAL.value or not owner:
                    raise InvalidInput(f"not an erasable namespace: {scope}/{owner}")

    @classmethod
    def of(
        cls,
        tenant: str,
        *,
        user: str | None = None,
        agent: str | None = None,
        namespaces: "tuple[str, ...] | list[str] | None" = None,
    ) -> "ErasureTarget":
        """The target a caller names: one of a user, an agent or ``scope/owner`` namespaces of the
        tenant, or none of them for the whole tenant."""
        named = [n for n, v in (("user", user), ("agent", agent), ("namespaces", namespaces)) if v is not None]
        if len(named) > 1:
            raise InvalidInput(f"an erasure names one of user, agent or namespaces, not {' and '.join(named)}")
        for name in named:  # an empty one names nobody: it must never read as "the whole tenant"
            if not locals()[name]:
                raise InvalidInput(f"{name} is empty: name who to erase, or none of them for the whole tenant")
        if user:
            return cls(TargetKind.USER, tenant, user)
        if agent:
            return cls(TargetKind.AGENT, tenant, agent)
        if namespaces:
            pairs = []
            for text in namespaces:
                scope, sep, owner = str(text).partition("/")
                if not sep:
                    raise InvalidInput(f"a namespace is scope/owner (user/ana), not {text!r}")
                pairs.append((scope, owner))
            return cls(TargetKind.NAMESPACES, tenant, None, tuple(pairs))
        return cls(TargetKind.TENANT, tenant)

    @property
    def pairs(self) -> tuple[tuple[str, str], ...] | None:
        """The (scope, owner) pairs the target covers; None for a whole tenant."""
        if self.kind is TargetKind.TENANT:
            return None
        if self.kind is TargetKind.USER:
            return ((Scope.USER.value, str(self.owner_id)),)
        if self.kind is TargetKind.AGENT:
            return ((Scope.AGENT.value, str(self.owner_id)),)
        return self.namespaces

    @property
    def identifiers(self) -> tuple[str, ...]:
        """The ids that name the target (kept by design: the request row and the chain)."""
        owners = [o for _, o in self.pairs or ()]
        return (self.tenant, *owners, *(f"{s}:{o}" for s, o in self.pairs or ()))

    def covers(self, namespace: Namespace) -> bool:
        if namespace.tenant != self.tenant:
            return False
        pairs = self.pairs
        return pairs is None or (namespace.scope.value, namespace.owner_id) in pairs

    def to_json(self) -> str:
        body: dict[str, Any] = {"kind": self.kind.value, "tenant": self.tenant}
        if self.owner_id is not None:
            body["owner_id"] = self.owner_id
        if self.namespaces:
            body["namespaces"] = [list(p) for p in self.namespaces]
        return json.dumps(body, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "ErasureTarget":
        body = json.loads(text)
        pairs = tuple((str(s), str(o)) for s, o in body.get("namespaces", ()))
        return cls(TargetKind(body["kind"]), body["tenant"], body.get("owner_id"), pairs)

    def describe(self) -> str:
        if self.kind is TargetKind.TENANT:
            return f"tenant {self.tenant}"
        if self.kind is TargetKind.NAMESPACES:
            return f"{len(self.namespaces)} namespace(s) of {self.tenant}"
        return f"{self.kind.value} {self.owner_id} of {self.tenant}"


@dataclass(frozen=True, slots=True)
class ErasureRequest:
    """One version of a request row: every checkpoint appends the next version."""

    request_id: str
    version: int
    target: ErasureTarget
    status: ErasureStatus
    steps: tuple[str, ...]  # the steps completed, in order
    attempts: int  # runs started (the first and each resume)
    actor: str
    requested_at: datetime
    updated_at: datetime
    residue_count: int | None = None
    residue: dict[str, int] = field(default_factory=dict)  # per table and per file, zeros included
    verified_at: datetime | None = None
    error: str | None = None

    @property
    def holding(self) -> bool:
        return self.status in HOLDING

    def to_dict(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "version": self.version,
            "target": json.loads(self.target.to_json()),
            "status": self.status.value,
            "steps": list(self.steps),
            "attempts": self.attempts,
            "actor": self.actor,
            "requested_at": self.requested_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "residue_count": self.residue_count,
            "residue": dict(self.residue),
            "verified_at": self.verified_at.isoformat() if self.verified_at else None,
            "error": self.error,
        }
