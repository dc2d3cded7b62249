"""The search pipeline's decisions, one pure function per phase.

plan → embed the query → legs (vector, BM25) → fuse (RRF) → filter → verdict → assemble. The
search service runs the legs on the index (``services.search``); everything here decides on
their rows. Filters go into each leg as a prefilter, and are checked again on the fused rows so a
lagging or damaged index can never widen an answer past its scope or time.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..identity import Namespace
from ..model import VISIBLE_STATUSES, Kind
from ..temporal import from_micros, live_at, micros
from .calibration import LOW_CONFIDENCE, low_confidence
from .filters import LegFilter
from .fusion import rrf
from .priors import date_match, dates_in, named_participants, without_participants
from .recipes import RAW_LEGS, Recipe
from .relative_dates import EventOffset, event_offsets
from .row_priors import asks_recent, correctness_terms, session_standing, zscores
from .rows import LEG_COLUMNS
from .types import Hit, LegScore, SearchRequest

# Planes whose legs exist in this build. Documents (doc_put chunks) arrive with the documents plane.
SERVED_SOURCES = frozenset({Kind.FACT, Kind.NOTE, Kind.DOCUMENT})
_IDENTIFIER = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{3,}\b")


@dataclass(frozen=True, slots=True)
class Plan:
    legs: tuple[str, ...]
    pool: int
    lexical_query: str
    vector_query: str
    columns: tuple[str, ...] = LEG_COLUMNS  # what each leg reads per candidate
    lexical_vectors: bool = False  # score fusion needs the cosine of lexical-only candidates
    k: int = 10
    lexical_pool: int = 50  # the BM25 leg's pool
    # phrases counted from an event the query names: the search finds the event's day first
    event_offsets: tuple[EventOffset, ...] = ()


def plan(request: SearchRequest, recipe: Recipe) -> Plan:
    pool = max(recipe.pool, request.k)
    text = " ".join(request.query.split())
    columns = list(LEG_COLUMNS)
    if request.observed_from is not None or request.observed_to is not None or recipe.date_prior:
        columns.append("observed_at")
    if recipe.subject_prior:
        columns.append("subject")
    columns += _prior_columns(recipe, text)
    if Kind.DOCUMENT in request.sources:  # a chunk candidate is folded to its document
        columns.append("memory_type")
    # Names stay in the lexical query (they match a row's subject) and leave the semantic one.
    return Plan(
        legs=recipe.legs,
        pool=pool,
        lexical_query=text,
        vector_query=without_participants(text, request.participants),
        columns=tuple(dict.fromkeys(columns)),  # a column two priors read is read once
        lexical_vectors=recipe.fusion == "zscore" and "vector" in recipe.legs and recipe.exact_cosine,
        k=request.k,
        lexical_pool=max(recipe.lexical_pool or recipe.pool, request.k),
        event_offsets=tuple(event_offsets(text)) if recipe.date_prior else (),
    )


def _prior_columns(recipe: Recipe, query: str) -> list[str]:
    """The columns the recipe's row priors read per candidate (``retrieval.row_priors``)."""
    wanted = [
        name
        for name, weight in (
            ("session", recipe.session_prior),
            ("confidence", recipe.confidence_prior),
            ("reinforcement_count", recipe.reinforcement_prior),
            ("source_class", recipe.source_prior),
        )
        if weight
    ]
    if recipe.recency_prior and asks_recent(query):
        wanted.append("observed_at")
    return wanted


# Legs run under the filters an index answers from bitmaps (namespace, kind) and fetch their
# pool; status and time are checked here on what they return, which costs far less than range
# predicates inside the index, and the index holds visible facts only (docs/benchmarks.md, "Legs
# check status and time themselves"). The rows that pass go on to fusion. A leg
# left with fewer than k of them fetches WIDEN times its pool, then runs under the full filter, so
# its top k is exactly what the full filter would give.
WIDEN = 4


def leg_filter(namespace: Namespace, request: SearchRequest, now: datetime) -> LegFilter:
    """The filter every leg runs under: one scope, the sources, visible rows, time."""
    return LegFilter(namespace, request.sources, request.as_of, now, request.observed_from, request.observed_to)


Leg = Callable[[bool, int], list[dict[str, Any]]]  # (under the full filter?, limit) -> rows, best first


def admissible_top(run: Leg, pool: int, k: int, admissible: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """Up to ``pool`` rows of a leg that pass its check, best first: fetched under the narrow
    filter and checked here; fetched wider, then under the full filter, while fewer than ``k``
    survived and the fetch may have stopped short of others."""
    for limit in (pool, pool * WIDEN):
        rows = run(False, limit)
        kept = [r for r in rows if admissible(r)]
        if len(kept) >= min(k, pool) or len(rows) < limit:
            return kept[:pool]
    return [r for r in run(True, pool) if admissible(r)][:pool]


def leg_scores(leg: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The legs' own scores on their rows: cosine similarity from cosine distance; as given for
    BM25, and for the key and graph legs (the score the store's lookup gave each fact)."""
    for row in rows:
        row["_leg_score"] = 1.0 - float(row["_distance"]) if leg == "vector" else float(row["_score"])
    return rows


Fused = list[tuple[dict[str, Any], float, dict[str, LegScore]]]


def _pool(legs: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, LegScore]]]:
    rows: dict[str, dict[str, Any]] = {}
    per_leg: dict[str, dict[str, LegScore]] = {}
    for leg, leg_rows in legs.items():
        if leg.startswith("_"):
            continue
        for rank, row in enumerate(leg_rows, start=1):
            rows.setdefault(row["fact_id"], row)
            per_leg.setdefault(row["fact_id"], {})[leg] = LegScore(rank, row["_leg_score"])
    return rows, per_leg


def subjects_of(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The subjects of the candidates, in a repeatable order: who a conversation's rows are about,
    when the caller named no participants."""
    return sorted({s for s in (row.get("subject") for row in rows) if s})


def _cosine(scored: Mapping[str, LegScore], row: Mapping[str, Any], legs: Mapping[str, Any]) -> float:
    """A candidate's cosine: the vector leg's, else from its stored vector when the lexical leg
    read it, else the lowest the vector leg returned (a row it did not return scores no more)."""
    if "vector" in scored:
        return scored["vector"].score
    if row.get("vector") is not None:
        return float(np.dot(np.asarray(row["vector"], dtype=np.float32), legs["_query_vector"]))
    returned = legs.get("vector") or ()
    return min((r["_leg_score"] for r in returned), default=0.0)


def fuse_zscore(legs: Mapping[str, Any], recipe: Recipe, request: SearchRequest) -> Fused:
    """score = Σ w_leg · z(leg score) + priors, z over the pooled candidates of this query.

    A candidate one leg did not return scores what that leg would give it: its cosine for the
    vector leg (from its stored vector), zero for BM25 (it matched no query word).
    """
    rows, per_leg = _pool(legs)
    if not rows:
        return []
    ids = sorted(rows)
    terms: dict[str, np.ndarray] = {}
    for leg in (name for name in legs if not name.startswith("_")):
        if leg == "vector":
            scores = np.array([_cosine(per_leg[i], rows[i], legs) for i in ids])
        else:
            scores = np.array([per_leg[i][leg].score if leg in per_leg[i] else 0.0 for i in ids])
        # the key and graph legs' scores are added as they are: a few rows have no spread to standardise
        terms[leg] = recipe.weight(leg) * (scores if leg in RAW_LEGS else zscores(scores))
    spans = [*dates_in(request.query, request.as_of.date()), *legs.get("_event_spans", ())] if recipe.date_prior else []
    if spans:
        when = [from_micros(rows[i]["observed_at"]) or from_micros(rows[i]["valid_at"]) for i in ids]
        terms["date_prior"] = np.array([recipe.date_prior * date_match(spans, w) for w in when])
    named = []
    if recipe.subject_prior:
        named = named_participants(request.query, request.participants or subjects_of(rows.values()))
    if len(named) == 1:
        theirs = [(rows[i].get("subject") or "").lower() == named[0].lower() for i in ids]
        terms["subject_prior"] = recipe.subject_prior * np.array(theirs, dtype=float)
    if recipe.session_prior:  # from the score so far: where the session's best candidate stands
        standing = session_standing(
            np.sum(list(terms.values()), axis=0), [rows[i].get("session") for i in ids], recipe.session_cap
        )
        if standing.any():
            terms["session_prior"] = recipe.session_prior * standing
    terms.update(correctness_terms([rows[i] for i in ids], recipe, request.query))
    total = np.sum(list(terms.values()), axis=0).tolist()
    order = sorted(range(len(ids)), key=lambda n: (-total[n], ids[n]))
    # Python floats column by column: indexing a NumPy array per row and term cost ~2 ms a search
    columns = [(name, np.asarray(values, dtype=float).tolist()) for name, values in terms.items()]
    for n, fid in enumerate(ids):
        rows[fid]["_terms"] = {name: values[n] for name, values in columns}
    return [(rows[ids[n]], total[n], per_leg[ids[n]]) for n in order]


def fuse(legs: Mapping[str, Any], recipe: Recipe, request: SearchRequest) -> Fused:
    if recipe.fusion == "zscore":
        return fuse_zscore(legs, recipe, request)
    rows, per_leg = _pool(legs)
    rankings = {leg: [row["fact_id"] for row in leg_rows] for leg, leg_rows in legs.items() if not leg.startswith("_")}
    weights = {leg: recipe.weight(leg) for leg in rankings}
    fused = rrf(rankings, weights, recipe.rrf_k)
    for fid, scored in per_leg.items():
        rows[fid]["_terms"] = {leg: weights[leg] / (recipe.rrf_k + s.rank) for leg, s in scored.items()}
    return [(rows[fid], score, per_leg[fid]) for fid, score in fused]


def time_check(where: LegFilter) -> Callable[[Mapping[str, Any]], bool]:
    """Is a row live at ``as_of``, not expired, inside the observed-at window? On the rows'
    microseconds."""
    as_of, now_us = micros(where.as_of), micros(where.now)
    since = None if where.observed_from is None else micros(where.observed_from)
    until = None if where.observed_to is None else micros(where.observed_to)

    def check(row: Mapping[str, Any]) -> bool:
        expires, observed = row["expires_at"], row.get("observed_at")
        return (
            live_at(row["valid_at"], row["invalid_at"], as_of)  # compares microseconds as it does datetimes
            and (expires is None or expires > now_us)
            and (since is None or (observed is not None and observed >= since))
            and (until is None or (observed is not None and observed < until))
        )

    return check


RowCheck = Callable[[Mapping[str, Any]], bool]


def leg_check(in_time: RowCheck) -> RowCheck:
    """The filters a leg's narrow prefilter leaves to this check: a visible status, and time
    (``time_check`` of the search's filter)."""
    return lambda row: row["status"] in VISIBLE_STATUSES and in_time(row)


def row_check(where: LegFilter, in_time: RowCheck) -> RowCheck:
    """The whole filter on a completed row, from the row's own columns: scope, status, kind, and
    time by ``in_time`` (``time_check(where)``)."""
    namespace, kinds = where.namespace, {k.value for k in where.kinds}
    return lambda row: (
        row["tenant"] == namespace.tenant
        and row["scope"] == namespace.scope.value
        and row["owner_id"] == namespace.owner_id
        and row["status"] in VISIBLE_STATUSES
        and row["kind"] in kinds
        and in_time(row)
    )


def verdict(query: str, hits: Sequence[Hit], recipe: Recipe, abstain_below: float | None = None) -> str:
    """no_match: nothing; below_threshold: the top hit is weak on every leg's own score;
    low_calibrated_confidence: the top hit's calibrated probability is under ``abstain_below``;
    identifier_absent: the query names an identifier that no hit contains."""
    if not hits:
        return "no_match"
    top = hits[0]
    if "key" in top.legs:  # the query names the top hit's key: found, however its words score
        return "ok"
    strong = (
        ("vector" in top.legs and top.legs["vector"].score >= recipe.min_cosine)
        or ("bm25" in top.legs and top.legs["bm25"].score > recipe.min_bm25)
        or "graph" in top.legs  # it states a triple about an entity the query names
        or "summary" in top.legs  # its session's digest holds most of the query's words
    )
    if not strong:
        return "below_threshold"
    if low_confidence(top.p_relevant, abstain_below):
        return LOW_CONFIDENCE
    identifiers = {m.lower() for m in _IDENTIFIER.findall(query)}
    if identifiers:
        texts = " ".join(h.text.lower() for h in hits)
        if any(i not in texts for i in identifiers):
            return "identifier_absent"
    return "ok"


def to_hit(row: Mapping[str, Any], score: float, legs: dict[str, LegScore]) -> Hit:
    return Hit(
        kind=Kind(row["kind"]),
        key=row["key"],
        value=json.loads(row["value_json"]),
        fact_id=row["fact_id"],
        version_id=row["version_id"],
        memory_type=row["memory_type"],
        status=row["status"],
        score=score,
        legs=legs,
        valid_at=from_micros(row["valid_at"]),
        invalid_at=from_micros(row["invalid_at"]),
        observed_at=from_micros(row["observed_at"]),
        created_at=from_micros(row["created_at"]),
        provenance=json.loads(row["provenance_json"]),
        text=row["text"],
        terms=row.get("_terms", {}),
        subject=row.get("subject") or None,
        document=row.get("_document"),
        document_chunks=row.get("_document_chunks", 0),
        why=row.get("_why", {}),
    )


def assemble(hits: Sequence[Hit], k: int, token_budget: int | None) -> tuple[tuple[Hit, ...], int]:
    """The top k, cut further to the token budget (about four characters a token)."""
    chosen = list(hits[:k])
    if token_budget is None:
        return tuple(chosen), 0
    kept, used = [], 0
    for hit in chosen:
        cost = max(1, len(hit.text) // 4)
        if used + cost > token_budget and kept:
            break
        kept.append(hit)
        used += cost
    return tuple(kept), len(chosen) - len(kept)


def names_identifier(query: str) -> bool:
    """Does the query name an identifier (a code, an id)? Then the verdict searches every
    candidate's text for it, and every candidate is completed."""
    return _IDENTIFIER.search(query) is not None
