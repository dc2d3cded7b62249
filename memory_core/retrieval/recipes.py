"""Named search recipes: frozen data, so a result can name exactly how it was produced."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from ..errors import InvalidInput

LEGS = ("vector", "bm25", "key", "graph", "summary")
# The key-match leg scores an exact key hit 1 (a prefix hit 0.5), the graph leg a row stating a triple about an
# entity the query names 1 (0.5 one hop further). Score fusion adds weight × that, not a z-score
# (a leg of a few rows has no spread to standardise): an exact key hit outranks a strong match on
# words or meaning alone, a graph hit lifts a row about the entity among near matches.
KEY_HIT = 1.0
KEY_PREFIX_HIT = 0.5  # a key the query's word begins (``deploy_`` for ``deploy_window``)
RAW_LEGS = frozenset({"key", "graph", "summary"})  # summary: a matched session digest's share of the query


@dataclass(frozen=True, slots=True)
class Recipe:
    name: str
    legs: tuple[str, ...]
    weights: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    rrf_k: int = 60
    pool: int = 50  # candidates each leg returns before fusion (at least k)
    lexical_pool: int | None = None  # the BM25 leg's, when it differs from ``pool``
    min_cosine: float = 0.30  # a vector hit below this is weak (for the below_threshold verdict)
    min_bm25: float = 0.0  # a lexical hit must score above this to count as a match
    fusion: str = "rrf"  # rrf: weighted reciprocal rank; zscore: weighted sum of per-leg z-scores
    date_prior: float = 0.0  # added per unit of date match (a query that names a date)
    subject_prior: float = 0.0  # added when the query names one participant and the row is theirs
    # zscore: the row's session's standing, the z-score of its best candidate's fused score among
    # the pool's sessions, clipped to ±session_cap (a run session's notes are one conversation)
    session_prior: float = 0.0
    session_cap: float = 3.0
    # The correctness group (retrieval.row_priors), each a weight on a signal in [-1, 1]; their sum
    # is clipped to ±prior_cap, so together they only reorder near-ties
    confidence_prior: float = 0.0  # a row stored with confidence c loses weight × (1 - c)
    reinforcement_prior: float = 0.0  # a row restated n times gains up to weight (saturating)
    source_prior: float = 0.0  # a row of a less trusted source class (derived, imported, ...) loses up to weight
    recency_prior: float = 0.0  # a query asking for the latest: newer candidates gain up to weight
    # a row callers said was useful gains up to weight, one they rejected loses up to it (the usage
    # fold's totals, read from the store for the pooled candidates: retrieval.usage)
    usage_prior: float = 0.0
    prior_cap: float = 0.0  # 0: the group is bounded by its weights alone
    # zscore: read the stored vector of a candidate only the lexical leg found, for its exact
    # cosine (else it gets the lowest cosine the vector leg returned)
    exact_cosine: bool = True

    def weight(self, leg: str) -> float:
        return float(self.weights.get(leg, 1.0))

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "legs": list(self.legs),
            "weights": {leg: self.weight(leg) for leg in self.legs},
            "fusion": self.fusion,
            "rrf_k": self.rrf_k,
            "pool": self.pool,
            "lexical_pool": self.lexical_pool or self.pool,
            "min_cosine": self.min_cosine,
            "min_bm25": self.min_bm25,
            "date_prior": self.date_prior,
            "subject_prior": self.subject_prior,
            "session_prior": self.session_prior,
            "session_cap": self.session_cap,
            "confidence_prior": self.confidence_prior,
            "reinforcement_prior": self.reinforcement_prior,
            "source_prior": self.source_prior,
            "recency_prior": self.recency_prior,
            "usage_prior": self.usage_prior,
            "prior_cap": self.prior_cap,
            "exact_cosine": self.exact_cosine,
        }


def _recipe(name: str, legs: tuple[str, ...], settings: dict | None = None, **weights: float) -> Recipe:
    return Recipe(name, legs, MappingProxyType(dict(weights)), **(settings or {}))


# The default recipe's settings: hybrid_zscore with the session prior and the capped
# correctness group (docs/retrieval.md, "The default recipe"); hybrid_usage adds one prior.
HYBRID_SESSION = {
    "fusion": "zscore",
    "pool": 200,
    "date_prior": 2.0,
    "subject_prior": 0.5,
    "session_prior": 0.45,
    "confidence_prior": 0.3,
    "reinforcement_prior": 0.15,
    "source_prior": 0.2,
    "recency_prior": 0.25,
    "prior_cap": 0.5,
}

RECIPES: Mapping[str, Recipe] = MappingProxyType(
    {
        r.name: r
        for r in (
            _recipe("hybrid_rrf", ("vector", "bm25"), vector=1.0, bm25=1.0),
            _recipe("hybrid_lexical", ("vector", "bm25"), vector=0.5, bm25=1.0),
            _recipe("vector_only", ("vector",)),
            _recipe("bm25_only", ("bm25",)),
            # Score-level fusion with query priors: per-leg z-scores over a wide pool, weighted towards
            # meaning, plus small terms for a date the query names and the participant it names.
            _recipe(
                "hybrid_zscore",
                ("vector", "bm25"),
                {"fusion": "zscore", "pool": 200, "date_prior": 2.0, "subject_prior": 0.5},
                vector=0.6,
                bm25=0.4,
            ),
            # hybrid_zscore with even weights, the session prior and the capped correctness group:
            # chosen on the first half of the LoCoMo dev conversations, reported on both
            # (docs/retrieval.md, "The default recipe").
            _recipe(
                "hybrid_session",
                ("vector", "bm25", "key", "graph"),
                HYBRID_SESSION,
                vector=0.5,
                bm25=0.5,
                key=5.0,
                graph=1.0,
            ),
            # hybrid_session with the usage prior in its capped correctness group: what callers
            # found useful before lifts a near-tie (measured in docs/benchmarks.md, 2026-12-03).
            _recipe(
                "hybrid_usage",
                ("vector", "bm25", "key", "graph"),
                {**HYBRID_SESSION, "usage_prior": 0.25},
                vector=0.5,
                bm25=0.5,
                key=5.0,
                graph=1.0,
            ),
            # hybrid_session with the session-summary leg: a session whose digest matches the
            # query brings its turns and the facts read from them (retrieval.summary_leg); off in
            # the default recipe (docs/retrieval.md, "The session-summary leg").
            _recipe(
                "hybrid_summaries",
                ("vector", "bm25", "key", "graph", "summary"),
                HYBRID_SESSION,
                vector=0.5,
                bm25=0.5,
                key=5.0,
                graph=1.0,
                summary=1.0,
            ),
        )
    }
)


# What recall and search run unless a call names another: the recipe that measures best on the
# LoCoMo dev file through the documented path (docs/retrieval.md, "The default recipe").
DEFAULT_RECIPE = "hybrid_session"


def get_recipe(name: str) -> Recipe:
    try:
        return RECIPES[name]
    except KeyError:
        raise InvalidInput(f"unknown recipe {name!r}; expected one of: {', '.join(RECIPES)}", recipe=name) from None
