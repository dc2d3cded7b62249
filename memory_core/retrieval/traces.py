"""What a search did, kept so it can be explained afterwards (``search_trace``): the plan, each
leg's candidates with their scores, the fusion's terms per candidate, the filters applied and the
verdict. Pure: built from the pipeline's own values."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping, Sequence

from ..identity import Namespace
from ..model import VISIBLE_STATUSES
from ..temporal import iso
from .filters import LegFilter
from .types import SearchRequest

TRACE_CANDIDATES = 200  # fused candidates a trace lists (every leg's pool is listed whole)


@dataclass(frozen=True, slots=True)
class SearchTrace:
    trace_id: str
    created_at: datetime
    query: str
    recipe: Mapping[str, Any]
    plan: Mapping[str, Any]
    filters: Mapping[str, Any]
    legs: Mapping[str, tuple[Mapping[str, Any], ...]]
    fused: tuple[Mapping[str, Any], ...]
    verdict: str
    hits: tuple[str, ...]  # fact ids the first page showed, in order
    timings_ms: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "created_at": iso(self.created_at),
            "query": self.query,
            "recipe": dict(self.recipe),
            "plan": dict(self.plan),
            "filters": dict(self.filters),
            "legs": {leg: [dict(c) for c in rows] for leg, rows in self.legs.items()},
            "fused": [dict(c) for c in self.fused],
            "verdict": self.verdict,
            "hits": list(self.hits),
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }


def trace_of(
    trace_id: str,
    created_at: datetime,
    request: SearchRequest,
    recipe: Mapping[str, Any],
    plan: Mapping[str, Any],
    namespace: Namespace,
    where: LegFilter,
    legs: Mapping[str, Any],
    fused: Sequence[tuple[Mapping[str, Any], float, Mapping[str, Any]]],
    verdict: str,
    hits: Sequence[str],
    timings_ms: Mapping[str, float],
) -> SearchTrace:
    leg_rows = {
        leg: tuple(
            {"fact_id": row["fact_id"], "rank": rank, "score": round(float(row["_leg_score"]), 6)}
            for rank, row in enumerate(rows, start=1)
        )
        for leg, rows in legs.items()
        if not leg.startswith("_")
    }
    fused_rows = tuple(
        {
            "fact_id": row["fact_id"],
            **({"key": row["key"]} if "key" in row else {}),
            "score": round(score, 6),
            "terms": {name: round(value, 6) for name, value in row.get("_terms", {}).items()},
        }
        for row, score, _ in fused[:TRACE_CANDIDATES]
    )
    filters = {
        "tenant": namespace.tenant,
        "scope": namespace.scope.value,
        "kinds": sorted(k.value for k in where.kinds),
        "statuses": sorted(VISIBLE_STATUSES),
        "as_of": iso(where.as_of),
        "not_expired_at": iso(where.now),
        "observed_from": iso(where.observed_from),
        "observed_to": iso(where.observed_to),
    }
    return SearchTrace(
        trace_id=trace_id,
        created_at=created_at,
        query=request.query,
        recipe=recipe,
        plan=plan,
        filters=filters,
        legs=leg_rows,
        fused=fused_rows,
        verdict=verdict,
        hits=tuple(hits),
        timings_ms=dict(timings_ms),
    )
