"""Reciprocal rank fusion. Pure; ties broken by id so a result is repeatable."""

from __future__ import annotations

from typing import Mapping, Sequence


def rrf(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int = 60) -> list[tuple[str, float]]:
    """Fuse ranked id lists: score(id) = sum over legs of weight / (k + rank), rank from 1.

    The fused score is a rank statistic, not a similarity: never threshold an abstain verdict on it.
    """
    scores: dict[str, float] = {}
    for leg, ids in rankings.items():
        w = weights.get(leg, 1.0)
        for rank, item in enumerate(ids, start=1):
            scores[item] = scores.get(item, 0.0) + w / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
