"""recall and search: settle the request, run the legs on the index, and let the pipeline decide.

The legs run side by side on one version of the index (its reader): the lexical leg on a worker,
the vector leg on the calling thread once the query is embedded (before either leg competes with
the embedding for the cores). Every decision on their rows is a pure function of
``retrieval.pipeline``.
"""

from __future__ import annotations

import dataclasses
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, Callable, Iterable

from ..identity import Namespace
from ..model import Kind
from ..ports import Embedder, IndexReader, SearchIndex
from ..retrieval.filters import LegFilter
from ..retrieval.pipeline import (
    SERVED_SOURCES,
    Fused,
    Plan,
    RowCheck,
    admissible_top,
    assemble,
    fuse,
    leg_check,
    leg_filter,
    leg_scores,
    names_identifier,
    plan,
    row_check,
    time_check,
    to_hit,
    verdict,
)
from ..retrieval.recipes import Recipe, get_recipe
from ..retrieval.rows import HIT_COLUMNS
from ..retrieval.settle import settle
from ..retrieval.types import SearchRequest, SearchResult
from ..session import RunService

_LEG_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memcore-leg")


def _timed(name: str, timings: dict[str, float], fn: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    started = time.perf_counter()
    rows = fn()
    timings[name] = (time.perf_counter() - started) * 1000
    return rows


def run_legs(
    reader: IndexReader | None,
    embedder: Embedder,
    the_plan: Plan,
    where: LegFilter,
    timings: dict[str, float],
    admissible: Callable[[dict[str, Any]], bool],
) -> dict[str, Any]:
    """Each leg's admissible rows, best first (and the query vector, which score fusion reads)."""
    out: dict[str, Any] = {}
    found: dict[str, list[dict[str, Any]]] = {}
    if reader is None:  # nothing was ever indexed
        return {leg: [] for leg in the_plan.legs}
    if "vector" in the_plan.legs:
        started = time.perf_counter()
        vector = embedder.embed([the_plan.vector_query])[0]
        out["_query_vector"] = vector
        timings["embed"] = (time.perf_counter() - started) * 1000
    lexical = None
    if "bm25" in the_plan.legs and the_plan.lexical_query:
        columns = [*the_plan.columns, "vector"] if the_plan.lexical_vectors else the_plan.columns
        text_leg = lambda full, n: reader.text_leg(the_plan.lexical_query, where, n, columns, full=full)  # noqa: E731
        lexical = _LEG_POOL.submit(
            _timed, "bm25", timings, lambda: admissible_top(text_leg, the_plan.pool, the_plan.k, admissible)
        )
    if "vector" in the_plan.legs:
        knn = lambda full, n: reader.vector_leg(vector, where, n, the_plan.columns, full=full)  # noqa: E731
        found["vector"] = _timed("vector", timings, lambda: admissible_top(knn, the_plan.pool, the_plan.k, admissible))
    if lexical is not None:
        found["bm25"] = lexical.result()
    for leg in ("vector", "bm25"):
        if leg in the_plan.legs:
            out[leg] = leg_scores(leg, found.get(leg, []))
    return out


def complete(reader: IndexReader | None, fused: Fused, want: int, admissible: RowCheck) -> Fused:
    """The first ``want`` fused rows, completed with the columns a hit shows and checked once more
    from their own columns: a damaged or lagging index can never widen an answer past its scope or
    time. A row that fails (or left the index in between) gives its place to the next one."""
    kept: Fused = []
    start = 0
    while reader is not None and len(kept) < want and start < len(fused):
        batch = fused[start : start + want - len(kept)]
        start += len(batch)
        reader.complete([row for row, _, _ in batch], HIT_COLUMNS)
        kept.extend(item for item in batch if not item[0].get("_gone") and admissible(item[0]))
    return kept


def search_index(
    index: SearchIndex, embedder: Embedder, namespace: Namespace, request: SearchRequest, recipe: Recipe, now: datetime
) -> SearchResult:
    """One search of ``namespace`` on the index as it stands (the caller flushed what it queued)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    the_plan = plan(request, recipe)
    reader = index.reader()
    where = leg_filter(namespace, request, now)
    in_time = time_check(where)
    legs = run_legs(reader, embedder, the_plan, where, timings, leg_check(in_time))
    fused = fuse(legs, recipe, request)
    # The legs returned a few columns; complete the rows the answer shows. The verdict reads only
    # the top hit, unless the query names an identifier: then every candidate's text is searched.
    hydrating = time.perf_counter()
    want = len(fused) if names_identifier(request.query) else request.k
    shown = complete(reader, fused, want, row_check(where, in_time))
    timings["hydrate"] = (time.perf_counter() - hydrating) * 1000
    hits = [to_hit(row, score, per_leg) for row, score, per_leg in shown]
    code = verdict(request.query, hits, recipe)
    chosen, truncated = assemble(hits, request.k, request.token_budget)
    unserved = sorted(k.value for k in request.sources - SERVED_SOURCES)
    notes = tuple(f"source {s!r} is not served yet: its plane has no leg in this build" for s in unserved)
    timings["total"] = (time.perf_counter() - started) * 1000
    return SearchResult(
        hits=chosen,
        verdict=code,
        sources=tuple(sorted(k.value for k in request.sources)),
        sources_applied=not unserved,
        recipe=recipe.to_dict(),
        as_of=request.as_of,
        notes=notes,
        truncated=truncated,
        timings_ms=timings,
    )


class SearchService(RunService):
    """``recall`` and ``search`` of the Memory tool."""

    # The tool's signatures name and type every option; here they pass through to ``settle``,
    # which checks them. Only the planes read by default differ.
    def recall(self, query: str, *, sources: Iterable[str | Kind] | None, **options: Any) -> SearchResult:
        return self._run(query, sources=(Kind.FACT, Kind.NOTE) if sources is None else sources, **options)

    def search(self, query: str, *, sources: Iterable[str | Kind] | None, **options: Any) -> SearchResult:
        return self._run(query, sources=tuple(Kind) if sources is None else sources, **options)

    def _run(self, query: Any, **kwargs: Any) -> SearchResult:
        session = self.session
        request = settle(query, session.clock.now(), **kwargs)
        namespace = self.identity.namespace(request.scope)  # refuses a scope the run may not read
        # Read-your-writes: queued index changes land before the legs run (what they replace is
        # filtered out as the legs read, and deleted later in one go).
        session.require_index().flush(settle=False)
        result = search_index(
            session.search_index,
            session.embedder,
            namespace,
            request,
            get_recipe(request.recipe),
            session.clock.now(),
        )
        waiting = session.projections.pending_projection_failures(namespace)
        if waiting:
            note = f"{len(waiting)} write(s) in this scope are not in the index yet (recorded for repair)"
            result = dataclasses.replace(result, notes=result.notes + (note,))
        queued = session.queue.unfinished_jobs(namespace)
        if queued:  # a conversation of this scope is still waiting to be read: the answer may be missing it
            result = dataclasses.replace(
                result,
                pending_extraction=queued,
                notes=result.notes + (f"{queued} extraction job(s) for this scope are still queued",),
            )
        return result
