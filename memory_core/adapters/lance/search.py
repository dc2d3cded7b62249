"""The ``SearchIndex`` over Lance: a search's legs and its completion, on one version of the table."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...retrieval.filters import LegFilter
from .filters import render
from .index import NPROBES, LanceIndex
from .read import IndexSnapshot


class LanceReader:
    """``IndexReader``: one snapshot, read by both legs and the take that completes the hits."""

    def __init__(self, index: LanceIndex, snapshot: IndexSnapshot, *, nprobes: int = NPROBES) -> None:
        self._index = index
        self._snapshot = snapshot
        self._nprobes = nprobes
        self._rendered: dict[tuple[LegFilter, bool], str] = {}

    def _where(self, where: LegFilter, full: bool) -> str:
        found = self._rendered.get((where, full))
        if found is None:
            found = self._rendered[(where, full)] = render(where, full=full)
        return found

    def vector_leg(
        self, vector: np.ndarray, where: LegFilter, limit: int, columns: Sequence[str], *, full: bool
    ) -> list[dict[str, Any]]:
        return self._snapshot.vector_search(vector, self._where(where, full), limit, columns, nprobes=self._nprobes)

    def text_leg(
        self, text: str, where: LegFilter, limit: int, columns: Sequence[str], *, full: bool
    ) -> list[dict[str, Any]]:
        return self._snapshot.fts_search(text, self._where(where, full), limit, columns)

    def complete(self, rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
        self._index.hydrate(rows, columns, read_at=self._snapshot)


class LanceSearch:
    """``SearchIndex``: each reader reads the latest version of the table (another process's
    writes included)."""

    def __init__(self, index: LanceIndex) -> None:
        self._index = index

    def reader(self) -> LanceReader | None:
        snapshot = self._index.snapshot()
        return None if snapshot is None else LanceReader(self._index, snapshot)
