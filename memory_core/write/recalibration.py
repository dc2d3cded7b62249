"""The conflict threshold measured on a home's own facts (the recalibration worker's statistic).

An embedder's cosines live in a band of its own: unrelated short values score about 0.0 under
one model and 0.3 under another. A peer check (``write.verdicts``) judges the peers above the
conflict threshold, so the threshold should sit where unrelated values seldom reach. The
statistic: the ``QUANTILE`` of the cosines of random pairs of the tenant's live values, clamped
to ``[FLOOR, CEILING]`` (under the duplicate threshold, over what no model calls related).
The nearest same-namespace peer of each sampled value is measured beside it, as a report of how
close real neighbours sit (it does not move the threshold). Sampling is seeded: the same facts
and the same embedder give the same threshold. Pure: vectors in, numbers out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .tenant_config import DEFAULT_CONFLICT_THRESHOLD

QUANTILE = 0.99  # one random pair in a hundred reaches the threshold
# FLOOR: the default conflict threshold. The statistic says where unrelated values stop, a lower
# bound for the threshold; it may raise the threshold for a model whose cosines run high, never
# drop it below the default (with the static embedder the quantile is 0.40: 0.60 flagged
# unrelated peers). CEILING stays under the default duplicate threshold (0.95).
FLOOR, CEILING = DEFAULT_CONFLICT_THRESHOLD, 0.92
MIN_FACTS = 8  # fewer of a tenant's own: the home's values are measured instead
SAMPLE_FACTS = 1_000  # values embedded per measurement, at most
RANDOM_PAIRS = 4_000
SEED = 20_240_601


@dataclass(frozen=True, slots=True)
class Measurement:
    threshold: float
    facts: int  # values sampled
    random_pairs: int
    random_quantile: float  # the QUANTILE of random-pair cosines, before the clamp
    random_median: float
    nearest_peer_median: float | None  # None: no namespace of the sample held two values

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "facts": self.facts,
            "random_pairs": self.random_pairs,
            "random_quantile": self.random_quantile,
            "random_median": self.random_median,
            "nearest_peer_median": self.nearest_peer_median,
        }


def sample(ids: Sequence[str], seed: int = SEED, limit: int = SAMPLE_FACTS) -> list[int]:
    """Which of ``ids`` to embed: all of them up to ``limit``, else a seeded draw (by sorted id,
    so the order the store answers in does not matter). Positions into ``ids``, ascending."""
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    if len(order) <= limit:
        return sorted(order)
    picked = np.random.default_rng(seed).choice(len(order), size=limit, replace=False)
    return sorted(order[int(i)] for i in picked)


def measure(vectors: np.ndarray, groups: Sequence[Any], seed: int = SEED) -> Measurement | None:
    """The threshold from value vectors (one row per value) and each value's namespace
    (``groups``); None with fewer than two values."""
    n = len(vectors)
    if n < 2:
        return None
    unit = np.asarray(vectors, dtype=np.float64)
    unit = unit / np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    rng = np.random.default_rng(seed)
    left = rng.integers(0, n, size=RANDOM_PAIRS)
    right = (left + rng.integers(1, n, size=RANDOM_PAIRS)) % n  # never a value with itself
    cosines = np.einsum("ij,ij->i", unit[left], unit[right])
    q = float(np.quantile(cosines, QUANTILE))
    return Measurement(
        threshold=round(min(max(q, FLOOR), CEILING), 3),
        facts=n,
        random_pairs=RANDOM_PAIRS,
        random_quantile=round(q, 4),
        random_median=round(float(np.median(cosines)), 4),
        nearest_peer_median=_nearest_peer_median(unit, groups),
    )


def _nearest_peer_median(unit: np.ndarray, groups: Sequence[Any]) -> float | None:
    best: list[float] = []
    by_group: dict[Any, list[int]] = {}
    for i, g in enumerate(groups):
        by_group.setdefault(g, []).append(i)
    for rows in by_group.values():
        if len(rows) < 2:
            continue
        block = unit[rows] @ unit[rows].T
        np.fill_diagonal(block, -np.inf)
        best.extend(block.max(axis=1).tolist())
    return round(float(np.median(best)), 4) if best else None
