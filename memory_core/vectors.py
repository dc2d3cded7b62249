"""Vectors by fact id: one matrix handed on whole, its rows taken without copying when they can be.

Every embedder answers L2-normalised float32 rows, so a dot product is a cosine.
"""

from __future__ import annotations

from typing import Iterator, Mapping, Sequence

import numpy as np


def normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


class VectorRows(Mapping[str, np.ndarray]):
    """The rows of one matrix, named by fact id. A Mapping like any other, and ``take`` answers
    many rows in one copy: a batch hands its embedding matrix on without splitting it into a
    hundred thousand row objects and stacking them again."""

    def __init__(self, fact_ids: Sequence[str], matrix: np.ndarray) -> None:
        if len(fact_ids) != len(matrix):
            raise ValueError(f"{len(fact_ids)} fact ids for {len(matrix)} rows")
        self.matrix = matrix
        self._row = dict(zip(fact_ids, range(len(fact_ids))))

    def __getitem__(self, fact_id: str) -> np.ndarray:
        return self.matrix[self._row[fact_id]]

    def __contains__(self, fact_id: object) -> bool:
        return fact_id in self._row

    def keys(self):  # the dict's own view: membership tests in C, not through __contains__
        return self._row.keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def __len__(self) -> int:
        return len(self._row)

    def take(self, fact_ids: Sequence[str]) -> np.ndarray:
        """The rows of ``fact_ids``; the matrix itself (no copy) when they are all of its rows in
        order: a fresh 100 MB array costs a quarter of a second in page faults alone."""
        rows = np.fromiter(map(self._row.__getitem__, fact_ids), dtype=np.int64, count=len(fact_ids))
        if len(rows) == len(self.matrix) and np.array_equal(rows, np.arange(len(rows))):
            return self.matrix
        return self.matrix[rows]


def stack_rows(vectors: Mapping[str, np.ndarray], fact_ids: Sequence[str], dim: int) -> np.ndarray:
    """The vectors of ``fact_ids`` as one (n, dim) float32 matrix (read only: see ``take``)."""
    if not fact_ids:
        return np.zeros((0, dim), dtype=np.float32)
    if isinstance(vectors, VectorRows):
        return np.asarray(vectors.take(fact_ids), dtype=np.float32)
    return np.stack([np.asarray(vectors[f], dtype=np.float32) for f in fact_ids])


def gather_rows(maps: Sequence[Mapping[str, np.ndarray]], fact_ids: Sequence[str], dim: int) -> np.ndarray:
    """The vectors of ``fact_ids`` from several mappings, a later mapping winning over an earlier
    one, as one (n, dim) float32 matrix (not to be written to: it may be a mapping's own). Every
    id must be in some mapping (KeyError)."""
    if maps and all(map(maps[-1].keys().__contains__, fact_ids)):
        return stack_rows(maps[-1], fact_ids, dim)
    out = np.empty((len(fact_ids), dim), dtype=np.float32)
    left = list(range(len(fact_ids)))
    for vectors in reversed(maps):
        held = vectors.keys()
        here = [i for i in left if fact_ids[i] in held]
        if not here:
            continue
        out[here] = stack_rows(vectors, [fact_ids[i] for i in here], dim)
        if len(here) == len(left):
            return out
        taken = set(here)
        left = [i for i in left if i not in taken]
    if left:
        raise KeyError(fact_ids[left[0]])
    return out
