"""The index with long values' chunks beside it (``value_chunks``), and the search that folds
the chunks it matches onto their rows (``retrieval.value_chunks``).

``ChunkedLanceIndex`` is a ``LanceIndex`` whose every write of rows also re-chunks those rows'
facts, whose drops drop their chunks, whose rebuild rebuilds them and whose purge purges them:
whichever path writes the index (a flush, a repair, a fill, a reindex), the chunks follow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from ...ports import Embedder
from ...ports.chunks import Chunker
from ...retrieval.filters import LegFilter
from ...retrieval.value_chunks import ValueChunker, fold_value_chunks
from .filters import namespace_of
from .index import LanceIndex
from .search import LanceReader, LanceSearch
from .value_chunks import ValueChunkTable
from .writer import one_writer


class ChunkedLanceIndex(LanceIndex):
    def __init__(self, folder: Path, embedder: Embedder, chunker: Chunker | None = None, **options: Any) -> None:
        super().__init__(folder, embedder.name, embedder.dim, **options)
        self.chunks = ValueChunkTable(self.folder, embedder, chunker or ValueChunker())

    @one_writer
    def upsert(self, rows: pa.Table | Sequence[dict[str, Any]]) -> None:
        data = self._data(rows)
        super().upsert(data)
        self.chunks.project(data)

    @one_writer
    def add(self, rows: pa.Table | Sequence[dict[str, Any]]) -> None:
        data = self._data(rows)
        first = self.table is None  # the base class hands a first write to ``upsert``, which chunks it
        super().add(data)
        if not first:
            self.chunks.project(data)

    @one_writer
    def append_states(self, rows: pa.Table | None, served: dict[str, str | None]) -> None:
        super().append_states(rows, served)  # ``add`` chunks the rows
        self.chunks.drop([fact_id for fact_id, version in served.items() if version is None])

    @one_writer
    def delete_facts(self, fact_ids: Sequence[str]) -> None:
        super().delete_facts(fact_ids)
        self.chunks.drop(fact_ids)

    @one_writer
    def replace_all(self, data: pa.Table) -> None:
        super().replace_all(data)
        self.chunks.rebuild(data)

    @one_writer
    def purge_history(self) -> None:
        super().purge_history()
        self.chunks.purge_history()


class ChunkedReader(LanceReader):
    """A reader whose vector leg also searches the chunks and folds them onto their rows."""

    def __init__(self, index: ChunkedLanceIndex, *args: Any, **kwargs: Any) -> None:
        super().__init__(index, *args, **kwargs)
        self._chunks = index.chunks

    def vector_leg(
        self, vector: np.ndarray, where: LegFilter, limit: int, columns: Sequence[str], *, full: bool
    ) -> list[dict[str, Any]]:
        wanted = list(columns) if "version_id" in columns else [*columns, "version_id"]
        rows = super().vector_leg(vector, where, limit, wanted, full=full)
        hits = self._chunks.search(vector, namespace_of(where), limit)
        if not hits:
            return rows
        have = {r["fact_id"] for r in rows}
        others = sorted({h["fact_id"] for h in hits} - have)
        parents = {r["fact_id"]: r for r in self.facts_leg(others, where, wanted)} if others else {}
        return fold_value_chunks(rows, hits, parents, limit)


class ChunkedLanceSearch(LanceSearch):
    def __init__(self, index: ChunkedLanceIndex) -> None:
        super().__init__(index)
        self._chunked = index

    def reader(self) -> ChunkedReader | None:
        snapshot, served = self._chunked.served()
        return None if snapshot is None else ChunkedReader(self._chunked, snapshot, served)
