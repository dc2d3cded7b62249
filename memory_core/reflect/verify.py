"""Verify: whether a planned claim may be written (schema and dedup checks, each failure a
reason kept with the claim), and once it is stated, which pair actions settle it (the retirement
of the fact it supersedes or refines, and any flag the write path set between the claim and the
capture it was read from: a claim is a part of its source, never in conflict with it).
"""

from __future__ import annotations

from datetime import datetime
from typing import Iterable

from ..errors import MemcoreError
from ..model import FactVersion
from ..resolver.actions import holds
from ..resolver.fold import Action
from ..texts import value_text
from ..write.settle import validate_key
from ..write.templates import canonical_form, content_words
from .model import REFINE, REINFORCE, STALE, SUPERSEDE, Claim, Plan

BASE_TYPES = frozenset({"general", "lesson"})  # what the pipeline writes itself
NOT_STATEMENTS = frozenset({"transcript_chunk", "document", "evidence"})  # types that hold no statement


def known_types(configured: Iterable[str]) -> frozenset[str]:
    """The memory types a claim may be written as: the pipeline's own and the tenant's."""
    return (BASE_TYPES | frozenset(configured)) - NOT_STATEMENTS


def identical_index(states: Iterable[FactVersion]) -> dict[str, FactVersion]:
    """Live statements by their canonical form (what the dedup check looks a claim up in)."""
    out: dict[str, FactVersion] = {}
    for state in sorted(states, key=lambda s: (s.key, s.fact_id)):
        if state.live:
            out.setdefault(canonical_form(value_text(state.value)), state)
    return out


def check(
    claim: Claim,
    plan: Plan,
    *,
    known: frozenset[str],
    max_chars: int,
    identical: FactVersion | None,
    target: FactVersion | None,
    holder: FactVersion | None,
    now: datetime,
) -> str | None:
    """Why the claim may not be written (None: it may). ``identical``: a live fact other than its
    source that says exactly what it says; ``target``/``holder``: the plan's facts as they are now."""
    text = claim.text.strip()
    if not content_words(text):
        return "empty: the claim says nothing"
    if len(text) > max_chars:
        return f"too_long: {len(text)} characters; a claim holds at most {max_chars}"
    try:
        validate_key(plan.key or claim.key)
    except MemcoreError as exc:
        return f"invalid_key: {exc.message}"
    if claim.memory_type not in known:
        return f"unknown_memory_type: {claim.memory_type!r} is not a type of the tenant"
    target_key = plan.target[1] if plan.target else None
    if plan.action == STALE:
        return f"contradicted_by_newer: {target_key!r} says otherwise and was stated later"
    if plan.holder is not None and not holds(holder, now):
        return "source_gone: the capture that states it is no longer live"
    if plan.target is not None:
        if not holds(target, now):
            return f"target_changed: {target_key!r} is no longer live"
        if target.locked and plan.action in (REFINE, SUPERSEDE):
            return f"target_locked: {target_key!r} is locked"
        if target.pinned and plan.action in (REFINE, SUPERSEDE):
            return f"target_pinned: {target_key!r} is pinned"
    if identical is not None:
        return f"duplicate: {identical.key!r} already says it"
    if plan.action == REINFORCE and target is not None and _form(plan.value) != _form(target.value):
        # The reinforcement restates the value reweave read: a changed value is not what the claim supported.
        return f"target_changed: {target_key!r} says something else now"
    return None


def _form(value: object) -> str:
    return canonical_form(value_text(value))


def settlement(
    plan: Plan,
    holder: FactVersion | None,
    target: FactVersion | None,
    source: FactVersion | None,
    now: datetime,
) -> tuple[FactVersion, FactVersion, Action] | None:
    """The next pair action that settles a stated claim (``holder`` states it), or None when it is
    settled: called again after each action, on the rows as they then are."""
    if not holds(holder, now):
        return None
    if plan.action in (SUPERSEDE, REFINE) and holds(target, now) and target.fact_id != holder.fact_id:
        if not (target.locked or target.pinned):
            return holder, target, Action("retire", f"reflect: the claim {plan.action}s it")
    if source is not None and source.fact_id != holder.fact_id:
        if source.fact_id in holder.conflict_with or holder.fact_id in source.conflict_with:
            return holder, source, Action("clear", "reflect: a claim is a part of its source")
    return None
