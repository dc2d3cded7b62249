"""The valid-time timeline of one key, and the pure decisions that change it.

A key holds facts with non-overlapping valid intervals. A new statement [v, i):

* is a **restatement** when a fact live at ``v`` already holds the same content hash and the
  caller either gave no ``invalid_at`` or gave the one that fact already has: no answer changes,
  so nothing new is stated and the fact's ``reinforcement_count`` grows;
* otherwise it **replaces whatever was true from v on**: a fact live at ``v`` that began before it
  is closed at ``v`` (its tail past ``i`` is not revived: a later statement is the newer belief);
  a fact that begins inside [v, i) is retired (closed to an empty interval, it was never true
  in the new belief). Facts that end at or before ``v``, or begin at or after ``i``, are untouched:
  history and known future changes survive a correction.

These functions decide; the store applies their plan in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from .temporal import END_OF_TIME, live_at


@dataclass(frozen=True, slots=True)
class FactState:
    """The latest state of one visible fact of a key."""

    fact_id: str
    content_sha256: str
    valid_at: datetime
    invalid_at: datetime | None

    @property
    def end(self) -> datetime:
        return END_OF_TIME if self.invalid_at is None else self.invalid_at

    @property
    def empty(self) -> bool:
        return self.invalid_at is not None and self.invalid_at <= self.valid_at


@dataclass(frozen=True, slots=True)
class StatementPlan:
    restates: str | None  # fact_id reinforced instead of a new statement
    closes: tuple[tuple[str, datetime], ...]  # (fact_id, new invalid_at)


def plan_statement(
    facts: Sequence[FactState],
    content_sha256: str,
    valid_at: datetime,
    invalid_at: datetime | None,
    invalid_at_given: bool,
) -> StatementPlan:
    """Decide what a statement of ``content_sha256`` over [valid_at, invalid_at) does to ``facts``."""
    live = [f for f in facts if not f.empty and live_at(f.valid_at, f.invalid_at, valid_at)]
    for fact in live:
        if fact.content_sha256 == content_sha256 and (not invalid_at_given or fact.invalid_at == invalid_at):
            return StatementPlan(restates=fact.fact_id, closes=())
    new_end = END_OF_TIME if invalid_at is None else invalid_at
    closes: list[tuple[str, datetime]] = []
    for fact in sorted(facts, key=lambda f: (f.valid_at, f.fact_id)):
        if fact.empty:
            continue
        if fact.valid_at < valid_at < fact.end:
            closes.append((fact.fact_id, valid_at))
        elif valid_at <= fact.valid_at < new_end:
            closes.append((fact.fact_id, fact.valid_at))
    return StatementPlan(restates=None, closes=tuple(closes))


def fact_at(facts: Sequence[FactState], as_of: datetime) -> FactState | None:
    """The fact live at ``as_of``; intervals never overlap, so there is at most one."""
    for fact in facts:
        if not fact.empty and live_at(fact.valid_at, fact.invalid_at, as_of):
            return fact
    return None


def overlapping_pairs(facts: Sequence[FactState]) -> list[tuple[str, str]]:
    """Pairs of facts whose non-empty intervals overlap: the invariant the store must never break."""
    ordered = sorted((f for f in facts if not f.empty), key=lambda f: (f.valid_at, f.fact_id))
    pairs: list[tuple[str, str]] = []
    for i, left in enumerate(ordered):
        for right in ordered[i + 1 :]:
            if right.valid_at >= left.end:
                break
            pairs.append((left.fact_id, right.fact_id))
    return pairs
