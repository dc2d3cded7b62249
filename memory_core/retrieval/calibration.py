"""Calibrated relevance: what a hit's scores say about the chance it answers the query.

A fused score ranks one query's candidates; it says nothing comparable across queries (a z-score
is relative to its own pool). A calibration maps what a hit shows — its fused score, the cosine
the vector leg gave it, its BM25 score, its rank, how far the query's top hit stands above the
second, and how far the hit stands below the top — to P(relevant) with a logistic model (Platt
scaling over those features), fitted for one embedder and one recipe on labelled evidence
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

FEATURES = ("score", "cosine", "log1p_bm25", "log_rank", "top_margin", "top_gap")
LOW_CONFIDENCE = "low_calibrated_confidence"
Features = tuple[float, float, float, float, float, float]


@dataclass(frozen=True, slots=True)
class Lead:
    """Where a ranking's top stands: the top hit's fused score and its margin over the second."""

    top: float
    margin: float


def lead_of(scores: Sequence[float]) -> Lead:
    """The lead of a ranking from its scores, best first (its fused ranking's, not a page's: a
    page of k = 1 would otherwise have no second)."""
    if not scores:
        return Lead(0.0, 0.0)
    return Lead(float(scores[0]), float(scores[0] - scores[1]) if len(scores) > 1 else 0.0)


def features_of(hit: Hit, rank: int, lead: Lead) -> Features:
    """What the calibration reads of a hit at ``rank`` (1: the top) of a ranking led as ``lead``
    says; a leg that did not return the hit gives 0."""
    cosine = hit.legs["vector"].score if "vector" in hit.legs else 0.0
    bm25 = hit.legs["bm25"].score if "bm25" in hit.legs else 0.0
    return (
        float(hit.score),
        float(cosine),
        math.log1p(max(0.0, float(bm25))),
        math.log(rank),
        lead.margin,
        lead.top - float(hit.score),
    )


def ranked_features(hits: Sequence[Hit], first_rank: int = 1, lead: Lead | None = None) -> list[Features]:
    """The features of a ranking's hits (a later page: its first rank and the first page's lead)."""
    led = lead_of([hit.score for hit in hits[:2]]) if lead is None else lead
    return [features_of(hit, first_rank + n, led) for n, hit in enumerate(hits)]


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

    def calibrated(self, hits: Sequence[Hit], first_rank: int = 1, lead: Lead | None = None) -> tuple[Hit, ...]:
        """The hits, each with its P(relevant) (``ranked_features`` for the arguments)."""
        return tuple(
            dataclasses.replace(hit, p_relevant=self.probability(f))
            for hit, f in zip(hits, ranked_features(hits, first_rank, lead))
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
            features = list(body.get("features", FEATURES))
            # A fit of the features before top_gap is this model with top_gap's coefficient 0.
            if features not in (list(FEATURES), list(FEATURES[:-1])):
                raise ValueError(f"features must be {list(FEATURES)}")
            if not isinstance(body["coef"], list) or len(body["coef"]) != len(features):
                raise ValueError(f"coef needs one number per feature ({len(features)})")
            coef = tuple(_number(c) for c in body["coef"]) + (0.0,) * (len(FEATURES) - len(features))
            threshold = _number(body["abstain_below"])
            if not 0.0 <= threshold <= 1.0:
                raise ValueError("abstain_below must lie in [0, 1]")
            brier = body.get("brier")
            return cls(
                embedder=_text(body["embedder"]),
                recipe=_text(body["recipe"]),
                coef=(coef[0], coef[1], coef[2], coef[3], coef[4], coef[5]),
                intercept=_number(body["intercept"]),
                abstain_below=threshold,
                fitted_on=str(body.get("fitted_on", "")),
                brier=None if brier is None else _number(brier),
            )
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise InvalidInput(f"not a calibration: {exc}", field="calibration") from None


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {value!r:.40}")
    return float(value)


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("embedder and recipe must be non-empty names")
    return value


def low_confidence(top_probability: float | None, threshold: float | None) -> bool:
    """Does the top hit's calibrated probability fall under the threshold? (No calibration, or no
    threshold: never.)"""
    return top_probability is not None and threshold is not None and top_probability < threshold
