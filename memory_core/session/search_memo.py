"""Searches kept a while after they answered: their traces (``search_trace``) and what their next
pages are read from (cursor paging).

A search is kept with the version of the index it read and its whole fused ranking, so its pages
come from one snapshot: every candidate once, in one order, whatever is written between pages.
It is found only by a run whose identity resolves the search's scope to the same namespace, and
is kept for ``KEPT_FOR`` at most; at most ``KEPT`` searches are held. A redaction forgets every
search (a page or a trace must never show what was redacted).

Beside them, what searches showed: each hit counted per fact (``Exposures``), flushed to the
store for the usage fold (``session.usage``) when the counts grow past ``EXPOSURES_FLUSH_AT``
facts, when a fold runs and when the home closes. A redaction leaves them: they hold fact ids.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..identity import Namespace
from ..retrieval.traces import SearchTrace, trace_of
from ..retrieval.types import SearchRequest
from ..retrieval.usage import Exposure

KEPT = 256
KEPT_FOR = timedelta(minutes=15)
# Distinct facts counted in memory before a search flushes them (a write per this many, at most).
EXPOSURES_FLUSH_AT = 4096


@dataclass(frozen=True)
class KeptSearch:
    namespace: Namespace
    trace_id: str
    created_at: datetime
    request: SearchRequest
    searched: Any  # services.search.Searched: the reader of the version it read, its plan, legs and ranking
    result: Any  # the first page's SearchResult
    kept_until: datetime
    # Pages complete the kept rows in place: one page at a time.
    paging: threading.Lock = field(default_factory=threading.Lock, compare=False)

    def trace(self) -> SearchTrace:
        """The search explained (built when asked: most searches are never traced)."""
        s = self.searched
        plan = {
            "legs": list(s.plan.legs),
            "pool": s.plan.pool,
            "lexical_pool": s.plan.lexical_pool,
            "lexical_query": s.plan.lexical_query,
            "vector_query": s.plan.vector_query,
            "participants": list(self.request.participants),
            "k": self.request.k,
            # phrases counted from an event: the row whose day they were counted from
            "event_anchors": [a.to_dict() for a in s.legs.get("_event_anchors", ())],
        }
        return trace_of(
            self.trace_id,
            self.created_at,
            self.request,
            self.result.recipe,
            plan,
            self.namespace,
            s.where,
            s.legs,
            s.fused,
            self.result.verdict,
            [h.fact_id for h in self.result.hits],
            self.result.timings_ms,
        )


class Exposures:
    """What searches showed, counted per fact in memory (a dict update per hit, no write)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[Namespace, str], tuple[int, datetime]] = {}

    def add(self, namespace: Namespace, fact_ids: list[str], at: datetime) -> bool:
        """Count one showing of each fact; True once ``EXPOSURES_FLUSH_AT`` facts are counted."""
        with self._lock:
            for fact_id in fact_ids:
                count, seen = self._counts.get((namespace, fact_id), (0, at))
                self._counts[(namespace, fact_id)] = (count + 1, max(seen, at))
            return len(self._counts) >= EXPOSURES_FLUSH_AT

    def take(self) -> list[Exposure]:
        with self._lock:
            counts, self._counts = self._counts, {}
        return [Exposure(ns, fact_id, n, at) for (ns, fact_id), (n, at) in counts.items()]

    def put_back(self, exposures: list[Exposure]) -> None:
        """Counts a flush could not write: kept for the next one."""
        with self._lock:
            for e in exposures:
                count, seen = self._counts.get((e.namespace, e.fact_id), (0, e.last_seen))
                self._counts[(e.namespace, e.fact_id)] = (count + e.count, max(seen, e.last_seen))

    def __len__(self) -> int:
        return len(self._counts)


class SearchMemo:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, KeptSearch] = OrderedDict()
        self.generation = 0  # moved on by every ``forget``
        self.exposures = Exposures()

    def keep(self, search: KeptSearch, generation: int) -> None:
        """Keep a search that began at ``generation``; one a redaction overtook is not kept."""
        with self._lock:
            if generation != self.generation:
                return
            self._kept[search.trace_id] = search
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)

    def find(self, trace_id: str, namespace: Namespace, now: datetime) -> KeptSearch | None:
        """The search, if it is still kept and was run in ``namespace`` (else None, the same
        answer for a search that never was: another scope learns nothing of it)."""
        with self._lock:
            found = self._kept.get(trace_id)
            if found is None or found.namespace != namespace:
                return None
            if found.kept_until <= now:
                del self._kept[trace_id]
                return None
            return found

    def lookup(self, trace_id: str, now: datetime) -> KeptSearch | None:
        """The search, if still kept, whatever its namespace: the caller checks it may read there."""
        with self._lock:
            found = self._kept.get(trace_id)
        return found if found is not None and found.kept_until > now else None

    def forget(self) -> None:
        with self._lock:
            self._kept.clear()
            self.generation += 1
