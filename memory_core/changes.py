"""Pure builders of the rows one op appends. Given a key's current fact states, decide the change.

Nothing here touches a store: ``api`` fetches, calls these, and applies the ``KeyChange``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Sequence

from .audit import AuditEntry
from .errors import NothingToRestore, NotFound
from .identity import Namespace
from .model import VISIBLE_STATUSES, FactVersion, Kind, Op, Provenance, Status
from .store.port import Head, KeyChange
from .timeline import FactState, plan_statement

IdFactory = Callable[[], str]


@dataclass(frozen=True, slots=True)
class Statement:
    """A validated set request."""

    key: str
    value_json: str
    content_sha256: str
    kind: Kind
    memory_type: str
    valid_at: datetime
    invalid_at: datetime | None
    invalid_at_given: bool
    observed_at: datetime | None
    subject: str | None = None
    index_context: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: str
    change: KeyChange


def visible(states: Sequence[FactVersion]) -> list[FactVersion]:
    return [s for s in states if s.status.value in VISIBLE_STATUSES]


def as_fact_states(states: Sequence[FactVersion]) -> list[FactState]:
    return [FactState(s.fact_id, s.content_sha256, s.valid_at, s.invalid_at) for s in states]


def _audit(ns: Namespace, key: str, op: str, rows: Sequence[FactVersion], sha: str | None, prov: Provenance,
           at: datetime) -> AuditEntry:
    return AuditEntry(at=at, tenant=ns.tenant, scope=ns.scope.value, owner_id=ns.owner_id, key=key, op=op,
                      version_ids=",".join(r.id for r in rows), content_sha256=sha, actor=prov.actor)


def decide_statement(ns: Namespace, head: Head | None, states: Sequence[FactVersion], stmt: Statement,
                     prov: Provenance, created_at: datetime, new_id: IdFactory) -> Decision:
    live = visible(states)
    plan = plan_statement(as_fact_states(live), stmt.content_sha256, stmt.valid_at, stmt.invalid_at,
                          stmt.invalid_at_given)
    next_version = (head.version if head else 0) + 1
    change_id = new_id()
    by_fact = {s.fact_id: s for s in live}
    rows: list[FactVersion] = []
    if plan.restates is not None:
        prior = by_fact[plan.restates]
        rows.append(dataclasses.replace(
            prior, id=new_id(), op=Op.RESTATE, version=next_version, change_id=change_id, created_at=created_at,
            reinforcement_count=prior.reinforcement_count + 1, changed_by=prov.actor,
            observed_at=stmt.observed_at or prior.observed_at,
        ))
        verdict, op = "restated", Op.RESTATE.value
    else:
        new_row_id = new_id()
        for fact_id, end in plan.closes:
            prior = by_fact[fact_id]
            rows.append(dataclasses.replace(
                prior, id=new_id(), status=Status.SUPERSEDED, op=Op.SUPERSEDE, version=next_version + len(rows),
                change_id=change_id, invalid_at=end, superseded_by=new_row_id, created_at=created_at,
                changed_by=prov.actor,
            ))
        rows.append(FactVersion(
            id=new_row_id, fact_id=new_row_id, tenant=ns.tenant, scope=ns.scope, owner_id=ns.owner_id,
            key=stmt.key, value_json=stmt.value_json, content_sha256=stmt.content_sha256, kind=stmt.kind,
            memory_type=stmt.memory_type, status=Status.ACTIVE, op=Op.SET, version=next_version + len(rows),
            change_id=change_id, observed_at=stmt.observed_at, valid_at=stmt.valid_at, invalid_at=stmt.invalid_at,
            created_at=created_at, superseded_by=None, reinforcement_count=0, provenance=prov,
            changed_by=prov.actor, subject=stmt.subject, index_context=stmt.index_context,
        ))
        verdict = "superseded" if plan.closes else "created"
        op = Op.SET.value
    audit = _audit(ns, stmt.key, op, rows, stmt.content_sha256, prov, created_at)
    return Decision(verdict, KeyChange(ns, stmt.key, tuple(rows), Status.ACTIVE.value, audit))


def decide_delete(ns: Namespace, key: str, head: Head | None, states: Sequence[FactVersion], prov: Provenance,
                  created_at: datetime, new_id: IdFactory) -> Decision:
    live = sorted(visible(states), key=lambda s: s.version)
    if head is None or head.status == Status.TOMBSTONED.value or not live:
        raise NotFound(f"nothing to delete: no value under key {key!r} in scope {ns.scope.value}", key=key)
    change_id = new_id()
    rows = tuple(
        dataclasses.replace(s, id=new_id(), status=Status.TOMBSTONED, op=Op.DELETE, version=head.version + i + 1,
                            change_id=change_id, created_at=created_at, changed_by=prov.actor)
        for i, s in enumerate(live)
    )
    audit = _audit(ns, key, Op.DELETE.value, rows, None, prov, created_at)
    return Decision("deleted", KeyChange(ns, key, rows, Status.TOMBSTONED.value, audit))


def decide_restore(ns: Namespace, key: str, head: Head | None, history: Sequence[FactVersion], prov: Provenance,
                   created_at: datetime, new_id: IdFactory) -> Decision:
    """Undo the latest delete: every fact it tombstoned returns to the state it had before."""
    if head is None:
        raise NotFound(f"nothing to restore: no key {key!r} in scope {ns.scope.value}", key=key)
    if head.status != Status.TOMBSTONED.value:
        raise NothingToRestore(f"key {key!r} is not deleted; there is nothing to restore", key=key)
    last_delete = next(r.change_id for r in reversed(history) if r.op is Op.DELETE)
    tombstoned = [r for r in history if r.change_id == last_delete]

    def state_before(tombstone: FactVersion) -> FactVersion:
        earlier = [r for r in history if r.fact_id == tombstone.fact_id and r.version < tombstone.version]
        return max(earlier, key=lambda r: r.version)

    change_id = new_id()
    rows = tuple(
        dataclasses.replace(state_before(t), id=new_id(), op=Op.RESTORE, version=head.version + i + 1,
                            change_id=change_id, created_at=created_at, changed_by=prov.actor)
        for i, t in enumerate(tombstoned)
    )
    audit = _audit(ns, key, Op.RESTORE.value, rows, None, prov, created_at)
    return Decision("restored", KeyChange(ns, key, rows, Status.ACTIVE.value, audit))
