"""recall and search: settle the request, run the legs on the index, and let the pipeline decide.

The legs (``services.search_legs``) run side by side on one version of the index (its reader).
Every decision on their rows is a pure function of ``retrieval.pipeline``.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Mapping

from ..documents import CHUNK_TYPE, document_of
from ..errors import CursorMismatch, CursorNotFound, InvalidInput, TraceNotFound
from ..identity import Namespace, Scope
from ..model import Kind
from ..ports import Embedder, IndexReader, SearchIndex
from ..retrieval.calibration import Calibration, Lead, lead_of
from ..retrieval.chunks import fold_chunks
from ..retrieval.filters import LegFilter
from ..retrieval.pipeline import (
    SERVED_SOURCES,
    Fused,
    Plan,
    RowCheck,
    assemble,
    fuse,
    leg_check,
    leg_filter,
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
from ..retrieval.summary_leg import explain
from ..retrieval.traces import SearchTrace
from ..retrieval.types import Hit, SearchRequest, SearchResult
from ..session import RunService
from ..session.holds import soft_deleted
from ..session.search_memo import KEPT_FOR, KeptSearch
from ..session.usage import record_exposures
from .search_legs import UsageTotals, attach_usage, fact_legs_of, run_legs, usage_of


def complete(
    reader: IndexReader | None, fused: Fused, want: int, admissible: RowCheck, *, latest: bool = False
) -> Fused:
    """The first ``want`` fused rows, completed with the columns a hit shows and checked once more
    from their own columns: a damaged or lagging index can never widen an answer past its scope or
    time. A row that fails (or left the index in between) gives its place to the next one."""
    kept: Fused = []
    start = 0
    while reader is not None and len(kept) < want and start < len(fused):
        batch = fused[start : start + want - len(kept)]
        start += len(batch)
        reader.complete([row for row, _, _ in batch], HIT_COLUMNS, latest=latest)
        kept.extend(item for item in batch if not item[0].get("_gone") and admissible(item[0]))
    return kept


def fold_documents(reader: IndexReader | None, fused: Fused) -> Fused:
    """The ranking with each document answered once, by its best chunk (``retrieval.chunks``):
    the chunk candidates' keys, read for them alone, name their documents."""
    chunks = [row for row, _, _ in fused if row.get("memory_type") == CHUNK_TYPE]
    if reader is None or not chunks:
        return fused
    reader.complete(chunks, ("key",))
    documents = {row["fact_id"]: document_of(row["key"]) for row in chunks if not row.get("_gone")}
    return fold_chunks(fused, {fid: doc for fid, doc in documents.items() if doc is not None})


def ranking_lead(fused: Fused) -> Lead:
    """Where the fused ranking's top stands, whichever page is calibrated with it."""
    return lead_of([score for _, score, _ in fused[:2]])


@dataclass(frozen=True)
class Searched:
    """One search, with what its later pages and its trace are made from."""

    result: SearchResult
    reader: IndexReader | None
    plan: Plan
    legs: dict[str, Any]
    fused: Fused
    where: LegFilter
    next_offset: int | None  # where in ``fused`` the next page starts (None: nothing is left)
    calibration: Calibration | None = None  # gives each hit its P(relevant), later pages too

    @property
    def lead(self) -> Lead:
        """Where the ranking's top stands: what every page's hits are calibrated with."""
        return ranking_lead(self.fused)


def run_search(
    index: SearchIndex,
    embedder: Embedder,
    namespace: Namespace,
    request: SearchRequest,
    recipe: Recipe,
    now: datetime,
    *,
    calibration: Calibration | None = None,
    abstain_below: float | None = None,
    fact_legs: Mapping[str, Mapping[str, float]] | None = None,
    usage: UsageTotals | None = None,
) -> Searched:
    """One search of ``namespace`` on the index as it stands (the caller flushed what it queued).
    With a ``calibration`` each hit carries its P(relevant), and a top hit under ``abstain_below``
    abstains (``low_calibrated_confidence``). ``usage``: the folded totals the recipe's usage
    prior reads."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    the_plan = plan(request, recipe)
    reader = index.reader()
    where = leg_filter(namespace, request, now)
    in_time = time_check(where)
    legs = run_legs(reader, embedder, the_plan, where, timings, leg_check(in_time), fact_legs)
    if usage is not None:
        attach_usage(legs, usage, timings)
    fused = fuse(legs, recipe, request)
    explain(fused, fact_legs or {})  # a hit a summary brought says which session's, in its why
    if Kind.DOCUMENT in request.sources:
        fused = fold_documents(reader, fused)
    for n, (row, _, _) in enumerate(fused):
        row["_pos"] = n  # where a page ends, whichever rows it completed
    # The legs returned a few columns; complete the rows the answer shows. The verdict reads only
    # the top hit, unless the query names an identifier: then every candidate's text is searched.
    hydrating = time.perf_counter()
    want = len(fused) if names_identifier(request.query) else request.k
    first = page_of(reader, fused, 0, want, request, where, calibration=calibration, lead=ranking_lead(fused))
    timings["hydrate"] = (time.perf_counter() - hydrating) * 1000
    code = verdict(request.query, first.checked, recipe, abstain_below)
    unserved = sorted(k.value for k in request.sources - SERVED_SOURCES)
    notes = tuple(f"source {s!r} is not served yet: its plane has no leg in this build" for s in unserved)
    timings["total"] = (time.perf_counter() - started) * 1000
    result = SearchResult(
        hits=first.hits,
        verdict=code,
        sources=tuple(sorted(k.value for k in request.sources)),
        sources_applied=not unserved,
        recipe=recipe.to_dict(),
        as_of=request.as_of,
        notes=notes,
        truncated=first.truncated,
        timings_ms=timings,
        participants=request.participants,
    )
    return Searched(result, reader, the_plan, legs, fused, where, first.next_offset, calibration)


@dataclass(frozen=True)
class Page:
    hits: tuple[Hit, ...]  # at most k, cut to the token budget
    checked: tuple[Hit, ...]  # every candidate completed and checked (the verdict reads them)
    truncated: int  # hits the token budget cut
    next_offset: int | None  # where in the fused candidates the next page starts (None: none left)


def page_of(
    reader: IndexReader | None,
    fused: Fused,
    start: int,
    want: int,
    request: SearchRequest,
    where: LegFilter,
    *,
    latest: bool = False,
    calibration: Calibration | None = None,
    lead: Lead | None = None,
) -> Page:
    """One page: the fused candidates from ``start`` completed and checked until ``want`` pass,
    the first ``request.k`` of them cut to the token budget. ``latest``: as the index serves
    them now (a later page)."""
    shown = complete(reader, fused[start:], want, row_check(where, time_check(where)), latest=latest)
    checked = tuple(to_hit(row, score, per_leg) for row, score, per_leg in shown)
    if calibration is not None:  # ranked from the candidate's place in the search's ranking
        checked = calibration.calibrated(checked, start + 1, lead)
    chosen, truncated = assemble(checked, request.k, request.token_budget)
    # All that passed are shown, and fewer than wanted: every candidate left was read.
    exhausted = len(chosen) == len(shown) < want
    after = len(fused) if exhausted or not chosen else shown[len(chosen) - 1][0]["_pos"] + 1
    return Page(chosen, checked, truncated, after if after < len(fused) else None)


def search_index(
    index: SearchIndex, embedder: Embedder, namespace: Namespace, request: SearchRequest, recipe: Recipe, now: datetime
) -> SearchResult:
    return run_search(index, embedder, namespace, request, recipe, now).result


# The planes recall reads by default (search reads them all).
RECALL_SOURCES = (Kind.FACT, Kind.NOTE)


class SearchService(RunService):
    """``recall``, ``search`` and ``search_trace`` of the Memory tool."""

    # The tool's signatures name and type every option; here they pass through to ``settle``,
    # which checks them. Only the planes read by default differ.
    def recall(
        self, query: str, *, sources: Iterable[str | Kind] | None, cursor: str | None, **options: Any
    ) -> SearchResult:
        return self._run(query, cursor, sources=RECALL_SOURCES if sources is None else sources, **options)

    def search(
        self, query: str, *, sources: Iterable[str | Kind] | None, cursor: str | None, **options: Any
    ) -> SearchResult:
        return self._run(query, cursor, sources=tuple(Kind) if sources is None else sources, **options)

    def trace(self, trace_id: str, *, scope: str | Scope) -> SearchTrace:
        namespace = self.identity.namespace(scope)
        kept = self.session.searches.find(trace_id, namespace, self.session.clock.now())
        if kept is None:
            raise TraceNotFound("no search with this trace id is kept for this scope", trace_id=trace_id)
        return kept.trace()

    def _run(self, query: Any, cursor: str | None, *, count_exposures: bool = True, **kwargs: Any) -> SearchResult:
        """``count_exposures``: count the hits as shown (the usage fold's); ``ask`` counts them
        itself once it answered, so that a refused answer leaves the store as it was."""
        session = self.session
        now = session.clock.now()
        request = settle(query, now, **kwargs)
        namespace = self.identity.namespace(request.scope)  # refuses a scope the run may not read
        if soft_deleted(session.store, namespace):  # read as empty (docs/write-path.md)
            return _deleted_result(request, get_recipe(request.recipe))
        if cursor is not None:
            return self._next_page(request, namespace, cursor, now)
        generation = session.searches.generation  # a redaction from here on: not kept
        if not request.participants:  # the people of the scope's conversations, when it has any
            request = dataclasses.replace(request, participants=tuple(sorted(session.speakers(namespace))))
        # Read-your-writes: queued index changes of this namespace land before the legs run (what
        # they replace is filtered out as the legs read, and deleted later in one go). Other
        # namespaces' changes are the upkeep's to write: this search reads none of them.
        session.require_index().flush(settle=False, namespace=namespace)
        recipe = get_recipe(request.recipe)
        calibration = session.relevance_calibration(recipe.name)
        searched = run_search(
            session.search_index,
            session.embedder,
            namespace,
            request,
            recipe,
            session.clock.now(),
            calibration=calibration,
            abstain_below=_abstain_below(session.write_config(namespace.tenant).tenant.abstain_below, calibration),
            fact_legs=fact_legs_of(session, namespace, recipe, request),
            usage=usage_of(session, namespace, recipe),
        )
        trace_id = session.new_id()
        result = dataclasses.replace(
            searched.result, trace_id=trace_id, next_cursor=_cursor(trace_id, searched.next_offset)
        )
        kept = KeptSearch(namespace, trace_id, now, request, without_vectors(searched), result, now + KEPT_FOR)
        session.searches.keep(kept, generation)
        if count_exposures:
            record_exposures(session, namespace, [h.fact_id for h in result.hits], now)  # for the usage fold
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

    def _next_page(self, request: SearchRequest, namespace: Namespace, cursor: str, now: datetime) -> SearchResult:
        """The page a cursor points at, from the ranking its search kept: the search's own query,
        recipe, sources, time and filters; this call's ``k`` and ``token_budget``."""
        trace_id, offset = _parse_cursor(cursor)
        kept = self.session.searches.find(trace_id, namespace, now)
        if kept is None:
            raise CursorNotFound("no search with this cursor is kept for this scope; search again", cursor=cursor)
        first = kept.request
        if (request.query, request.recipe, request.sources) != (first.query, first.recipe, first.sources):
            raise CursorMismatch("a cursor continues its own search: send the same query, recipe and sources")
        started = time.perf_counter()
        # As a search does: what was written since is in the index, so a candidate deleted since
        # (or no longer live at the search's as_of) is left out, never answered after it left.
        self.session.require_index().flush(settle=False, namespace=namespace)
        asked = dataclasses.replace(first, k=request.k, token_budget=request.token_budget)
        fused = kept.searched.fused
        with kept.paging:
            for row, _, _ in fused[offset:]:  # completed for an earlier page: read again, as they are now
                for column in ("value_json", "_gone"):
                    row.pop(column, None)
            try:
                searched = kept.searched
                page = page_of(
                    searched.reader,
                    fused,
                    offset,
                    request.k,
                    asked,
                    searched.where,
                    latest=True,
                    calibration=searched.calibration,
                    lead=searched.lead,
                )
            except (OSError, ValueError) as exc:  # the index version it read is gone (rebuilt)
                raise CursorNotFound("the index version this search read is gone; search again", cursor=cursor) from exc
        record_exposures(self.session, namespace, [h.fact_id for h in page.hits], now)
        return dataclasses.replace(
            kept.result,
            hits=page.hits,
            truncated=page.truncated,
            next_cursor=_cursor(trace_id, page.next_offset),
            timings_ms={"total": (time.perf_counter() - started) * 1000},
        )


def without_vectors(searched: Searched) -> Searched:
    """The search with the stored vectors its lexical candidates carried for the fusion dropped:
    its later pages and its trace never read them, and kept they were most of a kept search's
    memory (about 140 KB each at 256 dimensions, 256 searches kept)."""
    for rows in searched.legs.values():
        if isinstance(rows, list):
            for row in rows:
                if isinstance(row, dict):
                    row.pop("vector", None)
    return searched


def _abstain_below(tenant_threshold: float | None, calibration: Calibration | None) -> float | None:
    """The tenant's threshold, else the one the calibration was fitted with. (Without a
    calibration no hit has a probability, and no threshold abstains.)"""
    if tenant_threshold is not None or calibration is None:
        return tenant_threshold
    return calibration.abstain_below


def _cursor(trace_id: str, offset: int | None) -> str | None:
    return None if offset is None else f"{trace_id}:{offset}"


def _parse_cursor(cursor: str) -> tuple[str, int]:
    trace_id, _, offset = cursor.partition(":")
    if not trace_id or not (offset.isascii() and offset.isdigit()):
        raise InvalidInput("cursor must be the next_cursor a search answered", field="cursor")
    return trace_id, int(offset)


def _deleted_result(request: SearchRequest, recipe: Recipe) -> SearchResult:
    """What a search of a soft-deleted namespace answers: no hit, and a note saying why."""
    return SearchResult(
        hits=(),
        verdict="no_match",
        sources=tuple(sorted(k.value for k in request.sources)),
        sources_applied=True,
        recipe=recipe.to_dict(),
        as_of=request.as_of,
        notes=("this namespace was deleted (namespace_delete); namespace_register brings it back",),
    )
