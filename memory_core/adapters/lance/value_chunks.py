"""The chunks of long values: a second Lance table beside the index (``retrieval.value_chunks``).

A chunk row names its fact and the version it was cut from, its place (``chunk`` of ``chunks``),
its text and its vector. The table is a projection of the index's own rows: whenever the index
writes rows of facts, the facts' old chunks are deleted and the long values among the rows are
chunked again; a fact the index drops loses its chunks; a rebuild rebuilds them; a redaction's
purge folds this table's history away too.

Fail-open: chunking, embedding or writing chunks never fails the index write it follows, nor the
primary write before that. A failure is logged and counted (``failures``); the fact is still found
by its own row, and a search checks each chunk against its row's served version, so a chunk left
behind by a failed delete never answers.
"""

from __future__ import annotations

import json
import logging
import threading
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any, Sequence

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...model import VISIBLE_STATUSES
from ...ports import Embedder
from ...ports.chunks import Chunker
from ...retrieval.value_chunks import ValueChunk
from ...texts import index_text, value_text
from .filters import fact_ids_in, sql_str

log = logging.getLogger(__name__)
TABLE = "memory_value_chunks"
_NEW_TABLE = {"new_table_data_storage_version": "2.0"}


def chunk_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            ("chunk_id", pa.string()),
            ("fact_id", pa.string()),
            ("version_id", pa.string()),
            ("namespace", pa.string()),
            ("chunk", pa.int64()),
            ("chunks", pa.int64()),
            ("start", pa.int64()),
            ("text", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


class ValueChunkTable:
    """The chunk table of one index folder, written under the index's writer lock."""

    def __init__(self, folder: Path, embedder: Embedder, chunker: Chunker) -> None:
        self.folder = Path(folder)
        self.embedder = embedder
        self.chunker = chunker
        self.dim = embedder.dim
        self._schema = chunk_schema(self.dim)
        self._db = lancedb.connect(str(self.folder), read_consistency_interval=timedelta(0))
        self._table: Any = None
        self._holding: set[str] | None = None  # facts with chunk rows (read once, then kept)
        self._lock = threading.RLock()
        self.failures = 0
        self.last_error: str | None = None

    @property
    def table(self) -> Any | None:
        # a stat first: listing the tables costs ~2 ms, and most homes never make this one (every
        # recall asks)
        if self._table is None and (self.folder / f"{TABLE}.lance").is_dir() and TABLE in self._db.list_tables().tables:
            self._table = self._db.open_table(TABLE)
        return self._table

    def _held(self) -> set[str]:
        if self._holding is None:
            table = self.table
            ids = [] if table is None else table.to_lance().to_table(columns=["fact_id"]).column(0).to_pylist()
            self._holding = set(ids)
        return self._holding

    def _failed(self, what: str, exc: BaseException) -> None:
        self.failures += 1
        self.last_error = f"{type(exc).__name__}: {exc}"
        log.warning("value chunks: %s failed; the facts are still found by their rows: %s", what, self.last_error)

    def project(self, rows: pa.Table) -> None:
        """Re-chunk the facts of index ``rows`` (each fact's old chunks go; its long value's
        chunks come). Never raises."""
        if not rows.num_rows:
            return
        with self._lock:
            try:
                self._project(self._candidates(rows))
            except Exception as exc:  # noqa: BLE001 - fail-open: the index write and the commit stand
                self._failed("chunking a write", exc)

    def _candidates(self, rows: pa.Table) -> dict[str, list[Any]]:
        """The old chunks of ``rows``' facts dropped; the rows that may be long, as Python lists.
        Filtered in Arrow first: a bulk write's rows are mostly short, and converting them all to
        Python would cost more than the index write."""
        held = self._held()
        if held:
            self._drop([f for f in dict.fromkeys(rows.column("fact_id").to_pylist()) if f in held])
        short = getattr(self.chunker, "max_chars", 0)
        mask = pc.and_(
            pc.greater(pc.utf8_length(rows.column("value_json")), short),
            pc.is_in(rows.column("status"), value_set=pa.array(VISIBLE_STATUSES)),
        )
        return rows.select(["fact_id", "version_id", "namespace", "key", "value_json"]).filter(mask).to_pydict()

    def _project(self, data: dict[str, list[Any]]) -> None:
        fact_ids = data["fact_id"]
        made: list[tuple[int, list[ValueChunk]]] = []
        for n, value_json in enumerate(data["value_json"]):
            chunks = list(self.chunker.chunks(value_text(json.loads(value_json))))
            if len(chunks) > 1:
                made.append((n, chunks))
        if not made:
            return
        texts = [index_text(data["key"][n], c.text) for n, chunks in made for c in chunks]
        vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32).reshape(len(texts), self.dim)
        columns: dict[str, list[Any]] = {name: [] for name in self._schema.names if name != "vector"}
        for n, chunks in made:
            for c in chunks:
                columns["chunk_id"].append(f"{fact_ids[n]}#{c.index}")
                columns["fact_id"].append(fact_ids[n])
                columns["version_id"].append(data["version_id"][n])
                columns["namespace"].append(data["namespace"][n])
                columns["chunk"].append(c.index)
                columns["chunks"].append(len(chunks))
                columns["start"].append(c.start)
                columns["text"].append(c.text)
        arrays = [pa.array(columns[f.name], type=f.type) for f in self._schema if f.name != "vector"]
        arrays.append(pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), type=pa.float32()), self.dim))
        table = pa.Table.from_arrays(arrays, schema=self._schema)
        if self.table is None:
            self._table = self._db.create_table(TABLE, schema=self._schema, storage_options=_NEW_TABLE)
        self._table.add(table)
        self._held().update(columns["fact_id"])

    def _drop(self, fact_ids: Sequence[str]) -> None:
        if not fact_ids or self.table is None:
            return
        for start in range(0, len(fact_ids), 1000):
            self.table.delete(fact_ids_in(fact_ids[start : start + 1000]))
        self._held().difference_update(fact_ids)

    def drop(self, fact_ids: Sequence[str]) -> None:
        """The chunks of these facts leave retrieval (their rows left the index). Never raises."""
        with self._lock:
            try:
                self._drop([f for f in fact_ids if f in self._held()])
            except Exception as exc:  # noqa: BLE001 - the search's version check keeps them from answering
                self._failed("dropping chunks", exc)

    def rebuild(self, rows: pa.Table) -> None:
        """Every chunk again, from the index's rebuilt ``rows``. Never raises."""
        with self._lock:
            try:
                if self.table is not None:
                    self._db.drop_table(TABLE)
                self._table, self._holding = None, set()
            except Exception as exc:  # noqa: BLE001
                self._failed("rebuilding chunks", exc)
                return
        self.project(rows)

    def purge_history(self) -> None:
        """Keep no older version of the table's files (a redaction's text must not survive)."""
        with self._lock:
            if self.table is None:
                return
            with warnings.catch_warnings():  # older versions go away: the point (as ``LanceIndex.purge_history``)
                warnings.simplefilter("ignore", UserWarning)
                self.table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)

    def search(self, vector: np.ndarray, namespace: str, limit: int) -> list[dict[str, Any]]:
        """The ``limit`` chunks of ``namespace`` nearest ``vector``, best first, with
        ``_distance`` (cosine). None found, or the table unreadable: an empty list."""
        try:
            table = self.table
            if table is None:
                return []
            query = table.search(np.asarray(vector, dtype=np.float32), vector_column_name="vector")
            return (
                query.metric("cosine")
                .where(f"namespace = {sql_str(namespace)}", prefilter=True)
                .select(["fact_id", "version_id", "chunk", "chunks", "text", "_distance"])
                .limit(limit)
                .to_list()
            )
        except Exception as exc:  # noqa: BLE001 - a search without chunks still finds every row
            self._failed("searching chunks", exc)
            return []

    def count(self) -> int:
        table = self.table
        return 0 if table is None else table.count_rows()
