"""Reading the retrieval index: searches and takes on one version of the Lance table.

lancedb writes and maintains the table; its reads go through ``pylance``, the same Lance engine
(pinned to the release lancedb bundles) without lancedb's query layer. On this project's machine
that layer cost about 2 ms of a minimal vector query (4.0 against 1.9 ms) and 1 ms of a take
(1.6 against 0.5 ms) on a 1M-row table, measured side by side on 2026-11-29 — a fifth of the
30 ms a hybrid search may take at that size.

A search reads one ``IndexSnapshot``: both legs see the same rows, and their row ids stay valid
for the take that completes the hits. Each new search asks for the latest version first, so a
write made by this process or another one is seen on the next call.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Sequence

import lance
import numpy as np
import pyarrow as pa

# What a hit shows and the last filter check reads (its scope from its own columns, not from the
# namespace the prefilter matched), beyond the columns its leg row has: taken for the answered
# rows only.
HIT_COLUMNS = ("tenant", "scope", "owner_id", "key", "kind", "memory_type", "status", "version_id", "observed_at",
               "created_at", "text", "value_json", "provenance_json")
# A column made from the others when a row is written, so that a search reads fewer columns per
# candidate (each random read of one column of one row costs about 20 us here, whatever its size;
# measured 2026-11-29): live_span, [valid_at, invalid_at, expires_at] in one fixed-size list, is
# what the legs check time against.
DERIVED_COLUMNS = ("live_span",)
SPAN_COLUMNS = ("valid_at", "invalid_at", "expires_at")
OPEN_END = np.iinfo(np.int64).max


def live_spans(valid_at: Any, invalid_at: Any, expires_at: Any) -> Any:
    """The ``live_span`` column from three Arrow int64 columns: [valid_at, invalid_at,
    expires_at] in microseconds as one fixed-size list per row, an open end as ``OPEN_END``
    (``IndexSnapshot`` reads it back into the three)."""
    parts = [np.asarray(a.fill_null(OPEN_END), dtype=np.int64) for a in (valid_at, invalid_at, expires_at)]
    return pa.FixedSizeListArray.from_arrays(pa.array(np.stack(parts, axis=1).ravel(), type=pa.int64()), 3)


class IndexSnapshot:
    """One version of the index table, read through Lance directly."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset
        self.version: int = dataset.version
        names = set(dataset.schema.names)
        # A table written before the derived column existed is read column by column.
        self._spans = "live_span" in names

    def _leg_columns(self, columns: Sequence[str]) -> list[str]:
        if not self._spans or not set(SPAN_COLUMNS) & set(columns):
            return list(columns)
        return [c for c in columns if c not in SPAN_COLUMNS] + ["live_span"]

    def _rows(self, table: Any) -> list[dict[str, Any]]:
        rows = table.to_pylist()
        if rows and "live_span" in rows[0]:
            for row in rows:
                valid, invalid, expires = row.pop("live_span")
                row["valid_at"] = valid
                row["invalid_at"] = None if invalid == OPEN_END else invalid
                row["expires_at"] = None if expires == OPEN_END else expires
        return rows

    def vector_search(self, vector: np.ndarray, where: str, limit: int, columns: Sequence[str], *,
                      nprobes: int) -> list[dict[str, Any]]:
        """The ``limit`` nearest rows by cosine under the prefilter ``where``, best first, each with
        ``_distance`` (cosine distance) and ``_rowid``. Rows the vector index does not cover yet
        (appended since the last optimize) are compared one by one."""
        nearest = {"column": "vector", "q": np.asarray(vector, dtype=np.float32), "k": limit, "metric": "cosine",
                   "nprobes": nprobes}
        return self._rows(self.dataset.to_table(columns=[*self._leg_columns(columns), "_distance"], filter=where,
                                                prefilter=True, nearest=nearest, with_row_id=True))

    def fts_search(self, text: str, where: str, limit: int, columns: Sequence[str]) -> list[dict[str, Any]]:
        """The ``limit`` best rows by BM25 over ``text`` under the prefilter ``where``, best first,
        each with ``_score`` and ``_rowid``."""
        return self._rows(self.dataset.to_table(columns=[*self._leg_columns(columns), "_score"], filter=where,
                                                prefilter=True, limit=limit, with_row_id=True,
                                                full_text_query={"query": text, "columns": ["text"]}))

    def take(self, row_ids: Sequence[int], columns: Sequence[str]) -> list[dict[str, Any]]:
        """Rows by row id, in the order asked. Raises when a row id names no row of this version."""
        return self.dataset._take_rows(list(row_ids), columns=list(columns)).to_pylist()

    def rows_where(self, where: str, columns: Sequence[str]) -> list[dict[str, Any]]:
        return self._rows(self.dataset.to_table(columns=self._leg_columns(columns), filter=where))


class SnapshotSource:
    """The latest version of one table, checked on every call (another process may have written).

    Snapshots share the first dataset's session, so the vector and text indexes are loaded into
    memory once per process, not once per version.
    """

    def __init__(self, uri: Path) -> None:
        self.uri = str(uri)
        self._base: Any = None
        self._latest: IndexSnapshot | None = None
        self._lock = threading.Lock()

    def latest(self) -> IndexSnapshot:
        with self._lock:
            if self._base is None:
                self._base = lance.dataset(self.uri)
            version = self._base.latest_version
            if self._latest is None or self._latest.version != version:
                self._latest = IndexSnapshot(self._base.checkout_version(version))
            return self._latest

    def prewarm(self) -> int:
        """Load every index of the latest version into the shared cache (the vector index's
        partitions are otherwise read from disk the first time a query probes them); answers
        the cache's size in bytes."""
        snapshot = self.latest().dataset
        for index in snapshot.describe_indices():
            snapshot.prewarm_index(index.name)
        return int(snapshot.session().index_cache_size_bytes())

    def reset(self) -> None:
        """Forget the table: it was dropped and made anew (its versions start again)."""
        with self._lock:
            self._base = None
            self._latest = None
