"""The legs of one search: each runs on the index reader the search holds, and the key-match and
graph legs first ask the store which facts they bring (``services.search`` runs them).

The lexical leg runs on a worker, the vector leg on the calling thread once the query is embedded
(before either leg competes with the embedding for the cores).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from typing import Any, Callable, Mapping, Sequence

from ..identity import Namespace
from ..ports import Embedder, IndexReader
from ..retrieval.filters import LegFilter
from ..retrieval.graph_leg import leg_facts, named_entities, neighbours
from ..retrieval.keys import MAX_PREFIX_KEYS, key_terms, prefix_lookups
from ..retrieval.pipeline import Plan, admissible_top, leg_scores
from ..retrieval.recipes import KEY_HIT, KEY_PREFIX_HIT, Recipe
from ..retrieval.relative_dates import EventOffset, from_event
from ..retrieval.spans import DateSpan
from ..retrieval.summary_leg import LegFacts, summary_facts
from ..retrieval.types import SearchRequest
from ..session import Session
from ..temporal import from_micros

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
    fact_legs: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, Any]:
    """Each leg's admissible rows, best first (and the query vector, which score fusion reads).
    ``fact_legs``: per leg the store names its facts for (key, graph), fact id -> the leg's score."""
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
    # score fusion reads the cosine of a candidate the vector leg did not return from its vector
    columns = [*the_plan.columns, "vector"] if the_plan.lexical_vectors else the_plan.columns
    if "bm25" in the_plan.legs and the_plan.lexical_query:
        text_leg = lambda full, n: reader.text_leg(the_plan.lexical_query, where, n, columns, full=full)  # noqa: E731
        lexical = _LEG_POOL.submit(
            _timed, "bm25", timings, lambda: admissible_top(text_leg, the_plan.lexical_pool, the_plan.k, admissible)
        )
    if "vector" in the_plan.legs:
        knn = lambda full, n: reader.vector_leg(vector, where, n, the_plan.columns, full=full)  # noqa: E731
        found["vector"] = _timed("vector", timings, lambda: admissible_top(knn, the_plan.pool, the_plan.k, admissible))
    for leg, scores in (fact_legs or {}).items():
        if leg in the_plan.legs and scores:
            found[leg] = _timed(leg, timings, lambda s=scores: _facts_leg(reader, s, where, columns, admissible))
    if the_plan.event_offsets:
        out["_event_anchors"] = _timed(
            "events", timings, lambda: event_anchors(reader, the_plan.event_offsets, where, columns, admissible)
        )
        out["_event_spans"] = [a.span for a in out["_event_anchors"] if a.span is not None]
    if lexical is not None:
        found["bm25"] = lexical.result()
    for leg in ("vector", "bm25", "key", "graph", "summary"):
        if leg in the_plan.legs:
            out[leg] = leg_scores(leg, found.get(leg, []))
    return out


@dataclass(frozen=True, slots=True)
class EventAnchor:
    """Where a phrase counted from an event was counted from: the row that best matches the
    event's words (BM25, under the search's filters), its day, and the span that gives."""

    offset: EventOffset
    fact_id: str | None
    day: date | None
    span: DateSpan | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "phrase": self.offset.phrase,
            "event": self.offset.event,
            "fact_id": self.fact_id,
            "day": None if self.day is None else self.day.isoformat(),
            "span": None if self.span is None else [self.span.start.isoformat(), self.span.end.isoformat()],
        }


def event_anchors(
    reader: IndexReader,
    offsets: Sequence[EventOffset],
    where: LegFilter,
    columns: Sequence[str],
    admissible: Callable[[dict[str, Any]], bool],
) -> list[EventAnchor]:
    """Each offset counted from the day of the row that matches its event best (its observed_at,
    else its valid_at); an event no row matches gives no span."""
    anchors = []
    for offset in offsets:
        leg = lambda full, n, words=offset.event: reader.text_leg(words, where, n, columns, full=full)  # noqa: E731
        best = admissible_top(leg, 1, 1, admissible)
        when = from_micros(best[0].get("observed_at") or best[0]["valid_at"]) if best else None
        day = None if when is None else when.date()
        span = None if day is None else from_event(offset, day)
        anchors.append(EventAnchor(offset, best[0]["fact_id"] if best else None, day, span))
    return anchors


def _facts_leg(
    reader: IndexReader,
    scores: Mapping[str, float],
    where: LegFilter,
    columns: Sequence[str],
    admissible: Callable[[dict[str, Any]], bool],
) -> list[dict[str, Any]]:
    """The admissible index rows of the facts ``scores`` names, each with its score, best first."""
    rows = [r for r in reader.facts_leg(list(scores), where, columns) if admissible(r)]
    for row in rows:
        row["_score"] = scores[row["fact_id"]]
    return sorted(rows, key=lambda r: (-r["_score"], r["fact_id"]))


UsageTotals = Callable[[Sequence[str]], Mapping[str, tuple[int, int]]]


def usage_of(session: Session, namespace: Namespace, recipe: Recipe) -> UsageTotals | None:
    """What the recipe's usage prior reads: the usage fold's (recalls, negative) of the pooled
    candidates of ``namespace``, from the store (None when the recipe weighs no usage)."""
    if not recipe.usage_prior:
        return None
    return lambda fact_ids: session.store.usage.totals(namespace, fact_ids)


def attach_usage(legs: Mapping[str, Any], usage: UsageTotals, timings: dict[str, float]) -> None:
    """Put each pooled candidate's folded totals on its rows (``usage_recalls``, ``usage_negative``)
    for the usage prior to read: one read for every candidate of every leg."""
    rows = [row for leg, found in legs.items() if not leg.startswith("_") for row in found]
    if not rows:
        return
    started = time.perf_counter()
    totals = usage(sorted({row["fact_id"] for row in rows}))
    for row in rows:
        row["usage_recalls"], row["usage_negative"] = totals.get(row["fact_id"], (0, 0))
    timings["usage"] = (time.perf_counter() - started) * 1000


def fact_legs_of(
    session: Session, namespace: Namespace, recipe: Recipe, request: SearchRequest
) -> dict[str, dict[str, float]]:
    """The facts the store names for the recipe's key and graph legs, each with its leg score."""
    return {
        "key": key_facts_of(session, namespace, recipe, request.query),
        "graph": graph_facts_of(session, namespace, recipe, request),
        "summary": summary_facts_of(session, namespace, recipe, request.query),
    }


def summary_facts_of(session: Session, namespace: Namespace, recipe: Recipe, query: str) -> LegFacts:
    """The rows the namespace's session summaries that match the query stand for, for the
    summary leg (``retrieval.summary_leg``); each knows why (the session and the words matched)."""
    if "summary" not in recipe.legs:
        return LegFacts()
    return summary_facts(query, session.store.lineage.summaries(namespace))


def key_facts_of(session: Session, namespace: Namespace, recipe: Recipe, query: str) -> dict[str, float]:
    """The facts of ``namespace`` whose key is one the query names, each ``KEY_HIT``, and those
    whose key such a word begins at a word's end, each ``KEY_PREFIX_HIT`` (from the store's cached
    states and their sorted keys: lookups per key-like word once the scope is loaded). A word that
    begins more than ``MAX_PREFIX_KEYS`` keys finds none by prefix."""
    if "key" not in recipe.legs:
        return {}
    versions = session.versions
    found: dict[str, float] = {}
    for term in key_terms(query):
        prefixed = [k for p in prefix_lookups(term) for k in versions.keys_under(namespace, p, MAX_PREFIX_KEYS + 1)]
        if len(prefixed) <= MAX_PREFIX_KEYS:
            for key in prefixed:
                for state in versions.fact_states(namespace, key):
                    found.setdefault(state.fact_id, KEY_PREFIX_HIT)
        for state in versions.fact_states(namespace, term):
            found[state.fact_id] = KEY_HIT  # an exact hit wins over a prefix one
    return found


def graph_facts_of(session: Session, namespace: Namespace, recipe: Recipe, request: SearchRequest) -> dict[str, float]:
    """The facts stating current triples about the entities the query names (hop 1) and
    about the entities those reach (hop 2), scored by hop, for the graph leg. A query that
    names no entity of the scope's graph reads nothing (the names are held in memory)."""
    if "graph" not in recipe.legs:
        return {}
    named = named_entities(request.query, session.graph_entities(namespace))
    if not named:
        return {}
    graph, when = session.graph, request.as_of
    first = graph.observations(namespace, named, when)
    near = neighbours(named, [(o.subject, o.relation, o.object) for o, _ in first])
    second = graph.observations(namespace, near, when) if near else []
    return leg_facts(
        {hop: [link.fact_id for _, links in found for link in links] for hop, found in ((1, first), (2, second))}
    )
