"""One action on a pair of rows (a conflict resolver's or a reviewer's), committed: the rows,
one hash-only audit row, and one resolver record."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from ..audit import audit_entry
from ..identity import Namespace
from ..model import FactVersion
from ..resolver.actions import pair_rows, resolution_record
from ..resolver.fold import Action
from ..substrate.events import EventContext
from .core import Commit, key_changes

if TYPE_CHECKING:
    from .core import Session


def apply_pair(
    session: Session,
    ns: Namespace,
    row: FactVersion,
    peer: FactVersion,
    action: Action,
    actor: str,
    verdict: str,
    confidence: float,
    judge: str,
    now: datetime,
    reason: str = "",
    event_type: str | None = None,
) -> list[FactVersion]:
    """The caller holds the session's lock and has re-read both rows. ``event_type``: what the
    write's event says it was, when not the resolver's own action (a reviewer's decision)."""
    rows = pair_rows(partial(session.head_version, ns), row, peer, action, now, session.new_id(), actor)
    if not rows:
        return []
    audit = audit_entry(ns, row.key, "conflict_resolver", rows, None, actor, now)
    session.commit(Commit(key_changes(ns, rows), (audit,), context=EventContext(event_type=event_type)))
    record = resolution_record(session.new_id(), row, peer, action, verdict, confidence, judge, now, reason)
    session.ledger.record_resolution(record)
    return rows
