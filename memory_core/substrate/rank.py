"""How a view and a context rank what the worn lenses admit: priority × recency × tag match ×
value per token, each factor kept so that every item can say why it ranked where it did.

- **priority**: the highest weight a worn lens that admits the item gives its entity type
  (``preferences.priorities``, default 1), times the item's confidence;
- **recency**: ``0.5 ** (age / half-life)`` from the item's valid time, with the shortest
  half-life among the admitting lenses' preferences, and a floor so that old items still rank;
- **tag match**: ``(1 + matched) / (1 + wanted)`` where ``wanted`` are the pass's query terms and
  the lenses' preferred tags, and ``matched`` those the item holds (1 when nothing is wanted);
- **value per token**: ``min(1, 48 / tokens)``: an item up to 48 tokens long costs nothing,
  a longer one is worth proportionally less per token of the budget it takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Mapping

from .items import Item
from .lenses import Lens

REFERENCE_TOKENS = 48
RECENCY_FLOOR = 0.05
DEFAULT_HALF_LIFE_DAYS = 30.0


@dataclass(frozen=True, slots=True)
class Factors:
    priority: float
    recency: float
    tag_match: float
    value_per_token: float
    matched: tuple[str, ...]

    @property
    def score(self) -> float:
        return self.priority * self.recency * self.tag_match * self.value_per_token

    def to_dict(self) -> dict[str, object]:
        return {
            "priority": round(self.priority, 6),
            "recency": round(self.recency, 6),
            "tag_match": round(self.tag_match, 6),
            "value_per_token": round(self.value_per_token, 6),
            "score": round(self.score, 9),
            "matched": list(self.matched),
        }


def factors(
    item: Item,
    admitted_by: Iterable[Lens],
    wanted: frozenset[str],
    tokens: int,
    now: datetime,
) -> Factors:
    lenses = list(admitted_by)
    type_name = item.entity_type or item.plane
    weights = [lens.preferences.priorities.get(type_name, 1.0) for lens in lenses] or [1.0]
    priority = max(weights) * max(item.confidence, 0.0)
    half_lives = [lens.preferences.half_life_days for lens in lenses] or [DEFAULT_HALF_LIFE_DAYS]
    age_days = max((now - item.valid_at).total_seconds(), 0.0) / 86_400
    recency = max(RECENCY_FLOOR, 0.5 ** (age_days / min(half_lives)))
    preferred = frozenset(tag for lens in lenses for tag in lens.preferences.tags)
    want = wanted | preferred
    matched = tuple(sorted(want & item.terms))
    tag_match = (1 + len(matched)) / (1 + len(want)) if want else 1.0
    value_per_token = min(1.0, REFERENCE_TOKENS / max(tokens, 1))
    return Factors(priority, recency, tag_match, value_per_token, matched)


def ranked(
    items: Iterable[Item],
    admitted: Mapping[str, tuple[Lens, ...]],
    wanted: frozenset[str],
    tokens: Mapping[str, int],
    now: datetime,
) -> list[tuple[Item, Factors]]:
    """Items with their factors, best first; ties broken by ref, so a ranking is repeatable."""
    scored = [(item, factors(item, admitted[item.ref], wanted, tokens[item.ref], now)) for item in items]
    scored.sort(key=lambda pair: (-pair[1].score, pair[0].ref))
    return scored
