"""The ports to time, ids and models: the clock and the id factory (declared with the domain,
which takes them too), the embedder, the LLM."""

from __future__ import annotations

from typing import Any, Protocol, Sequence

import numpy as np

from ..clock import Clock, IdFactory
from ..llm import LLMAnswer

__all__ = ["LLM", "Clock", "Embedder", "IdFactory"]


class Embedder(Protocol):
    name: str  # recorded with the index; a different name or dimension is refused at query time
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised (a zero row for empty text)."""
        ...

    # An embedder may also offer ``embed_pairs(pairs) -> (firsts, seconds)``, answering exactly
    # what ``embed`` answers for each side of (index text, value text) pairs, only faster.


class LLM(Protocol):
    """A model that answers with JSON matching ``schema`` (a JSON Schema object)."""

    name: str

    def complete_json(
        self,
        messages: Sequence[dict[str, str]],
        schema: dict[str, Any],
        *,
        schema_name: str,
        max_tokens: int = 1024,
        accept: dict[str, Any] | None = None,
    ) -> LLMAnswer: ...
