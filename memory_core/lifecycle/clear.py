"""Pure decisions of the scope-wide ops: ``clear`` (tombstone every key of a scope but the locked
ones, as one change), its undo, which proposal decision applies (``proposal_decide``), and what a
cross-scope ``promote`` copies. Each returns the rows to append; none touches a store."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Sequence

from ..errors import Locked, NotFound, NothingToRestore, WrongState
from ..extraction.lineage import PROMOTED_FROM, BeliefSource
from ..model import VISIBLE_STATUSES, FactVersion, Op, Status
from .flags import Decision, KeyOp, decide_delete, decide_flag, decide_restore


@dataclass(frozen=True, slots=True)
class ClearPlan:
    """What a clear writes: one tombstone per visible fact of each cleared key, all under
    ``change_id``; ``kept_locked`` names the keys a lock keeps."""

    change_id: str
    rows: tuple[FactVersion, ...]
    cleared: tuple[str, ...]
    kept_locked: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class UndoPlan:
    """What undoing a clear writes: each fact it tombstoned as it was before, under one change id;
    ``changed_since`` names the keys it touched that moved on since (left as they are)."""

    change_id: str
    rows: tuple[FactVersion, ...]
    restored: tuple[str, ...]
    changed_since: tuple[str, ...]


def _one_change(rows: Sequence[FactVersion], change_id: str) -> tuple[FactVersion, ...]:
    return tuple(dataclasses.replace(r, change_id=change_id) for r in rows)


def decide_clear(ops: Sequence[KeyOp], change_id: str) -> ClearPlan:
    """Tombstone every key of the scope holding a visible fact, as ``delete`` would, except a key a
    lock holds (a lock refuses every retirement). One change id on every tombstone: the clear is
    one operation, and ``decide_clear_undo`` finds its rows by it."""
    rows: list[FactVersion] = []
    cleared: list[str] = []
    kept: list[str] = []
    for op in sorted(ops, key=lambda o: o.key):
        if not any(s.status.value in VISIBLE_STATUSES for s in op.states):
            continue  # deleted, rejected or expired already: nothing of it is read
        try:
            decision = decide_delete(op)
        except Locked:
            kept.append(op.key)
            continue
        rows.extend(_one_change(decision.rows, change_id))
        cleared.append(op.key)
    return ClearPlan(change_id, tuple(rows), tuple(cleared), tuple(kept))


def decide_clear_undo(
    touched: Sequence[tuple[KeyOp, Sequence[FactVersion]]], cleared_by: str, change_id: str
) -> UndoPlan:
    """Undo the clear ``cleared_by`` on each key it touched (``touched``: the key's facts and its
    history). A key whose newest change is still that clear gets each fact back as it was before
    (as ``restore`` does); a key written, restored or deleted since is left as it is and listed."""
    rows: list[FactVersion] = []
    restored: list[str] = []
    changed: list[str] = []
    for op, history in sorted(touched, key=lambda t: t[0].key):
        newest = max(history, key=lambda r: r.version)
        if newest.change_id != cleared_by:
            changed.append(op.key)
            continue
        try:
            decision = decide_restore(op, history)
        except (NothingToRestore, WrongState):
            changed.append(op.key)
            continue
        rows.extend(_one_change(decision.rows, change_id))
        restored.append(op.key)
    if not restored and not changed:
        raise NotFound(f"no clear {cleared_by!r} in this scope", change_id=cleared_by)
    return UndoPlan(change_id, tuple(rows), tuple(restored), tuple(changed))


def decide_proposal(op: KeyOp, accept: bool) -> Decision:
    """Accept (``promote``) or reject the key's live proposal. Only a proposal is decided: an
    established fact is ``WRONG_STATE`` either way (``reject`` is the op that withdraws one)."""
    try:
        accepted = decide_flag(op, Op.PROMOTE)  # refuses a locked key and an established fact
    except WrongState:
        raise WrongState(
            f"key {op.key!r} holds an established fact, not a proposal: nothing to decide "
            "(reject withdraws an established fact)",
            key=op.key,
        ) from None
    return accepted if accept else decide_flag(op, Op.REJECT)


def promotable(source: FactVersion | None, key: str, scope: str) -> FactVersion:
    """The fact a cross-scope promote copies: the key's live, established fact."""
    if source is None:
        raise NotFound(f"no live value under key {key!r} in scope {scope}", key=key)
    if source.status is Status.PROPOSED:
        raise WrongState(
            f"key {key!r} holds a proposal; decide it (proposal_decide) before promoting it to another scope", key=key
        )
    return source


def copy_options(source: FactVersion) -> dict[str, Any]:
    """The write options that carry a fact into another scope as it stands (its value, time,
    subject, sensitivity and confidence; the copy's provenance is the promoter's). Its index
    context is left behind: the words around a note of a private conversation stay private."""
    return {
        "kind": source.kind,
        "memory_type": source.memory_type,
        "valid_at": source.valid_at,
        "invalid_at": source.invalid_at,
        "observed_at": source.observed_at,
        "subject": source.subject,
        "sensitivity": source.sensitivity,
        "confidence": source.confidence,
    }


def promotion_link(copy: FactVersion, source: FactVersion, at: datetime) -> BeliefSource:
    """The copy's lineage: a ``promoted_from`` link, kept in the copy's namespace, to the row it
    was copied from. The run id names the source's scope and the copy's change."""
    return BeliefSource(
        copy.tenant,
        copy.scope.value,
        copy.owner_id,
        copy.fact_id,
        copy.key,
        source.fact_id,
        source.key,
        PROMOTED_FROM,
        f"promote:{source.scope.value}:{copy.change_id}",
        at,
    )
