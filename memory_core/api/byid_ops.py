"""The by-id ops of the Memory tool (``MemoryTool`` lists each in its class body): a row read or
revised by its id, a revision that keeps the row's fact id, and a reviewer's affirmation
(docs/write-path.md, "update, update_by_id and verify")."""

from __future__ import annotations

from typing import Any, Sequence

from ..identity import Scope
from ..model import FactVersion, WriteResult
from ..services.byid import ByIdService
from ..temporal import Instant


def get_by_id(self, id: str, *, as_of: Instant = None, known_at: Instant = None) -> FactVersion:
    """The row an id names, in any scope this run reads. A fact id (``FactVersion.fact_id``, kept
    by every version of the fact) answers the fact as ``get`` serves it: its state at ``as_of``
    (default now) as known at ``known_at``, missing when deleted, rejected, expired or not valid
    then. A version id (``FactVersion.id``) answers that exact row of the history, whatever its
    status (missing when ``known_at`` is before it was written). A fact's first version carries
    the fact's id, which reads as the fact. An id no row holds and a row of a scope this run
    cannot reach (another tenant's, another user's) answer the same ``NOT_FOUND``."""
    return self._bound(ByIdService).get_by_id(id, as_of=as_of, known_at=known_at)


def update(
    self,
    key: str,
    value: Any,
    *,
    scope: str | Scope = Scope.USER,
    relations: Sequence[Any] | None = None,
    subject: str | None = None,
    context: str | None = None,
    confidence: float | None = None,
    sensitivity: str | None = None,
    if_match_sha256: str | None = None,
) -> WriteResult:
    """Revise the fact live under ``key``: a new version of the same fact (its ``fact_id`` stays),
    the value checked as ``set`` checks it. Unlike ``set`` it never creates: a key with no live
    value (never written, deleted, rejected, expired) is ``NOT_FOUND`` and nothing is written.
    ``relations`` are named as on ``set``; a changed value named without them states none. The
    revision corrects the row: ``history`` keeps the old value and ``get(known_at=...)`` before
    it answers it. A locked key refuses (423), a pinned one too (409); verdict ``unchanged``
    when nothing differs."""
    options = dict(relations=relations, subject=subject, context=context, confidence=confidence)
    options.update(sensitivity=sensitivity, if_match_sha256=if_match_sha256)
    return self._bound(ByIdService).update(key, value, scope=scope, **options)


def update_by_id(
    self,
    id: str,
    value: Any,
    *,
    relations: Sequence[Any] | None = None,
    subject: str | None = None,
    context: str | None = None,
    confidence: float | None = None,
    sensitivity: str | None = None,
    if_match_sha256: str | None = None,
) -> WriteResult:
    """``update`` of the fact an id names (a fact id, or a version id naming its fact), in any
    scope this run reads. An unknown id, a row out of reach, and a fact no longer live all
    answer ``NOT_FOUND``, and nothing is written."""
    options = dict(relations=relations, subject=subject, context=context, confidence=confidence)
    options.update(sensitivity=sensitivity, if_match_sha256=if_match_sha256)
    return self._bound(ByIdService).update_by_id(id, value, **options)


def verify(self, key: str | None = None, *, id: str | None = None, scope: str | Scope = Scope.USER) -> WriteResult:
    """A reviewer affirms the live fact under ``key`` (in ``scope``) or the fact ``id`` names:
    a new version whose ``provenance.judged_by`` is this run's actor and ``judged_at`` the time.
    Its value and flags stay; a later change of value clears the affirmation. Name a key or an
    id, not both; a row that is missing or out of reach is ``NOT_FOUND``."""
    return self._bound(ByIdService).verify(key, id, scope=scope)
