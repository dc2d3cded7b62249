"""What a Dreams pass is made of: its settings, a proposal and its targets, and the pass's report.

A proposal is never a change: it waits in the approval queue (``pending``) until a person
approves it (``applied``: approval applies it in the same call) or rejects it (``rejected``), or
until one of its targets changes under it (``stale``). Each status change is a new version of
the proposal; the newest version is the proposal.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping

from ..consolidation import ConsolidationSettings
from ..model import FactVersion
from ..substrate.events import StateChange
from ..temporal import iso

ACTOR = "worker:dreams"  # who writes a pass's decision traces and proposals
ORIGIN = "memory.dreams"  # the provenance origin of every row an approved proposal writes
TAG = "dreams:"  # provenance.source of those rows (and their events' evidence): dreams:<proposal_id>

MERGE = "merge"  # near-duplicate live facts: one summary, the rows retired behind it
RETIRE = "retire"  # a contradicted fact: the older of a flagged pair retired, the newer kept
AGE_OUT = "age_out"  # a stale fact: tombstoned (``restore`` brings it back)
PROCEDURE = "procedure"  # a note on how to act, from decisions under one intent that kept failing
KINDS = (MERGE, RETIRE, AGE_OUT, PROCEDURE)

PENDING, APPLIED, REJECTED, STALE = "pending", "applied", "rejected", "stale"
STATUSES = (PENDING, APPLIED, REJECTED, STALE)


@dataclass(frozen=True, slots=True)
class DreamSettings:
    """What a pass reads and when it proposes. ``window_days``: the rolling window of events,
    decision outcomes and recalls read; ``stale_days``: how long a fact no write has touched may
    sit unread before it is proposed for aging out; ``min_failures``: failed outcomes under one
    intent in the window before a procedure note is proposed."""

    window_days: int = 7
    stale_days: int = 90
    min_failures: int = 3
    merge: ConsolidationSettings = ConsolidationSettings()

    def __post_init__(self) -> None:
        if not 1 <= self.window_days <= 365:
            raise ValueError("window_days must be 1 to 365")
        if self.stale_days < 1 or self.min_failures < 2:
            raise ValueError("stale_days must be at least 1 and min_failures at least 2")


@dataclass(frozen=True, slots=True)
class DreamTarget:
    """One thing a proposal rests on, as the pass read it. ``kind``: ``fact`` (``ident`` its fact
    id, ``version`` the row id read), ``decision`` (``version`` the trace's version number) or
    ``key`` (a key the proposal would write: ``version`` its head row id, None when empty)."""

    kind: str
    ident: str
    key: str | None = None
    version: str | None = None
    text: str = ""  # what it said when read (for the reviewer)

    @property
    def ref(self) -> str:
        """The substrate ref a decision trace names it by (a key has none)."""
        return f"{self.kind}:{self.ident}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "ident": self.ident, "key": self.key, "version": self.version, "text": self.text}


@dataclass(frozen=True, slots=True)
class Draft:
    """A proposal before it is queued: what a pure decision answers."""

    kind: str
    targets: tuple[DreamTarget, ...]
    change: Mapping[str, Any]
    rationale: str
    confidence: float

    @property
    def dedup(self) -> str:
        """Its identity across passes: the kind and the targets as read (a target that changes
        makes a new proposal; the same targets never make a second one)."""
        parts = [self.kind, *sorted(f"{t.kind}:{t.ident}@{t.version}" for t in self.targets)]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class DreamProposal:
    proposal_id: str
    version: int
    tenant: str
    scope: str
    owner_id: str
    kind: str
    status: str
    targets: tuple[DreamTarget, ...]
    change: Mapping[str, Any]
    rationale: str
    confidence: float
    dedup: str
    pass_id: str
    decision_id: str  # the escalate trace the pass wrote for it
    window_start: datetime
    window_end: datetime
    recorded_at: datetime  # when this version was written
    actor: str  # who wrote this version (the worker, or the reviewer who decided)
    note: str | None = None  # the reviewer's words, or why it went stale
    applied: tuple[str, ...] = ()  # the version rows its approval wrote

    def to_dict(self) -> dict[str, Any]:
        return {
            "proposal_id": self.proposal_id,
            "version": self.version,
            "kind": self.kind,
            "status": self.status,
            "scope": self.scope,
            "owner_id": self.owner_id,
            "targets": [t.to_dict() for t in self.targets],
            "change": dict(self.change),
            "rationale": self.rationale,
            "confidence": self.confidence,
            "pass_id": self.pass_id,
            "decision_id": self.decision_id,
            "window": [iso(self.window_start), iso(self.window_end)],
            "recorded_at": iso(self.recorded_at),
            "actor": self.actor,
            "note": self.note,
            "applied": list(self.applied),
        }


@dataclass(frozen=True, slots=True)
class DreamPass:
    """One pass over one namespace: what it read, what it queued, and its decision trace(s)."""

    pass_id: str
    tenant: str
    scope: str
    owner_id: str
    window_start: datetime
    window_end: datetime
    read: Mapping[str, int] = field(default_factory=dict)  # facts, events, decisions, recalled
    proposals: tuple[DreamProposal, ...] = ()  # queued by this pass
    already_queued: int = 0  # found again, but made before (pending, or decided): not queued twice
    no_op_decision: str | None = None  # the no_op trace of a pass with nothing new to propose

    def to_dict(self) -> dict[str, Any]:
        return {
            "pass_id": self.pass_id,
            "namespace": f"{self.tenant}/{self.scope}/{self.owner_id}",
            "window": [iso(self.window_start), iso(self.window_end)],
            "read": dict(self.read),
            "proposed": [p.to_dict() for p in self.proposals],
            "already_queued": self.already_queued,
            "no_op_decision": self.no_op_decision,
        }


def tag(proposal_id: str) -> str:
    return f"{TAG}{proposal_id}"


def dreamt(state: FactVersion) -> bool:
    """Did an approved Dreams proposal write this row? (A pass never reads its own output.)"""
    return state.provenance.origin == ORIGIN or (state.provenance.source or "").startswith(TAG)


def dreamt_event(event: StateChange) -> bool:
    return any(e.startswith(TAG) for e in event.evidence)
