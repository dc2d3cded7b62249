"""The ``SearchIndex`` over Lance: a search's legs and its completion, on one version of the table."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...retrieval.filters import LegFilter
from .filters import fact_ids_in, namespace_of, render
from .held import HeldFilter
from .index import NPROBES, LanceIndex
from .read import IndexSnapshot
from .served import NOTHING_HIDDEN, Served


class LanceReader:
    """``IndexReader``: one snapshot, read by both legs and the take that completes the hits."""

    def __init__(
        self,
        index: LanceIndex,
        snapshot: IndexSnapshot,
        served: Served | None = None,
        *,
        nprobes: int = NPROBES,
    ) -> None:
        self._index = index
        self._snapshot = snapshot
        self._served = served or NOTHING_HIDDEN
        self._nprobes = nprobes
        self._rendered: dict[tuple[LegFilter, bool], str] = {}

    def _leg(
        self, run: Callable[[int, Sequence[str]], list[dict[str, Any]]], limit: int, columns: Sequence[str]
    ) -> list[dict[str, Any]]:
        """A leg's rows without those no longer served: asked for as many more as the table may
        hide (``Served.hidden``), so ``limit`` served rows come back whenever the version has them
        (and a short answer still means there are no more)."""
        served = self._served
        if not served.hidden:
            return run(limit, columns)
        rows = run(limit + served.hidden, [*columns, "version_id"] if "version_id" not in columns else columns)
        return [r for r in rows if served.admits(r)][:limit]

    def _where(self, where: LegFilter, full: bool) -> str:
        found = self._rendered.get((where, full))
        if found is None:
            found = self._rendered[(where, full)] = render(where, full=full)
        return found

    def vector_leg(
        self, vector: np.ndarray, where: LegFilter, limit: int, columns: Sequence[str], *, full: bool
    ) -> list[dict[str, Any]]:
        rendered, nprobes, snapshot = self._where(where, full), self._nprobes, self._snapshot
        held = None if full else HeldFilter(namespace_of(where), tuple(sorted(k.value for k in where.kinds)))

        def search(n: int, cols: Sequence[str]) -> list[dict[str, Any]]:
            found = None if held is None else snapshot.nearest_held(vector, held, n, cols)
            return snapshot.vector_search(vector, rendered, n, cols, nprobes=nprobes) if found is None else found

        return self._leg(search, limit, columns)

    def text_leg(
        self, text: str, where: LegFilter, limit: int, columns: Sequence[str], *, full: bool
    ) -> list[dict[str, Any]]:
        rendered = self._where(where, full)
        return self._leg(lambda n, cols: self._snapshot.fts_search(text, rendered, n, cols), limit, columns)

    def facts_leg(self, fact_ids: Sequence[str], where: LegFilter, columns: Sequence[str]) -> list[dict[str, Any]]:
        if not fact_ids:
            return []
        wanted = [*columns, "version_id"] if "version_id" not in columns else list(columns)
        rows = self._snapshot.rows_where(
            f"{self._where(where, False)} AND {fact_ids_in(fact_ids)}", wanted, with_row_id=True
        )
        return [r for r in rows if self._served.admits(r)]

    def complete(self, rows: Sequence[dict[str, Any]], columns: Sequence[str], *, latest: bool = False) -> None:
        self._index.hydrate(rows, columns, read_at=None if latest else self._snapshot)


class LanceSearch:
    """``SearchIndex``: each reader reads the latest version of the table (another process's
    writes included)."""

    def __init__(self, index: LanceIndex) -> None:
        self._index = index

    def reader(self) -> LanceReader | None:
        snapshot, served = self._index.served()
        return None if snapshot is None else LanceReader(self._index, snapshot, served)
