"""A lifecycle decision on one key, read and committed: the key's facts as they stand (``KeyOp``)
and the rows a pure decision (``lifecycle.flags``) appends, with one audit row."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Callable

from ..audit import audit_entry
from ..identity import Identity, Namespace, Scope
from ..lifecycle.flags import Decision, KeyOp
from ..model import WriteResult
from ..ports import KeyChange
from ..write.settle import validate_key
from .core import Commit

if TYPE_CHECKING:
    from .core import Session


def read_key(session: Session, namespace: Namespace, key: str, actor: str, now: datetime) -> KeyOp:
    """The key's facts as they stand (the caller holds the session's lock)."""
    return KeyOp(namespace, key, tuple(session.versions.fact_states(namespace, key)), actor, now, session.new_id)


def key_op(session: Session, identity: Identity, key: str, scope: str | Scope) -> KeyOp:
    """``read_key`` for a run's key in one of its scopes, now."""
    key = validate_key(key)
    return read_key(session, identity.namespace(scope), key, identity.actor, session.clock.now())


def commit_decision(session: Session, op: KeyOp, decision: Decision, audit_op: str) -> WriteResult:
    if decision.rows:
        audit = audit_entry(op.namespace, op.key, audit_op, decision.rows, None, op.actor, op.created_at)
        session.commit(Commit((KeyChange(op.namespace, op.key, decision.rows),), (audit,)))
    return WriteResult(decision.verdict, op.key, decision.rows)


def decide_key(
    session: Session, identity: Identity, key: str, scope: str | Scope, decide: Callable[[KeyOp], Decision], op: str
) -> WriteResult:
    """Read the key under the lock, decide, commit."""
    with session.locked():
        found = key_op(session, identity, key, scope)
        return commit_decision(session, found, decide(found), op)
