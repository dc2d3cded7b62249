"""A batch's vectors: one embedder call for the entries the peer check judges; every other
embedded entry is embedded on a worker thread, the fresh tail in chunks while the batch is still
being read, the rest while the rows go into the store.

The worker's calls overlap the reading and the transaction's insert (the tokenizer, the matrix
products and DuckDB release the GIL); the transaction waits for them before committing, so a
failed call still writes nothing.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..model import Kind
from ..texts import texts_to_embed
from ..vectors import VectorRows
from ..write import phases
from .bulk_tail import Tail
from .point import embed_pairs

if TYPE_CHECKING:
    from .core import Session

_REST_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memcore-bulk-embed")


class TailVectors:
    """The tail's vectors, embedded on the worker chunk by chunk while the batch is still being
    read (the tokenizer and the matrix products release the GIL, so part of that work hides
    behind the reading), into one matrix each for index and value vectors."""

    CHUNK = 8192

    def __init__(self, session: Session, capacity: int, *, enabled: bool = True) -> None:
        self.session, self.capacity = session, capacity
        self.enabled = enabled and session.embedder is not None
        self._waiting: list[Any] = []  # requests not yet handed to the worker
        self._handed = 0
        self._futures: list[Future] = []
        self.texts: list[str] = []  # the index texts, in order (the tail's lexical rows reuse them)
        self._index: np.ndarray | None = None
        self._value: np.ndarray | None = None

    def add(self, request: Any) -> None:
        if self.enabled:
            self._waiting.append(request)
            if len(self._waiting) >= self.CHUNK:
                self.hand_over()

    def hand_over(self) -> None:
        if self._waiting:
            chunk, self._waiting = self._waiting, []
            self._futures.append(_REST_POOL.submit(self._embed, chunk, self._handed))
            self._handed += len(chunk)

    def _embed(self, chunk: list[Any], start: int) -> None:
        """On the worker: one thread, so chunks land in the order they were handed over."""
        pairs = [texts_to_embed(r.key, r.value) for r in chunk]
        index, value = _embed_pairs(self.session, pairs)
        if self._index is None:
            self._index = np.empty((self.capacity, index.shape[1]), dtype=np.float32)
            self._value = np.empty((self.capacity, index.shape[1]), dtype=np.float32)
        self._index[start : start + len(chunk)] = index
        self._value[start : start + len(chunk)] = value
        self.texts.extend(p[0] for p in pairs)

    def result(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Every chunk's vectors (raises what the worker raised)."""
        self.hand_over()
        for future in self._futures:
            future.result()
        if self._index is None:
            empty = _embed_pairs(self.session, [])
            return [], *empty
        return self.texts, self._index[: self._handed], self._value[: self._handed]


class BatchVectors:
    """``prepared``: the entries kept as row states (``SetState`` or the bulk's fresh form);
    ``tail``: the entries kept as columns."""

    def __init__(
        self,
        session: Session,
        prepared: Sequence[Any],
        judged: list[int],
        rest: list[int],
        unjudged: int,
        tail: TailVectors,
    ) -> None:
        self.session, self.prepared, self.tail = session, prepared, tail
        self.judged, self.rest, self.unjudged = judged, rest, unjudged
        self.first = _embed_entries(session, prepared, judged)
        self.second: tuple[np.ndarray, np.ndarray] | None = None
        # The tail's index texts (its lexical rows reuse them), index vectors, value vectors.
        self.of_tail: tuple[list[str], np.ndarray, np.ndarray] | None = None
        self._future: Future | None = None
        self._tail_rows: Future | None = None

    @classmethod
    def plan(
        cls, session: Session, prepared: Sequence[Any], cap: int, tail: Tail, tail_vectors: TailVectors
    ) -> "BatchVectors":
        """The first ``cap`` entries needing a peer check are judged (when the home has an
        embedder and peers); the tail holds none that would be."""
        wanted = [i for i, s in enumerate(prepared) if phases.embedded(s)] if session.embedder is not None else []
        needing = [i for i, s in enumerate(prepared) if phases.needs_peer_check(s)]
        judged = needing[:cap] if wanted and session.peers is not None else []
        taken = set(judged)
        return cls(
            session,
            prepared,
            judged,
            [i for i in wanted if i not in taken],
            len(needing) - len(judged) + tail.needing_check,
            tail_vectors,
        )

    def embed_rest(self, tail_rows: Callable[[list[str], np.ndarray], Any] | None = None) -> None:
        """Hand the rest to the worker; then, if given, ``tail_rows(index texts, index vectors)``
        builds the tail's index rows there too, beside the insert."""
        if self.session.embedder is not None and self._future is None:
            self.tail.hand_over()
            self._future = _REST_POOL.submit(_embed_entries, self.session, self.prepared, self.rest)
            if tail_rows is not None and self.tail.enabled:
                # One worker runs its jobs in order: the tail's chunks are done when this starts.
                self._tail_rows = _REST_POOL.submit(lambda: tail_rows(*self.tail.result()[:2]))

    def tail_rows(self) -> Any:
        """What ``tail_rows`` built (raises what it raised)."""
        return self._tail_rows.result()

    def wait(self) -> None:
        """Collect the worker's calls (start them first if they were not); raises what they raised."""
        if self.session.embedder is not None and self.second is None:
            self.embed_rest()
            self.second = self._future.result()
            self.of_tail = self.tail.result()

    def landed(self, judged: Sequence[Any]) -> tuple[VectorRows | dict, VectorRows | dict]:
        """The index and peer vectors of the row-state entries whose value landed, by the fact
        id it landed as: rows of the batch's matrices, taken in one copy each."""
        if self.session.embedder is None:
            return {}, {}
        self.wait()
        parts = [(self.judged, self.first), (self.rest, self.second)]
        ids: list[str] = []
        fact_ids: list[str] = []
        index_parts, value_parts = [], []
        for entries, (index, value) in parts:
            landed = [n for n, i in enumerate(entries) if judged[i].rows]
            facts = [n for n in landed if judged[entries[n]].rows[-1].kind is Kind.FACT]
            ids.extend(judged[entries[n]].rows[-1].fact_id for n in landed)
            fact_ids.extend(judged[entries[n]].rows[-1].fact_id for n in facts)
            index_parts.append(rows_of(index, landed))
            value_parts.append(rows_of(value, facts))
        return VectorRows(ids, _joined(index_parts)), VectorRows(fact_ids, _joined(value_parts))


# Each fresh copy of a batch's matrix (100k x 256 float32) costs up to a quarter of a second in
# page faults on this project's machine: rows are copied only when some are left out.
def rows_of(matrix: np.ndarray, rows: list[int]) -> np.ndarray:
    return matrix if len(rows) == len(matrix) else matrix[rows]


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    kept = [p for p in parts if len(p)]
    return kept[0] if len(kept) == 1 else np.concatenate(parts)


def _embed_entries(session: Session, prepared: Sequence[Any], entries: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(index vectors, value vectors) of these entries, in one embedder call."""
    return _embed_pairs(session, [texts_to_embed(prepared[i].request.key, prepared[i].request.value) for i in entries])


def _embed_pairs(session: Session, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    if not pairs or session.embedder is None:
        empty = np.zeros((0, session.embedder.dim if session.embedder is not None else 0), dtype=np.float32)
        return empty, empty
    return embed_pairs(session.embedder, pairs)
