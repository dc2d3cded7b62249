"""Calibrated relevance: what a hit's scores say about the chance it answers the query.

A fused score ranks one query's candidates; it says nothing comparable across queries (a z-score
is relative to its own pool). A calibration maps what a hit shows — its fused score, the cosine
the vector leg gave it, its BM25 score, its rank, and how far the query's top hit stands above
the second — to P(relevant) with a logistic model (Platt scaling over those features), fitted
for one embedder and one recipe on labelled evidence
(``memcore eval locomo`` fits it on the dev split; ``docs/retrieval.md``, "Calibrated abstention").
A search whose top hit's probability is under the tenant's threshold abstains with
``low_calibrated_confidence``. Pure: the fitting happens in the evaluations.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import InvalidInput
from .types import Hit

FEATURES = ("score", "cosine", "log1p_bm25", "log_rank", "top_margin")
LOW_CONFIDENCE = "low_calibrated_confidence"
Features = tuple[float, float, float, float, float]


def top_margin(hits: Sequence[Hit]) -> float:
    """How far the top hit's fused score stands above the second's (0 with fewer than two)."""
    return float(hits[0].score - hits[1].score) if len(hits) > 1 else 0.0


def features_of(hit: Hit, rank: int, margin: float) -> Features:
    """What the calibration reads of a hit at ``rank`` (1: the top) of a ranking whose top hit
    leads by ``margin``; a leg that did not return the hit gives 0."""
    cosine = hit.legs["vector"].score if "vector" in hit.legs else 0.0
    bm25 = hit.legs["bm25"].score if "bm25" in hit.legs else 0.0
    return (float(hit.score), float(cosine), math.log1p(max(0.0, float(bm25))), math.log(rank), float(margin))


def ranked_features(hits: Sequence[Hit], first_rank: int = 1, margin: float | None = None) -> list[Features]:
    """The features of a ranking's hits (a later page: its first rank and the first page's margin)."""
    lead = top_margin(hits) if margin is None else margin
    return [features_of(hit, first_rank + n, lead) for n, hit in enumerate(hits)]


@dataclass(frozen=True, slots=True)
class Calibration:
    """P(relevant) = σ(intercept + Σ coef·feature) for hits of ``recipe`` under ``embedder``."""

    embedder: str
    recipe: str
    coef: Features
    intercept: float
    abstain_below: float  # the threshold a tenant gets unless it sets its own
    fitted_on: str = ""  # what it was fitted on, in words (corpus, split, questions)
    brier: float | None = None  # on held-out hits, when measured

    def probability(self, features: Features) -> float:
        z = self.intercept + sum(c * x for c, x in zip(self.coef, features))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def calibrated(self, hits: Sequence[Hit], first_rank: int = 1, margin: float | None = None) -> tuple[Hit, ...]:
        """The hits, each with its P(relevant) (``ranked_features`` for the arguments)."""
        return tuple(
            dataclasses.replace(hit, p_relevant=self.probability(f))
            for hit, f in zip(hits, ranked_features(hits, first_rank, margin))
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "embedder": self.embedder,
            "recipe": self.recipe,
            "features": list(FEATURES),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "abstain_below": self.abstain_below,
            "fitted_on": self.fitted_on,
            "brier": self.brier,
        }

    @classmethod
    def from_dict(cls, body: Mapping[str, Any]) -> "Calibration":
        """A calibration from its JSON form; anything else is refused with a typed error."""
        try:
            if list(body.get("features", FEATURES)) != list(FEATURES):
                raise ValueError(f"features must be {list(FEATURES)}")
            coef = tuple(float(c) for c in body["coef"])
            if len(coef) != len(FEATURES):
                raise ValueError(f"coef needs {len(FEATURES)} numbers")
            threshold = float(body["abstain_below"])
            numbers = (*coef, float(body["intercept"]), threshold)
            if not all(math.isfinite(n) for n in numbers) or not 0.0 <= threshold <= 1.0:
                raise ValueError("coefficients must be finite and abstain_below in [0, 1]")
            brier = body.get("brier")
            return cls(
                embedder=_text(body["embedder"]),
                recipe=_text(body["recipe"]),
                coef=(coef[0], coef[1], coef[2], coef[3], coef[4]),
                intercept=float(body["intercept"]),
                abstain_below=threshold,
                fitted_on=str(body.get("fitted_on", "")),
                brier=None if brier is None else float(brier),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InvalidInput(f"not a calibration: {exc}", field="calibration") from None


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("embedder and recipe must be non-empty names")
    return value


def low_confidence(top_probability: float | None, threshold: float | None) -> bool:
    """Does the top hit's calibrated probability fall under the threshold? (No calibration, or no
    threshold: never.)"""
    return top_probability is not None and threshold is not None and top_probability < threshold
