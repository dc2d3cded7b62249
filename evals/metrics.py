"""Pure metric and statistics functions. No I/O."""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
from scipy import stats


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Share of ``relevant`` ids among the first ``k`` of ``ranked`` (LoCoMo's Table 3 definition)."""
    wanted = set(relevant)
    if not wanted:
        raise ValueError("recall is undefined without relevant ids")
    return len(wanted & set(ranked[:k])) / len(wanted)


def mrr(ranked: Sequence[str], relevant: Iterable[str]) -> float:
    wanted = set(relevant)
    for rank, item in enumerate(ranked, start=1):
        if item in wanted:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    wanted = set(relevant)
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in wanted)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(wanted))))
    return dcg / ideal if ideal else 0.0


def bootstrap_ci(
    values: Sequence[float], *, level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    alpha = (1 - level) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def quantile_interval(values: Sequence[float], q: float, *, level: float = 0.95) -> tuple[float, float] | None:
    """A distribution-free interval for the ``q`` quantile of what ``values`` sample: the order
    statistics between which the true quantile lies with probability ``level`` (the count of
    samples below it is Binomial(n, q); Hahn & Meeker, Statistical Intervals, 2nd ed., 5.2).
    None when the sample is too small for the interval to lie within it (a p95 needs 72 values)."""
    n = len(values)
    if n == 0:
        return None
    alpha = (1 - level) / 2
    lower = int(stats.binom.ppf(alpha, n, q))  # 1-based rank of the lower bound
    upper = int(stats.binom.ppf(1 - alpha, n, q)) + 1
    if lower < 1 or upper > n:
        return None
    ordered = sorted(values)
    return float(ordered[lower - 1]), float(ordered[upper - 1])


def mcnemar_exact(a_right: Sequence[bool], b_right: Sequence[bool]) -> dict[str, float]:
    """Exact McNemar test on paired outcomes: a two-sided binomial test on the discordant pairs."""
    if len(a_right) != len(b_right):
        raise ValueError("paired outcomes must have the same length")
    only_a = sum(1 for a, b in zip(a_right, b_right) if a and not b)
    only_b = sum(1 for a, b in zip(a_right, b_right) if b and not a)
    n = only_a + only_b
    p = 1.0 if n == 0 else float(stats.binomtest(only_a, n, 0.5, alternative="two-sided").pvalue)
    return {"only_a": only_a, "only_b": only_b, "discordant": n, "p_value": p}
