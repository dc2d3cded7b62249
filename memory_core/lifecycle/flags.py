"""Pure decisions of the lifecycle ops on one key: delete, restore (Undo), lock, pin, promote,
demote, reject and delete_version. Each returns the rows to append; none touches a store."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from ..clock import IdFactory
from ..errors import Locked, NotFound, NothingToRestore, WrongState
from ..identity import Namespace
from ..model import LIVE_STATUSES, VISIBLE_STATUSES, FactVersion, Op, Status
from ..temporal import live_at

RETIRING_OPS = (Op.DELETE, Op.REJECT, Op.EXPIRE, Op.SUPERSEDE, Op.ROLLBACK)


@dataclass(frozen=True, slots=True)
class KeyOp:
    """Who changes which key, when, and the key's facts as they stand."""

    namespace: Namespace
    key: str
    states: tuple[FactVersion, ...]  # latest state of each fact of the key
    actor: str
    at: datetime
    new_id: IdFactory

    @property
    def head_version(self) -> int:
        return max((s.version for s in self.states), default=0)

    @property
    def created_at(self) -> datetime:
        return max([self.at, *(s.created_at for s in self.states)])


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: str
    rows: tuple[FactVersion, ...]


def _live_now(op: KeyOp) -> FactVersion:
    live = [
        s
        for s in op.states
        if s.status.value in VISIBLE_STATUSES and live_at(s.valid_at, s.invalid_at, op.at) and not s.expired(op.at)
    ]
    if not live:
        raise NotFound(f"no live value under key {op.key!r} in scope {op.namespace.scope.value}", key=op.key)
    return live[0]


def _rows(op: KeyOp, targets: Sequence[FactVersion], kind: Op, **changes) -> tuple[FactVersion, ...]:
    change_id = op.new_id()
    return tuple(
        dataclasses.replace(
            s,
            id=op.new_id(),
            op=kind,
            version=op.head_version + i + 1,
            change_id=change_id,
            created_at=op.created_at,
            changed_by=op.actor,
            **changes,
        )
        for i, s in enumerate(targets)
    )


def decide_flag(op: KeyOp, kind: Op) -> Decision:
    """lock / unlock / pin / unpin / promote / demote / reject on the fact live now."""
    fact = _live_now(op)
    if kind in (Op.LOCK, Op.UNLOCK):
        wanted = kind is Op.LOCK
        if fact.locked == wanted:
            return Decision("unchanged", ())
        return Decision(f"{kind.value}ed", _rows(op, [fact], kind, locked=wanted))
    if kind in (Op.PIN, Op.UNPIN):
        wanted = kind is Op.PIN
        if fact.pinned == wanted:
            return Decision("unchanged", ())
        return Decision(f"{kind.value}ned", _rows(op, [fact], kind, pinned=wanted))
    if fact.locked:
        raise Locked(f"key {op.key!r} is locked; unlock it first", key=op.key, refused_action=kind.value)
    if kind is Op.PROMOTE:
        if fact.status is not Status.PROPOSED:
            raise WrongState(f"key {op.key!r} holds an established fact; only a proposal can be promoted", key=op.key)
        return Decision("promoted", _rows(op, [fact], kind, status=Status.ACTIVE))
    if kind is Op.DEMOTE:
        if fact.status is Status.PROPOSED:
            return Decision("unchanged", ())
        return Decision(
            "demoted", _rows(op, [fact], kind, status=Status.PROPOSED, confidence=fact.confidence / 2, expires_at=None)
        )
    if kind is Op.REJECT:
        return Decision("rejected", _rows(op, [fact], kind, status=Status.REJECTED))
    raise ValueError(f"not a flag op: {kind}")


def decide_delete(op: KeyOp) -> Decision:
    """Tombstone every visible fact of the key; history keeps them and restore brings them back."""
    live = [s for s in op.states if s.status.value in VISIBLE_STATUSES]
    if not live:
        raise NotFound(
            f"nothing to delete: no value under key {op.key!r} in scope {op.namespace.scope.value}", key=op.key
        )
    if any(s.locked for s in live):
        raise Locked(f"key {op.key!r} is locked; unlock it before deleting it", key=op.key, refused_action="delete")
    return Decision("deleted", _rows(op, live, Op.DELETE, status=Status.TOMBSTONED))


def decide_delete_version(op: KeyOp, version: int) -> Decision:
    """Delete the key only while ``version`` is still its head; otherwise answer version_changed."""
    if not op.states:
        raise NotFound(f"no key {op.key!r} in scope {op.namespace.scope.value}", key=op.key)
    if op.head_version != version:
        return Decision("version_changed", ())
    return decide_delete(op)


def decide_restore(op: KeyOp, history: Sequence[FactVersion]) -> Decision:
    """Undo the key's latest change when it retired facts (a delete, a reject, an expiry, a
    rollback's tombstone or another key's refines): each fact it retired returns to the state it
    had before."""
    if not history:
        raise NotFound(f"nothing to restore: no key {op.key!r} in scope {op.namespace.scope.value}", key=op.key)
    latest = {s.fact_id: s for s in op.states}
    own_ids = {r.id for r in history}
    # A fact closed by a newer statement of its own key is history, not a retirement to undo.
    retiring = [
        r
        for r in history
        if r.op in RETIRING_OPS
        and r.status.value not in LIVE_STATUSES
        and latest.get(r.fact_id) is not None
        and latest[r.fact_id].id == r.id
        and not (r.op is Op.SUPERSEDE and r.superseded_by in own_ids)
    ]
    newest = max(history, key=lambda r: r.version)
    if not retiring or newest.change_id not in {r.change_id for r in retiring}:
        # Only the key's latest change can be undone: a write since then is the newer belief.
        raise NothingToRestore(
            f"key {op.key!r} was not retired by its latest change; there is nothing to undo", key=op.key
        )
    change = newest.change_id
    undone = [r for r in retiring if r.change_id == change]

    def before(row: FactVersion) -> FactVersion:
        return max(
            (r for r in history if r.fact_id == row.fact_id and r.version < row.version), key=lambda r: r.version
        )

    back = [before(t) for t in undone]
    others = [
        s for s in op.states if s.status.value in VISIBLE_STATUSES and s.fact_id not in {t.fact_id for t in undone}
    ]
    if any(_overlaps(a, b) for a in back for b in others):
        raise WrongState(
            f"key {op.key!r} holds a newer value over the same time; restoring would overlap it", key=op.key
        )
    change_id = op.new_id()
    rows = tuple(
        dataclasses.replace(
            before(t),
            id=op.new_id(),
            op=Op.RESTORE,
            version=op.head_version + i + 1,
            change_id=change_id,
            created_at=op.created_at,
            changed_by=op.actor,
        )
        for i, t in enumerate(sorted(undone, key=lambda r: r.version))
    )
    return Decision("restored", rows)


def _overlaps(a: FactVersion, b: FactVersion) -> bool:
    from ..temporal import END_OF_TIME

    a_end, b_end = a.invalid_at or END_OF_TIME, b.invalid_at or END_OF_TIME
    return a.valid_at < b_end and b.valid_at < a_end and a.valid_at < a_end and b.valid_at < b_end
