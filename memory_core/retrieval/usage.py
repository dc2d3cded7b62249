"""What callers did with what retrieval showed them, folded per fact (the usage_fold worker,
docs/workers.md): how often a fact was shown (an exposure: a search's hit, an item of a view or
a context), how often a caller said it was useful (a recall) or not. Pure: the fold's decision,
and the bounded signal the ``usage_prior`` of a recipe reads."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Mapping, Sequence

from ..identity import Namespace

# Recalls after which the usage signal stops growing (log-scaled up to here, as reinforcement is).
USAGE_SATURATES = 8
# The refs that name a fact: a fact's, a note's and a document's ref carry its fact id.
FACT_PLANES = ("fact", "note", "document")


@dataclass(frozen=True, slots=True)
class Exposure:
    """A fact shown ``count`` times by searches of its namespace, the last time at ``last_seen``."""

    namespace: Namespace
    fact_id: str
    count: int
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class Answered:
    """One recorded interaction the fold reads: a view or a context (its refs were shown) or a
    piece of retrieval feedback on one ref (``feedback``: useful, not_useful)."""

    interaction_id: str
    tenant: str
    kind: str
    refs: tuple[str, ...]
    feedback: str | None
    at: datetime


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """A fact's totals: shown, found useful, found not useful, and when it was last seen."""

    namespace: Namespace
    fact_id: str
    exposures: int = 0
    recalls: int = 0
    negative: int = 0
    last_seen: datetime | None = None

    def plus(self, other: UsageTotals) -> UsageTotals:
        seen = [t for t in (self.last_seen, other.last_seen) if t is not None]
        return UsageTotals(
            self.namespace,
            self.fact_id,
            self.exposures + other.exposures,
            self.recalls + other.recalls,
            self.negative + other.negative,
            max(seen) if seen else None,
        )


def fact_of(ref: str) -> str | None:
    """The fact id a ref names, or None for a ref of another plane (a relation, a decision)."""
    plane, _, ident = ref.partition(":")
    return ident if plane in FACT_PLANES and ident else None


def fold_usage(
    exposures: Iterable[Exposure],
    answered: Iterable[Answered],
    namespace_of: Mapping[str, Namespace],
    current: Mapping[str, UsageTotals],
) -> list[UsageTotals]:
    """The new totals of every fact the records name, from its ``current`` totals (absolute, so
    applying them twice changes nothing). A fact the log does not know (``namespace_of``) is left
    out, and so is a ref to a fact of another tenant than the interaction's: a tenant's records
    never count for another's facts."""
    delta: dict[str, UsageTotals] = {}

    def add(fact_id: str, tenant: str | None, at: datetime, shown: int = 0, useful: int = 0, not_useful: int = 0):
        where = namespace_of.get(fact_id)
        if where is None or (tenant is not None and where.tenant != tenant):
            return
        more = UsageTotals(where, fact_id, shown, useful, not_useful, at)
        known = delta.get(fact_id)
        delta[fact_id] = more if known is None else known.plus(more)

    for e in exposures:
        add(e.fact_id, e.namespace.tenant, e.last_seen, shown=e.count)
    for a in answered:
        for fact_id in filter(None, map(fact_of, a.refs)):
            if a.kind == "feedback":
                add(
                    fact_id,
                    a.tenant,
                    a.at,
                    useful=int(a.feedback == "useful"),
                    not_useful=int(a.feedback == "not_useful"),
                )
            else:
                add(fact_id, a.tenant, a.at, shown=1)
    out = []
    for fact_id in sorted(delta):
        before = current.get(fact_id)
        out.append(delta[fact_id] if before is None else before.plus(delta[fact_id]))
    return out


def usage_signal(recalls: int | None, negative: int | None) -> float:
    """log(1 + useful) - log(1 + not useful), over log(1 + USAGE_SATURATES), clipped to [-1, 1]:
    the first answers a fact helped with count most, and a fact callers keep rejecting sinks."""
    up, down = max(0, recalls or 0), max(0, negative or 0)
    if not up and not down:
        return 0.0
    return max(-1.0, min(1.0, (math.log1p(up) - math.log1p(down)) / math.log1p(USAGE_SATURATES)))


def named_facts(answered: Sequence[Answered]) -> list[str]:
    """Every fact id the interactions name (what the fold resolves against the log)."""
    return sorted({f for a in answered for f in map(fact_of, a.refs) if f})
