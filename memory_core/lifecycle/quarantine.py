"""Negative-outcome quarantine, decided: a fact a decision used, when that decision's outcome was
bad, is rejected as a new version (op ``reject``) naming the decision whose outcome is its reason.

What counts as bad is a label, not a reading of prose: the outcome is one of
``NEGATIVE_OUTCOMES`` or starts with one followed by ``:`` (``"failure: the refund went to the
old card"``). Free text that merely mentions a failure ("fixed the failing test") is not one: an
automatic rejection on a guess would hide good facts, and Dreams' procedure rule already reads
such text for a person to review. Which facts the decision used are its ``inputs`` on the fact
planes (``fact:``, ``note:``, ``document:``).

A pinned fact and a locked fact are never quarantined (a person vouched for them), nor is one
already retired. ``restore`` on the key undoes a quarantine like any rejection.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from ..model import LIVE_STATUSES, Op, Status
from .flags import Decision, KeyOp

NEGATIVE_OUTCOMES = ("failure", "failed", "negative")
FACT_PLANES = ("fact", "note", "document")
AUDIT_OP = "quarantine"  # the audit row's op: a rejection the outcome of a decision made


def is_negative(outcome: str | None) -> bool:
    """Is this outcome a bad one: a negative label alone, or the label then ``:`` and details?"""
    if not outcome:
        return False
    label = outcome.split(":", 1)[0].strip().lower()
    return label in NEGATIVE_OUTCOMES


def used_fact_ids(inputs: Iterable[str]) -> tuple[str, ...]:
    """The fact ids a decision names among its inputs (refs of the fact planes), in order."""
    out: dict[str, None] = {}
    for item in inputs:
        plane, _, ident = item.partition(":")
        if plane in FACT_PLANES and ident:
            out.setdefault(ident, None)
    return tuple(out)


def decide_quarantine(op: KeyOp, fact_id: str) -> Decision:
    """Reject the fact ``fact_id`` of this key when it is live and neither pinned nor locked.
    Verdicts: ``quarantined``, ``skipped_pinned``, ``skipped_locked``, ``not_live``."""
    state = next((s for s in op.states if s.fact_id == fact_id), None)
    if state is None or state.status.value not in LIVE_STATUSES or state.expired(op.at):
        return Decision("not_live", ())
    if state.locked:
        return Decision("skipped_locked", ())
    if state.pinned:
        return Decision("skipped_pinned", ())
    row = dataclasses.replace(
        state,
        id=op.new_id(),
        op=Op.REJECT,
        status=Status.REJECTED,
        version=op.head_version + 1,
        change_id=op.new_id(),
        created_at=op.created_at,
        changed_by=op.actor,
    )
    return Decision("quarantined", (row,))
