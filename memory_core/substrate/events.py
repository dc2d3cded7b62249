"""Typed state-change events: one per audited write, decided here from what the write appends and
stored in the write's own transaction (``session.commit``).

An event names what changed (its type, the namespace, the key and the entity it is about), who
changed it (the actor, and the chain of actors that relayed the change), under which lens and
frame, with which evidence, and when the store learned it. Its diff is per fact: the version row
before and after, and each field that changed. Like an audit row an event is hash-only: the value
appears in it as the content hash before and after, and a reader gets the values back only
through ``events(...)``, from the version rows, when its scope and its lenses admit them (so a
redaction reaches the events too, and no lens ever reads a value through an event that it could
not read through the row).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, Callable, Mapping, Sequence

from ..audit import AuditEntry
from ..graph.plan import GraphWrite
from ..model import FactVersion, Op, Provenance, sensitivity_rank

# The fields of a version row whose changes an event lists (``value`` stands for the content hash).
DIFF_FIELDS = (
    "value",
    "status",
    "valid_at",
    "invalid_at",
    "superseded_by",
    "locked",
    "pinned",
    "confidence",
    "sensitivity",
    "expires_at",
    "memory_type",
    "subject",
    "source_class",
    "conflict_with",
    "reinforcement_count",
)

# An audited op's event type, where the op alone says it.
_BY_AUDIT_OP = {
    "delete": "fact.deleted",
    "delete_version": "fact.deleted",
    "clear": "fact.deleted",  # a scope cleared: every tombstone of one change
    "clear_undo": "fact.restored",
    "restore": "fact.restored",
    "lock": "fact.locked",
    "unlock": "fact.unlocked",
    "pin": "fact.pinned",
    "unpin": "fact.unpinned",
    "promote": "fact.promoted",
    "demote": "fact.demoted",
    "reject": "fact.rejected",
    "redact": "fact.redacted",
    "expire": "fact.expired",
    "rollback": "fact.rolled_back",
    "relabel": "fact.relabelled",
    "update": "fact.updated",
    "verify": "fact.verified",
    "doc_put": "document.put",
    "doc_delete": "document.deleted",
    "conflict_resolver": "resolver.acted",
    "restore_snapshot": "snapshot.restored",
    "consolidate": "fact.consolidated",
    "consolidate_undo": "fact.consolidation_undone",
}

EVENT_TYPES = (
    "fact.created",
    "fact.superseded",
    "fact.restated",
    "fact.merged",
    "fact.flagged",
    *sorted(set(_BY_AUDIT_OP.values())),
    "review.decided",
    "batch.written",
    "lens.defined",
    "lens.assigned",
    "lens.unassigned",
    "permissions.defined",
    "frame.opened",
    "frame.updated",
    "frame.closed",
    "decision.recorded",
)


@dataclass(frozen=True, slots=True)
class FieldChange:
    field: str
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class FactChange:
    """One fact a write changed: its version row before (None: a new fact) and after."""

    fact_id: str
    key: str
    before_version_id: str | None
    after_version_id: str
    changes: tuple[FieldChange, ...]


@dataclass(frozen=True, slots=True)
class EventContext:
    """What a write says about itself beyond its rows: the lens and frame it was made under, the
    actors that relayed it, the evidence it rests on, and an event type that the rows alone would
    not give (a reviewer's decision is a resolver action to the rows)."""

    lens_id: str | None = None
    frame_id: str | None = None
    actor_chain: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    event_type: str | None = None
    key: str | None = None  # what the event is about where the audit row says ``*`` (a document)


NO_CONTEXT = EventContext()


@dataclass(frozen=True, slots=True)
class StateChange:
    """One stored event. ``seq`` orders the stream (0 until the store numbers it)."""

    event_id: str
    event_type: str
    tenant: str
    scope: str
    owner_id: str
    key: str
    entity: str | None
    kind: str | None
    memory_type: str | None
    sensitivity: str | None
    actor: str
    actor_chain: tuple[str, ...]
    lens_id: str | None
    frame_id: str | None
    facts: tuple[FactChange, ...]
    evidence: tuple[str, ...]
    recorded_at: datetime
    summary: Mapping[str, Any] = field(default_factory=dict)
    seq: int = 0


def _field(row: FactVersion, name: str) -> Any:
    if name == "value":
        return row.content_sha256
    value = getattr(row, name)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value.value if isinstance(value, Enum) else value


def diff(before: FactVersion | None, after: FactVersion) -> tuple[FieldChange, ...]:
    """The fields of ``DIFF_FIELDS`` that differ between two version rows of one fact (for a new
    fact, every field it sets)."""
    out = []
    for name in DIFF_FIELDS:
        now = _field(after, name)
        if before is None:
            if now not in (None, [], False, 0):
                out.append(FieldChange(name, None, now))
            continue
        was = _field(before, name)
        if was != now:
            out.append(FieldChange(name, was, now))
    return tuple(out)


def _fact_type(entry_op: str, rows: Sequence[FactVersion], key: str, priors: Mapping[str, FactVersion]) -> str:
    own = [r for r in rows if r.key == key]
    if entry_op.startswith("set:"):  # only peers' rows were written: a merge, a duplicate, a flag
        verdict = entry_op.split(":", 1)[1]
        return "fact.merged" if verdict in ("merge", "duplicate") else "fact.flagged"
    if not own:
        return "fact.flagged"
    last = own[-1]
    if last.op is Op.RESTATE:
        return "fact.restated"
    if any(r.op is Op.SUPERSEDE for r in own) or any(r.fact_id != last.fact_id for r in own):
        return "fact.superseded"
    return "fact.created" if last.fact_id not in priors else "fact.superseded"


def event_type_of(entry: AuditEntry, rows: Sequence[FactVersion], priors: Mapping[str, FactVersion]) -> str:
    if entry.key == "*" and entry.op not in _BY_AUDIT_OP:
        return "batch.written"
    if entry.op in _BY_AUDIT_OP:
        return _BY_AUDIT_OP[entry.op]
    return _fact_type(entry.op, rows, entry.key, priors)


def events_of(
    audits: Sequence[AuditEntry],
    rows: Sequence[FactVersion],
    priors: Mapping[str, FactVersion],
    context: EventContext,
    new_id: Callable[[], str],
    *,
    staged: Sequence[tuple[str, str, str, str, str]] = (),
    staged_count: int = 0,
) -> tuple[StateChange, ...]:
    """One event per audit entry of a write. ``rows``: every version row the write appends;
    ``staged``: the first of a batch's fresh facts given as columns (fact id, key, row id, content
    hash, status), of ``staged_count`` in all; ``priors``: the state before the write of each fact
    it changes, by fact id (a fact absent from it is new)."""
    by_id = {r.id: r for r in rows}
    claimed: set[str] = set()
    out = []
    for entry in audits:
        ids = [i for i in entry.version_ids.split(",") if i in by_id] if entry.version_ids else []
        mine = (
            [by_id[i] for i in ids] if ids else ([r for r in rows if r.id not in claimed] if entry.key == "*" else [])
        )
        claimed.update(r.id for r in mine)
        principal = next((r for r in reversed(mine) if r.key == entry.key), mine[-1] if mine else None)
        event_type = context.event_type or event_type_of(entry, mine, priors)
        in_batch = entry.key == "*"
        summary: dict[str, Any] = {"rows": len(mine) + (staged_count if in_batch else 0)}
        facts = _fact_changes(mine, priors) + (_staged_changes(staged) if in_batch else ())
        if in_batch and staged_count > len(staged):
            summary["facts_listed"] = len(facts)
        out.append(
            StateChange(
                event_id=new_id(),
                event_type=event_type,
                tenant=entry.tenant,
                scope=entry.scope,
                owner_id=entry.owner_id,
                key=context.key or entry.key,
                entity=principal.subject if principal is not None else None,
                kind=principal.kind.value if principal is not None else None,
                memory_type=principal.memory_type if principal is not None else None,
                sensitivity=max((r.sensitivity for r in mine), key=sensitivity_rank, default=None),
                actor=entry.actor,
                actor_chain=context.actor_chain or (entry.actor,),
                # A lifecycle op on a captured row names no lens itself: the row's lens is the event's.
                lens_id=context.lens_id or (principal.provenance.lens_id if principal is not None else None),
                frame_id=context.frame_id,
                facts=facts,
                evidence=context.evidence,
                recorded_at=entry.at,
                summary=summary,
            )
        )
    return tuple(out)


def _fact_changes(rows: Sequence[FactVersion], priors: Mapping[str, FactVersion]) -> tuple[FactChange, ...]:
    """Per fact, from its state before the write to its last row of the write."""
    last: dict[str, FactVersion] = {}
    first_seen: dict[str, None] = {}
    for row in rows:
        last[row.fact_id] = row
        first_seen.setdefault(row.fact_id, None)
    out = []
    for fact_id in first_seen:
        after, before = last[fact_id], priors.get(fact_id)
        out.append(FactChange(fact_id, after.key, before.id if before else None, after.id, diff(before, after)))
    return tuple(out)


def _staged_changes(staged: Sequence[tuple[str, str, str, str, str]]) -> tuple[FactChange, ...]:
    return tuple(
        FactChange(fact_id, key, None, row_id, (FieldChange("value", None, sha), FieldChange("status", None, status)))
        for fact_id, key, row_id, sha, status in staged
    )


def record_event(
    event_id: str,
    event_type: str,
    *,
    tenant: str,
    scope: str,
    owner_id: str,
    key: str,
    actor: str,
    at: datetime,
    entity_type: str,
    context: EventContext = NO_CONTEXT,
    summary: Mapping[str, Any] | None = None,
) -> StateChange:
    """The event of a write that appends no version row: a lens, a frame, a decision trace."""
    return StateChange(
        event_id=event_id,
        event_type=event_type,
        tenant=tenant,
        scope=scope,
        owner_id=owner_id,
        key=key,
        entity=None,
        kind=None,
        memory_type=entity_type,
        sensitivity=None,
        actor=actor,
        actor_chain=context.actor_chain or (actor,),
        lens_id=context.lens_id,
        frame_id=context.frame_id,
        facts=(),
        evidence=context.evidence,
        recorded_at=at,
        summary=dict(summary or {}),
    )


def with_graph(events: tuple[StateChange, ...], graph: Sequence[GraphWrite]) -> tuple[StateChange, ...]:
    """The graph changes a write made, in the summary of its first event in each namespace: the
    relations observed and ended (as refs) and the entities first seen."""
    out = list(events)
    for change in graph:
        if not change:
            continue
        ns = change.namespace
        at = next(
            (
                i
                for i, e in enumerate(out)
                if (e.tenant, e.scope, e.owner_id) == (ns.tenant, ns.scope.value, ns.owner_id)
            ),
            None,
        )
        if at is None:
            continue
        summary = dict(out[at].summary)
        held = summary.setdefault("graph", {"observed": [], "ended": [], "entities": 0})
        held["observed"] += [f"relation:{o.triple_id}" for o in change.observations]
        held["ended"] += [f"relation:{t}" for t in change.ends]
        held["entities"] += len(change.entities)
        out[at] = dataclasses.replace(out[at], summary=summary)
    return tuple(out)


def type_matches(pattern: str, event_type: str) -> bool:
    if pattern in ("*", event_type):
        return True
    return pattern.endswith(".*") and event_type.startswith(pattern[:-1])


def context_of(provenance: Provenance) -> EventContext:
    """What a row's provenance says of the write that stated it (a capture's envelope)."""
    evidence = tuple(e for e in (provenance.source, provenance.source_turn) if e)
    chain = provenance.actor_chain
    return EventContext(provenance.lens_id, provenance.frame_id, chain, evidence)


def redaction_event(entry: AuditEntry, rows: Sequence[FactVersion], scrubbed_sha256: str, event_id: str) -> StateChange:
    """A redaction's event: the rows scrubbed in place. The hash they held is not repeated here."""
    facts = tuple(
        FactChange(r.fact_id, r.key, r.id, r.id, (FieldChange("value", None, scrubbed_sha256),)) for r in rows
    )
    principal = rows[-1] if rows else None
    return StateChange(
        event_id=event_id,
        event_type="fact.redacted",
        tenant=entry.tenant,
        scope=entry.scope,
        owner_id=entry.owner_id,
        key=entry.key,
        entity=principal.subject if principal is not None else None,
        kind=principal.kind.value if principal is not None else None,
        memory_type=principal.memory_type if principal is not None else None,
        sensitivity=principal.sensitivity if principal is not None else None,
        actor=entry.actor,
        actor_chain=(entry.actor,),
        lens_id=principal.provenance.lens_id if principal is not None else None,
        frame_id=None,
        facts=facts,
        evidence=(),
        recorded_at=entry.at,
        summary={"rows": len(rows)},
    )
