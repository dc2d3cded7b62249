"""The vectors a peer check compares a candidate with, kept in process per namespace.

Loaded once per namespace from the retrieval index, then kept current by the write path itself
(this process is the only writer of the home), so a point write computes its peers' cosines with
one matrix product instead of a round trip to the index.

Many threads share one cache: a namespace loaded by one while another commits a write to it must
not miss that write's vectors, so every call runs under one lock. The session passes the store's
lock (a commit puts its vectors while holding it, and a load reads the store under it): a load
then sees a commit whole or not at all, and a put waits for the load it would otherwise miss.

Embedding a namespace's values takes about a second per 6,000 facts, too long to hold the
store's lock for (every other write would wait): a writer calls ``warm`` first, without the
lock. It loads the namespace outside the lock and keeps the vectors that commits put meanwhile;
a second writer to the same namespace waits for that load instead of starting its own, and a
``clear`` meanwhile (a redaction) discards it.
"""

from __future__ import annotations

import threading
from typing import Callable, ContextManager, Mapping

import numpy as np

from ..identity import Namespace


class _Block:
    def __init__(self, dim: int, capacity: int = 256) -> None:
        self.matrix = np.zeros((capacity, dim), dtype=np.float32)
        self.row_of: dict[str, int] = {}
        self.ids: list[str] = []
        self.keys: list[str] = []

    def put_many(self, fact_ids: list[str], keys: list[str], vectors: np.ndarray) -> None:
        """Add or replace facts' vectors: one copy of the new rows, not one per vector."""
        rows = [self.row_of.get(fact_id) for fact_id in fact_ids]
        known = [i for i, row in enumerate(rows) if row is not None]
        fresh = [i for i, row in enumerate(rows) if row is None]
        if known:
            self.matrix[[rows[i] for i in known]] = vectors[known]
        start, needed = len(self.ids), len(self.ids) + len(fresh)
        if needed > len(self.matrix):
            grown = np.zeros((max(needed, 2 * len(self.matrix)), self.matrix.shape[1]), dtype=np.float32)
            grown[:start] = self.matrix[:start]
            self.matrix = grown
        self.matrix[start:needed] = vectors if len(fresh) == len(vectors) else vectors[fresh]
        new_ids = [fact_ids[i] for i in fresh]
        self.row_of.update(zip(new_ids, range(start, needed)))
        self.ids.extend(new_ids)
        self.keys.extend(keys[i] for i in fresh)


def _put(block: _Block, vectors: Mapping[str, tuple[str, np.ndarray]]) -> None:
    if vectors:
        ids = list(vectors)
        block.put_many(ids, [vectors[f][0] for f in ids], np.stack([vectors[f][1] for f in ids]))


def _filled(dim: int, *vectors: Mapping[str, tuple[str, np.ndarray]]) -> _Block:
    """A namespace's block from what was loaded (and what was put meanwhile: later wins)."""
    block = _Block(dim)
    for found in vectors:
        _put(block, found)
    return block


class PeerVectors:
    def __init__(
        self,
        dim: int,
        load: Callable[[Namespace], Mapping[str, tuple[str, np.ndarray]]],
        *,
        locked: Callable[[], ContextManager[object]] | None = None,
    ) -> None:
        self.dim = dim
        self._load = load
        self._blocks: dict[Namespace, _Block] = {}
        # Namespaces ``warm`` is loading outside the lock: the vectors put meanwhile, and when done.
        self._loading: dict[Namespace, tuple[dict[str, tuple[str, np.ndarray]], threading.Event]] = {}
        self._generation = 0  # moved by ``clear``: a load begun before it is not kept
        if locked is None:
            own = threading.RLock()
            locked = lambda: own  # noqa: E731
        self._locked = locked

    def _block(self, namespace: Namespace) -> _Block:
        block = self._blocks.get(namespace)
        if block is None:
            block = self._blocks[namespace] = _filled(self.dim, self._load(namespace))
        return block

    def warm(self, namespace: Namespace) -> None:
        """Load ``namespace`` without holding the lock while its values are embedded (see the
        module doc); at once when it is loaded already. Call it without holding the lock."""
        if namespace in self._blocks:
            return
        with self._locked():
            if namespace in self._blocks:
                return
            loading = self._loading.get(namespace)
            if loading is None:
                loading = self._loading[namespace] = ({}, threading.Event())
                mine, generation = True, self._generation
            else:
                mine = False
        puts, done = loading
        if not mine:  # another writer is loading it: wait for that, not for a load of our own
            done.wait()
            return
        loaded = None
        try:
            loaded = self._load(namespace)
        finally:  # installed and no longer loading in one hold: no put falls between
            with self._locked():
                self._loading.pop(namespace, None)
                if loaded is not None and namespace not in self._blocks and generation == self._generation:
                    self._blocks[namespace] = _filled(self.dim, loaded, puts)  # puts: newer than the load
                done.set()

    def put(self, namespace: Namespace, vectors: Mapping[str, tuple[str, np.ndarray]]) -> None:
        """Record the vectors of facts just written (for namespaces loaded, or being loaded)."""
        with self._locked():
            block = self._blocks.get(namespace)
            if block is not None:
                _put(block, vectors)
            elif namespace in self._loading:
                self._loading[namespace][0].update(vectors)

    def put_rows(self, namespace: Namespace, fact_ids: list[str], keys: list[str], matrix: np.ndarray) -> None:
        """``put`` for a batch whose vectors are already one matrix, row i for fact_ids[i]."""
        with self._locked():
            block = self._blocks.get(namespace)
            if block is not None and fact_ids:
                block.put_many(fact_ids, keys, matrix)
            elif namespace in self._loading and fact_ids:
                self._loading[namespace][0].update(zip(fact_ids, zip(keys, matrix)))

    def nearest(
        self, namespace: Namespace, vectors: np.ndarray, floor: float, limit: int = 64
    ) -> list[list[tuple[str, str, float]]]:
        """For each query vector, (fact_id, key, cosine) of the facts at ``floor`` or more, nearest
        first. The caller decides which of them are eligible peers."""
        with self._locked():
            block = self._block(namespace)
            # Rows only append (growth copies to a new matrix) or take a newer vector: these n stay valid.
            n = len(block.ids)
            matrix, ids, keys = block.matrix[:n], block.ids, block.keys
        if not n:
            return [[] for _ in range(len(vectors))]
        scores = np.asarray(vectors, dtype=np.float32) @ matrix.T
        out = []
        for line in np.atleast_2d(scores):
            hits = np.nonzero(line >= floor)[0]
            ordered = hits[np.argsort(-line[hits], kind="stable")][:limit]
            out.append([(ids[i], keys[i], float(line[i])) for i in ordered])
        return out

    def forget(self, namespace: Namespace) -> None:
        """Drop one namespace (written by another process): loaded again when next needed."""
        with self._locked():
            self._blocks.pop(namespace, None)

    def clear(self) -> None:
        with self._locked():
            self._blocks.clear()
            self._generation += 1
