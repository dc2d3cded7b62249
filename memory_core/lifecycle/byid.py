"""Pure decisions of the by-id ops (``get_by_id``, ``update`` / ``update_by_id``, ``verify``):
what an id names, whether a run reaches it, and the rows a revision or an affirmation appends.

An id is store-wide: a fact id (the stable id of a statement, kept by every version of it) or a
version id (one row of the log). The first version of a fact carries the fact's id as its own, so
an id that names a fact is read as the fact. A row the run cannot reach answers exactly as an id
nothing holds (``unknown_id``): which tenants and owners exist is never told.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime

from ..errors import Locked, MemcoreError, NotFound, PinnedConflict, PreconditionFailed
from ..graph.model import Relation
from ..identity import Identity, Namespace
from ..model import VISIBLE_STATUSES, FactVersion, Op, Provenance, sensitivity_rank
from ..temporal import live_at
from .flags import Decision, KeyOp


def unknown_id(row_id: str) -> NotFound:
    """The one answer for an id no row holds and for a row the run cannot reach."""
    return NotFound(f"no row with id {row_id!r} in the scopes this run reads", id=row_id)


def namespace_of(row: FactVersion) -> Namespace:
    return Namespace(row.tenant, row.scope, row.owner_id)


def reaches(identity: Identity, row: FactVersion) -> bool:
    """True when the row lives in the one namespace this run resolves for the row's scope (its
    user's, its agent's, its tenant's; global for an admin): the reach ``get`` has by key."""
    try:
        return identity.namespace(row.scope) == namespace_of(row)
    except MemcoreError:  # a scope the run lacks the grant or the id for
        return False


@dataclass(frozen=True, slots=True)
class Addressed:
    """What an id names: a fact (its latest state) or one version row."""

    row: FactVersion  # the fact's latest state, or the version row named
    is_fact: bool


def addressed(row_id: str, fact_latest: FactVersion | None, version_row: FactVersion | None) -> Addressed | None:
    """The fact id wins over the version id (they are equal for a fact's first version)."""
    if fact_latest is not None and fact_latest.fact_id == row_id:
        return Addressed(fact_latest, True)
    if version_row is not None and version_row.id == row_id:
        return Addressed(version_row, False)
    return None


def served_now(state: FactVersion, at: datetime, now: datetime) -> bool:
    """The fact as ``get`` serves it: a visible status, unexpired, its interval covering ``at``."""
    return (
        state.status.value in VISIBLE_STATUSES
        and not state.expired(now)
        and live_at(state.valid_at, state.invalid_at, at)
    )


def live_fact(op: KeyOp, fact_id: str | None, hint: str = "") -> FactVersion:
    """The fact a revision or an affirmation acts on: the one served now under the key (``fact_id``
    None), or the named fact, if it is served now. Anything else is missing: a deleted, rejected,
    expired or closed row is never revised (a revision racing a delete stays deleted)."""
    live = [s for s in op.states if served_now(s, op.at, op.at) and (fact_id is None or s.fact_id == fact_id)]
    if not live:
        if fact_id is not None:
            raise unknown_id(fact_id)
        raise NotFound(f"no live value under key {op.key!r} in scope {op.namespace.scope.value}{hint}", key=op.key)
    return live[0]


@dataclass(frozen=True, slots=True)
class Revision:
    """A revision's new content, checked by the write path (``write.phases.check_value``)."""

    value_json: str
    content_sha256: str
    sensitivity: str  # the tier detection and the caller give the new value
    provenance: Provenance  # the reviser's (a changed value comes from whoever wrote it)
    relations: tuple[Relation, ...] | None  # None: not named
    subject: str | None
    context: str | None
    confidence: float | None
    if_match_sha256: str | None


def decide_update(op: KeyOp, fact: FactVersion, revision: Revision) -> Decision:
    """One new version of ``fact`` holding the revised content, with the same fact id.

    A locked fact refuses (423), a pinned one too (409: unpin first), and ``if_match_sha256``
    must name what it holds (409). A changed value takes the reviser's provenance (and so drops a
    reviewer's affirmation of the old one) and, unless relations are named again, states none;
    an unchanged value keeps both. Nothing changed: ``unchanged``, no row."""
    if revision.if_match_sha256 is not None and revision.if_match_sha256 != fact.content_sha256:
        raise PreconditionFailed(f"key {op.key!r} does not hold the value with the given sha256", key=op.key)
    if fact.locked:
        raise Locked(f"key {op.key!r} is locked; unlock it before revising it", key=op.key, refused_action="update")
    same_value = revision.content_sha256 == fact.content_sha256
    if fact.pinned and not same_value:
        raise PinnedConflict(f"key {op.key!r} is pinned; unpin it before revising its value", key=op.key)
    relations = revision.relations
    if relations is None:
        relations = fact.relations if same_value else ()
    changes = {
        "value_json": revision.value_json,
        "content_sha256": revision.content_sha256,
        "relations": relations,
        "subject": fact.subject if revision.subject is None else revision.subject,
        "index_context": fact.index_context if revision.context is None else revision.context,
        "confidence": fact.confidence if revision.confidence is None else revision.confidence,
        "sensitivity": max(fact.sensitivity, revision.sensitivity, key=sensitivity_rank),
        "provenance": fact.provenance if same_value else revision.provenance,
    }
    if all(getattr(fact, name) == value for name, value in changes.items()):
        return Decision("unchanged", ())
    return Decision("updated", (_next(op, fact, Op.UPDATE, **changes),))


def decide_verify(op: KeyOp, fact: FactVersion, judge: str) -> Decision:
    """A reviewer affirms the fact as it stands: a new version whose provenance names the judge
    and the time. Its value, status and flags stay; a lock does not refuse it (nothing changes
    but who vouched)."""
    provenance = dataclasses.replace(fact.provenance, judged_by=judge, judged_at=op.at)
    return Decision("verified", (_next(op, fact, Op.VERIFY, provenance=provenance),))


def _next(op: KeyOp, fact: FactVersion, kind: Op, **changes) -> FactVersion:
    return dataclasses.replace(
        fact,
        id=op.new_id(),
        op=kind,
        version=op.head_version + 1,
        change_id=op.new_id(),
        created_at=op.created_at,
        changed_by=op.actor,
        **changes,
    )
