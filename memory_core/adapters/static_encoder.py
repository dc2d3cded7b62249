"""model2vec's static encoding, computed from whitespace chunks tokenized once.

A static embedding is the mean of the text's token vectors (unknown tokens dropped). The BERT
tokenizer behind it never lets a token cross whitespace and normalises character by character,
so a text's tokens are the concatenation of its whitespace chunks' tokens. Each distinct chunk is
tokenized once and its ids kept; a batch then needs one dictionary lookup per chunk and a
vectorised sum, instead of a tokenizer pass and a Python mean per text. Bulk writes embed the
same few thousand words again and again, which is where the time went.

The rows are ``StaticModel.encode``'s, normalised, except that the sum stays in float32 where
model2vec rounds the mean to its float16 table type (the two agree to a cosine above 0.9999).
Texts the shortcut cannot vouch for (long enough to be truncated, or holding the separators
Python splits on and the tokenizer deletes) go through ``StaticModel.encode`` itself.
"""

from __future__ import annotations

import re
import threading
from itertools import chain
from typing import Any, Sequence

import numpy as np

from ..vectors import normalise

# Python's str.split() splits on these; the BERT normaliser removes them as control characters.
_SPLIT_DISAGREES = re.compile("[\x0b\x0c\x1c-\x1f\x85]")
_SMALL_BATCH = 64  # pairs below which encode_pairs encodes both texts in one plain call
_BATCH_TEXTS = 16_384  # texts summed at once: bounds the float32 scratch (16 MB at 256-d)


class ChunkCachedEncoder:
    """Encodes like ``model.encode(texts)`` for a model2vec ``StaticModel`` without weights or a
    token mapping (a distilled model has neither)."""

    def __init__(self, model: Any, *, cache_limit: int = 200_000) -> None:
        if getattr(model, "token_mapping", None) is not None or getattr(model, "weights", None) is not None:
            raise ValueError("the chunk cache only reproduces plain static models (no weights, no token mapping)")
        self._model = model
        self._tokenizer = model.tokenizer
        self._table = np.asarray(model.embedding, dtype=np.float32).copy()
        if model.unk_token_id is not None:
            self._table[model.unk_token_id] = 0.0  # model2vec drops unknown tokens: they add nothing
        self._max_tokens = model.max_length
        self._max_chars = None if model.max_length is None else model.max_length * model.median_token_length
        self._ids: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()
        self._cache_limit = cache_limit
        self.dim = self._table.shape[1]

    def _learn(self, chunks: set[str]) -> None:
        words = sorted(chunks)
        encodings = self._tokenizer.encode_batch_fast(words, add_special_tokens=False)
        self._ids.update(zip(words, (tuple(e.ids) for e in encodings)))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32 unit rows (a zero row for a text without known tokens)."""
        texts = list(texts)
        counts, _, slow = self._token_counts(texts)
        return self._rows(counts, slow, texts)

    def encode_pairs(self, pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
        """The rows of both texts of each pair. Where the first text is some words, whitespace,
        and then the second (an index text: a key's words, then the value), the second's tokens
        are reused for the first: only the leading words are looked up again."""
        firsts = [a for a, _ in pairs]
        seconds = [b for _, b in pairs]
        if len(pairs) <= _SMALL_BATCH:  # one call is cheaper than the sharing's sparse bookkeeping
            rows = self.encode(firsts + seconds)
            return rows[: len(pairs)], rows[len(pairs) :]
        from scipy.sparse import diags

        second_counts, second_lengths, second_slow = self._token_counts(seconds)
        cuts = [len(a) - len(b) for a, b in pairs]
        # a = prefix + b, the prefix ending in whitespace: a's chunks are the prefix's, then b's
        reused = np.fromiter(
            (
                (cut == 0 and a == b) or (cut > 0 and a[cut - 1].isspace() and a.endswith(b))
                for cut, (a, b) in zip(cuts, pairs)
            ),
            dtype=bool,
            count=len(pairs),
        )
        heads = [a[:cut] if keep else a for a, cut, keep in zip(firsts, cuts, reused)]
        head_counts, head_lengths, head_slow = self._token_counts(heads)
        first_counts = (head_counts + diags(reused.astype(np.float32)) @ second_counts).tocsr()
        first_slow = head_slow | (reused & second_slow)
        if self._max_chars is not None:
            first_slow |= np.fromiter(map(len, firsts), dtype=np.int64, count=len(firsts)) > self._max_chars
        if self._max_tokens is not None:
            first_slow |= head_lengths + np.where(reused, second_lengths, 0) > self._max_tokens
        second_rows = self._rows(second_counts, second_slow, seconds)
        # A key without words (an id, an import digest) makes the index text the value itself.
        differ = np.nonzero(~(reused & (np.asarray(cuts) == 0)))[0]
        first_rows = second_rows.copy()
        if len(differ):
            first_rows[differ] = self._rows(first_counts[differ], first_slow[differ], [firsts[i] for i in differ])
        return first_rows, second_rows

    def _token_counts(self, texts: list[str]) -> tuple[Any, np.ndarray, np.ndarray]:
        """A sparse (texts x vocabulary) matrix counting each text's tokens, each text's token
        count, and whether only the model itself can encode it (too long, so truncated; or a
        separator the shortcut splits differently)."""
        from scipy.sparse import csr_matrix

        slow = np.fromiter(
            (
                (self._max_chars is not None and len(t) > self._max_chars) or _SPLIT_DISAGREES.search(t) is not None
                for t in texts
            ),
            dtype=bool,
            count=len(texts),
        )
        splits = [[] if skip else t.split() for t, skip in zip(texts, slow)]
        flat = list(chain.from_iterable(splits))
        distinct = set(flat)
        with self._lock:  # a search and a write may embed at once: the cache must not clear under either
            unseen = distinct.difference(self._ids)
            if len(self._ids) + len(unseen) > self._cache_limit:  # start over rather than grow without bound
                self._ids.clear()
                unseen = distinct
            if unseen:
                self._learn(unseen)
            per_chunk = list(map(self._ids.__getitem__, flat))
        chunk_tokens = np.fromiter(map(len, per_chunk), dtype=np.int64, count=len(per_chunk))
        tokens = np.fromiter(chain.from_iterable(per_chunk), dtype=np.int64, count=int(chunk_tokens.sum()))
        chunk_ends = np.concatenate(([0], np.cumsum(chunk_tokens)))
        chunks_per_text = np.fromiter(map(len, splits), dtype=np.int64, count=len(splits))
        bounds = chunk_ends[np.concatenate(([0], np.cumsum(chunks_per_text)))]
        lengths = np.diff(bounds)
        if self._max_tokens is not None:  # the tokenizer would truncate these
            slow |= lengths > self._max_tokens
        counts = csr_matrix(
            (np.ones(len(tokens), dtype=np.float32), tokens, bounds), shape=(len(texts), len(self._table))
        )
        return counts, lengths, slow

    def _rows(self, counts: Any, slow: np.ndarray, texts: list[str]) -> np.ndarray:
        """Summed token vectors scaled to unit length (the mean's direction), then the rows only
        the model can encode, from the model."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for begin in range(0, len(texts), _BATCH_TEXTS):
            block = out[begin : begin + _BATCH_TEXTS]
            block[:] = counts[begin : begin + _BATCH_TEXTS] @ self._table
            norms = np.sqrt(np.einsum("ij,ij->i", block, block))[:, None]
            np.divide(block, norms, out=block, where=norms > 0)
        rows = np.nonzero(slow)[0]
        if len(rows):
            out[rows] = normalise(
                self._model.encode([texts[i] for i in rows], show_progress_bar=False, use_multiprocessing=False)
            )
        return out
