"""The ports to time, ids and models: the clock, the id factory, the embedder, the LLM."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from ..llm import LLMAnswer


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, timezone-aware UTC."""
        ...


IdFactory = Callable[[], str]


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
