"""Priors read from each candidate's own row: its session's standing, and the correctness group
(confidence, reinforcement, source trust, recency, and usage where a recipe weighs it). Pure
functions over the pooled candidates.

Like the query priors (``retrieval.priors``), each is an additive term on the fused score of rows
the legs already found; none brings in a row. Each is bounded by its recipe: the session term by
``session_prior × session_cap``, the correctness group together by ``prior_cap``, so the group only
reorders near-ties (real embedders give a narrow band of cosines, and an unbounded confidence or
trust term could outweigh the gap between a good match and a mediocre one).
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping, Sequence

import numpy as np

from .recipes import Recipe
from .usage import usage_signal

# How much less a row of each source class is trusted than what its writer stated (-1 … 0).
SOURCE_TRUST: Mapping[str, float] = {"stated": 0.0, "derived": -0.5, "imported": -0.5, "external": -1.0}
# Restatements after which reinforcement stops adding (the signal is log-scaled up to here).
REINFORCEMENT_SATURATES = 8
# A query asking for what is newest: "latest", "recently", "currently", "now", "these days", ...
_RECENT = re.compile(
    r"\b(latest|newest|most recent(ly)?|recent(ly)?|lately|currently|current|now|nowadays|these days|"
    r"at the moment|last time)\b",
    re.I,
)


def asks_recent(query: str) -> bool:
    """Does the query ask for the newest state of something (so newer candidates should win ties)?"""
    return _RECENT.search(query) is not None


def zscores(values: np.ndarray) -> np.ndarray:
    return (values - values.mean()) / (values.std() + 1e-9)


def session_standing(base: np.ndarray, sessions: Sequence[str | None], cap: float) -> np.ndarray:
    """Per candidate, how its session stands: the z-score (over the candidates that have a
    session) of the best base score any candidate of its session reached, clipped to ±``cap``;
    0 for a candidate outside any session, and for all when fewer than two sessions are pooled.

    Why: the turns of one conversation that a question is about cluster in one or two sessions;
    a turn whose session holds the best match gains over an equally good turn of a session that
    holds nothing else (docs/retrieval.md, "The default recipe")."""
    out = np.zeros(len(base))
    placed = [n for n, s in enumerate(sessions) if s]
    if len({sessions[n] for n in placed}) < 2:
        return out
    best: dict[str, float] = {}
    for n in placed:
        s = sessions[n]
        best[s] = max(best.get(s, -math.inf), float(base[n]))
    standing = zscores(np.array([best[sessions[n]] for n in placed]))
    out[placed] = np.clip(standing, -cap, cap)
    return out


def confidence_signal(confidence: Any) -> float:
    """-(1 - confidence), in [-1, 0]; an unknown confidence (an index row from before the column) is 0."""
    if confidence is None:
        return 0.0
    return -(1.0 - min(1.0, max(0.0, float(confidence))))


def reinforcement_signal(count: Any) -> float:
    """log(1 + n) / log(1 + REINFORCEMENT_SATURATES), at most 1: the first restatements count most."""
    if not count or count < 0:
        return 0.0
    return min(1.0, math.log1p(count) / math.log1p(REINFORCEMENT_SATURATES))


def source_signal(source_class: Any) -> float:
    return SOURCE_TRUST.get(source_class, 0.0) if source_class else 0.0


def recency_signals(times: Sequence[int | None]) -> np.ndarray:
    """Each candidate's time as a share of the pool's span (0: the oldest, 1: the newest); 0 for
    all when the candidates share one time or have none."""
    known = [t for t in times if t is not None]
    if not known or max(known) == min(known):
        return np.zeros(len(times))
    low, span = min(known), max(known) - min(known)
    return np.array([0.0 if t is None else (t - low) / span for t in times])


def correctness_terms(rows: Sequence[Mapping[str, Any]], recipe: Recipe, query: str) -> dict[str, np.ndarray]:
    """The correctness group's terms per candidate, scaled so their sum stays within
    ±``recipe.prior_cap`` (each term keeps its share of the clipped sum, so a hit's reported terms
    still add up to its score). Only the priors the recipe weighs are computed."""
    terms: dict[str, np.ndarray] = {}
    if recipe.confidence_prior:
        terms["confidence_prior"] = recipe.confidence_prior * np.array(
            [confidence_signal(r.get("confidence")) for r in rows]
        )
    if recipe.reinforcement_prior:
        terms["reinforcement_prior"] = recipe.reinforcement_prior * np.array(
            [reinforcement_signal(r.get("reinforcement_count")) for r in rows]
        )
    if recipe.source_prior:
        terms["source_prior"] = recipe.source_prior * np.array([source_signal(r.get("source_class")) for r in rows])
    if recipe.recency_prior and asks_recent(query):
        times = [r.get("observed_at") if r.get("observed_at") is not None else r.get("valid_at") for r in rows]
        terms["recency_prior"] = recipe.recency_prior * recency_signals(times)
    if recipe.usage_prior:  # the usage fold's totals, put on each row by the search (usage_recalls, ...)
        terms["usage_prior"] = recipe.usage_prior * np.array(
            [usage_signal(r.get("usage_recalls"), r.get("usage_negative")) for r in rows]
        )
    terms = {name: values for name, values in terms.items() if values.any()}
    if not terms or not recipe.prior_cap:
        return terms
    total = np.sum(list(terms.values()), axis=0)
    capped = np.clip(total, -recipe.prior_cap, recipe.prior_cap)
    scale = np.divide(capped, total, out=np.ones_like(total), where=total != 0)
    return {name: values * scale for name, values in terms.items()}
