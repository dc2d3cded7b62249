"""Named search recipes: frozen data, so a result can name exactly how it was produced."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from ..errors import InvalidInput

LEGS = ("vector", "bm25")


@dataclass(frozen=True, slots=True)
class Recipe:
    name: str
    legs: tuple[str, ...]
    weights: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    rrf_k: int = 60
    pool: int = 50             # candidates each leg returns before fusion (at least k)
    min_cosine: float = 0.30   # a vector hit below this is weak (for the below_threshold verdict)
    min_bm25: float = 0.0      # a lexical hit must score above this to count as a match

    def weight(self, leg: str) -> float:
        return float(self.weights.get(leg, 1.0))

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "legs": list(self.legs), "weights": {l: self.weight(l) for l in self.legs},
                "rrf_k": self.rrf_k, "pool": self.pool, "min_cosine": self.min_cosine, "min_bm25": self.min_bm25}


def _recipe(name: str, legs: tuple[str, ...], **weights: float) -> Recipe:
    return Recipe(name, legs, MappingProxyType(dict(weights)))


RECIPES: Mapping[str, Recipe] = MappingProxyType({
    r.name: r for r in (
        _recipe("hybrid_rrf", ("vector", "bm25"), vector=1.0, bm25=1.0),
        _recipe("hybrid_lexical", ("vector", "bm25"), vector=0.5, bm25=1.0),
        _recipe("vector_only", ("vector",)),
        _recipe("bm25_only", ("bm25",)),
    )
})


def get_recipe(name: str) -> Recipe:
    try:
        return RECIPES[name]
    except KeyError:
        raise InvalidInput(f"unknown recipe {name!r}; expected one of: {', '.join(RECIPES)}", recipe=name) from None
