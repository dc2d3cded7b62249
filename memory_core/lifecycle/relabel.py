"""The sensitivity sweep's decision: a visible fact whose stored tier is below what detection says
of its value gets a new version at the detected tier (a ``relabel``). Detection only raises a
tier (``write.sensitivity``), so a sweep never lowers one and a second sweep finds nothing.

Rows reach the log under a lower tier when a build that lacked a pattern wrote them, or when they
were loaded into the home by other means than the write path."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from ..model import VISIBLE_STATUSES, FactVersion, Op, sensitivity_rank
from ..texts import value_text
from ..write.sensitivity import detect
from .flags import Decision, KeyOp


def under_labelled(state: FactVersion) -> str | None:
    """The tier detection gives a visible state stored below it; None when it is labelled right."""
    if state.status.value not in VISIBLE_STATUSES:
        return None
    found = detect(value_text(state.value))
    return found if sensitivity_rank(found) > sensitivity_rank(state.sensitivity) else None


def decide_relabel(op: KeyOp, sensitive_retention_days: float | None = None) -> Decision:
    """One new version of each under-labelled fact of the key, at the detected tier. A fact made
    ``high`` takes the tenant's sensitive retention, as the write path would have given it."""
    rows: list[FactVersion] = []
    change_id = op.new_id()
    for state in sorted(op.states, key=lambda s: s.version):
        tier = under_labelled(state)
        if tier is None:
            continue
        rows.append(
            dataclasses.replace(
                state,
                id=op.new_id(),
                op=Op.RELABEL,
                version=op.head_version + len(rows) + 1,
                change_id=change_id,
                created_at=op.created_at,
                changed_by=op.actor,
                sensitivity=tier,
                expires_at=_expiry(state.expires_at, tier, op.at, sensitive_retention_days),
            )
        )
    return Decision("relabelled" if rows else "unchanged", tuple(rows))


def _expiry(expires_at: datetime | None, tier: str, now: datetime, days: float | None) -> datetime | None:
    if tier != "high" or days is None:
        return expires_at
    end = now + timedelta(days=days)
    return end if expires_at is None else min(expires_at, end)
