"""The retrieval index: one LanceDB table in the memory home, one served row per fact (its latest
state; an older row waits, never served, until the index settles: ``served``).

Every column search filters on lives on the row, so a search never joins back to DuckDB to
filter. Times are int64 microseconds since the epoch (null: open-ended). Rows appended since the
last index round are still found (Lance scans them), more slowly: ``unindexed_rows``.
"""

from __future__ import annotations

import json
import threading
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any, Sequence

import lance
import lancedb
import numpy as np
import pyarrow as pa

from ...environment import lance_compute_threads
from ...errors import EmbedderMismatch
from .filters import fact_ids_in, sql_str
from .hydrate import complete_rows
from .layout import add_columns, missing_columns
from .read import DERIVED_COLUMNS, IndexSnapshot, SnapshotSource
from .resident import ResidentColumns
from .rows import schema
from .served import NOTHING_HIDDEN, Served, ServedRows
from .structures import SearchStructures
from .writer import one_writer

TABLE = "memory_index"
META_FILE = "memory_index.meta.json"
# Below this many rows an exact scan beats any ANN index; above it optimize() builds one.
VECTOR_INDEX_MIN_ROWS = 50_000
# Lance's 2.0 file format stores vectors plainly; the newer default compresses them, which made
# writing and prefiltered vector scans several times slower here (docs/benchmarks.md, "File
# format 2.0"). A table keeps the format it was made with.
FILE_FORMAT = "2.0"
_NEW_TABLE = {"new_table_data_storage_version": FILE_FORMAT}
# The vector index: IVF_FLAT with about sqrt(rows) partitions, of which a search reads NPROBES:
# faster to build and to search than IVF_HNSW_SQ at the same recall, and exact distances need no
# refine step; 32 probes keep recall@10 above 0.95 through the pipeline at 1M rows
# (docs/benchmarks.md, "The vector index").
NPROBES = 32
# Appends are folded into fragments of up to this many rows; larger ones are left as they are.
SMALL_FRAGMENT_ROWS = 8192


class LanceIndex(SearchStructures):
    """The index table, bound to the embedder whose vectors it holds."""

    def __init__(
        self,
        folder: Path,
        embedder_name: str,
        dim: int,
        *,
        vector_index_min_rows: int = VECTOR_INDEX_MIN_ROWS,
        resident: ResidentColumns | None = None,
    ) -> None:
        self.folder = Path(folder)
        self.vector_index_min_rows = vector_index_min_rows
        self.embedder_name = embedder_name
        self.dim = dim
        self._schema = schema(dim)
        # Every stored column but the vector (the derived ones repeat others).
        self._row_columns = [n for n in self._schema.names if n != "vector" and n not in DERIVED_COLUMNS]
        lance_compute_threads()
        self._db = lancedb.connect(str(self.folder), read_consistency_interval=timedelta(0))
        self._table: Any = None
        self._opening = threading.Lock()
        # One writer of the table at a time in this process (``one_writer``): a fold on the upkeep
        # thread must not race another write. Taken before ``_served.lock``, never after it.
        self.writing = threading.RLock()
        self._not_folding = threading.Event()
        self._not_folding.set()
        self._appended: int | None = None  # rows outside the indexes (``structures``)
        self._served = ServedRows()  # newer states go in beside older rows (see ``served``)
        # The version searches read while an append is being written (``append_states``).
        self._appending_over: IndexSnapshot | None = None
        self._source = SnapshotSource(self.folder / f"{TABLE}.lance", resident)
        self._check_meta()

    def _check_meta(self) -> None:
        meta_path = self.folder / META_FILE
        if meta_path.exists():
            meta = json.loads(meta_path.read_text())
            if (meta["embedder"], meta["dim"]) != (self.embedder_name, self.dim):
                raise EmbedderMismatch(
                    f"the index in {self.folder} was built with {meta['embedder']} ({meta['dim']}-d); "
                    f"this run uses {self.embedder_name} ({self.dim}-d). Use the same embedder, or rebuild the "
                    "index with `memcore index rebuild`",
                    index_embedder=meta["embedder"],
                    embedder=self.embedder_name,
                )

    def _write_meta(self) -> None:
        """Recorded when a table is made: its embedder, and the file format it was made in."""
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / META_FILE).write_text(
            json.dumps({"embedder": self.embedder_name, "dim": self.dim, "file_format": FILE_FORMAT})
        )

    def _file_format(self) -> str | None:
        """The format the table was made in; None for a table made before it was recorded."""
        meta_path = self.folder / META_FILE
        return json.loads(meta_path.read_text()).get("file_format") if meta_path.exists() else None

    @property
    def table(self) -> Any | None:
        if self._table is None:
            with self._opening:  # a search and a write may ask first at once: open it once
                if self._table is None and TABLE in self._db.list_tables().tables:
                    self._table = self._db.open_table(TABLE)
                    # Appends an earlier process left unfolded count toward the folds' thresholds.
                    # Not under ``_served.lock``, which a writer may hold here: a count for those
                    # thresholds, and the fold reads the table itself (``compact_small``).
                    left = self._small_fragments() - 1
                    if left > self._served.appends:
                        self._served.appends = left
        return self._table

    def _small_fragments(self) -> int:
        """Fragments of the latest version below ``SMALL_FRAGMENT_ROWS`` rows: appends not folded
        yet, by this process or an earlier one (a home written by one ``memcore set`` after
        another holds one per write)."""
        fragments = self._source.latest().dataset.get_fragments()
        return sum(1 for f in fragments if f.metadata.physical_rows < SMALL_FRAGMENT_ROWS)

    def _data(self, rows: pa.Table | Sequence[dict[str, Any]]) -> pa.Table:
        return rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(list(rows), schema=self._schema)

    @one_writer
    def upsert(self, rows: pa.Table | Sequence[dict[str, Any]]) -> None:
        """Insert or replace rows by fact_id."""
        data = self._data(rows)
        if not data.num_rows:
            return
        table = self.table
        if table is None:
            self._write_meta()
            # Made empty, then appended to: creating a table with its rows took about twice as long
            # (docs/benchmarks.md, "A new table is made empty").
            self._table = self._db.create_table(TABLE, schema=self._schema, storage_options=_NEW_TABLE)
            self._table.add(data)
            self._ensure_fts()
            return
        table.merge_insert("fact_id").when_matched_update_all().when_not_matched_insert_all().execute(data)
        self.note_appended(data.num_rows)

    @one_writer
    def add(self, rows: pa.Table | Sequence[dict[str, Any]]) -> None:
        """Append rows of facts the table does not hold yet (new facts): cheaper than a merge."""
        data = self._data(rows)
        if not data.num_rows:
            return
        if self.table is None:
            self.upsert(data)
            return
        # Lance's append: LanceDB's hops to its event loop and checks the rows (6.6 ms to Lance's 4.2)
        committed = lance.write_dataset(data, self._source.uri, mode="append")
        self.note_appended(data.num_rows)
        self._source.appended(committed, data)  # held from what was written: hold_appended

    @one_writer
    def append_states(self, rows: pa.Table | None, served: dict[str, str | None]) -> None:
        """Append newer states of facts (``rows``) and stop serving every other row of the facts
        in ``served`` (fact id -> the version to serve; None: serve none of its rows).

        While the rows are written, ``served`` answers the version before them with the map that
        goes with it, so a search reads on instead of waiting for the append (6 to 100 ms under
        load); the new version and its map are published together once it is written. A search
        of the facts being written waits for them in the projector's flush instead."""
        appending = rows is not None and rows.num_rows
        before = self.snapshot() if appending else None
        if before is None:  # nothing to append, or the table's first rows: nothing to read meanwhile
            with self._served.lock:
                if appending:
                    self.add(rows)
                    self._served.appends += 1
                self._served.mark(served)
            return
        with self._served.lock:
            self._appending_over = before
        try:
            self.add(rows)
        except BaseException:
            with self._served.lock:  # the append failed: the version before stands, as it is served
                self._appending_over = None
            raise
        with self._served.lock:  # the new version and its map, published together
            self._served.appends += 1
            self._served.mark(served)
            self._appending_over = None

    @property
    def unsettled(self) -> tuple[int, int]:
        """(rows no longer served, at most; fragments appended since the last fold)."""
        return self._served.current.hidden, self._served.appends

    @one_writer
    def settle(self, *, compact: bool = True) -> int:
        """Delete the rows no longer served, in one delete per thousand facts, and fold the small
        fragments appends left into few (``compact``); answers how many facts it settled. The map
        is emptied only once every delete is done: a failed one leaves the rows filtered."""
        table = self.table
        if table is None:  # facts dropped before the table was made: no row to delete
            with self._served.lock:
                self._served.reset()
            return 0
        with self._served.lock:
            served = dict(self._served.current.versions)
            facts = list(served)
            for start in range(0, len(facts), 1000):
                chunk = facts[start : start + 1000]
                keep = [v for v in (served[f] for f in chunk) if v is not None]
                where = fact_ids_in(chunk)
                if keep:
                    where += " AND version_id NOT IN (" + ", ".join(sql_str(v) for v in keep) + ")"
                table.delete(where)
            self._served.take()
        if compact:
            self.compact_small()
        return len(served)

    @one_writer
    def compact_small(self) -> None:
        """Fold small fragments (appends) into few, leaving large ones and deletions alone: about
        0.1 s for 60 fragments at 100k rows, where a full compaction took 2.8 s. Not under the
        served lock: the versions before and after a fold hold the same rows, so the published
        ``Served`` fits either."""
        # One small fragment has nothing to be folded with. The count of appends since the last
        # fold cannot tell alone: one append beside the unfolded ones of an earlier process, or
        # of flushes that each found one, is not one small fragment.
        if self._served.appends <= 1 and self._small_fragments() <= 1:
            self._served.appends = 0
            return
        self._not_folding.clear()
        try:
            # On a handle of its own: compacting moves the dataset object it runs on to the new
            # version, and the latest snapshot's is the one searches are reading.
            lance.dataset(self._source.uri).optimize.compact_files(
                target_rows_per_fragment=SMALL_FRAGMENT_ROWS, materialize_deletions=False
            )
            self._served.appends = 0
        finally:
            self._not_folding.set()

    def hold_appended(self) -> int:
        """Hold this process's appends from the rows written (upkeep: after the writes' answer)."""
        return self._source.hold_appended()

    def hold_small(self) -> None:
        """Load the fragments a fold wrote, outside the writer's lock and the fold's window."""
        latest = self._source.latest()
        if latest.resident:
            self._source.resident.hold_small(latest.dataset)

    def wait_for_fold(self) -> None:
        """Return once no fold is under way (a flush calls it before it takes the store's lock, so
        that commits do not wait on the fold through it)."""
        self._not_folding.wait()

    def served(self) -> tuple[IndexSnapshot | None, Served]:
        """The table's latest version and which rows of it are served (``served.ServedRows``);
        while an append is being written, the version before it (``append_states``)."""
        with self._served.lock:
            before = self._appending_over
            return (before if before is not None else self.snapshot()), self._served.current

    @one_writer
    def delete_facts(self, fact_ids: Sequence[str]) -> None:
        """Drop the rows of facts that must not be served or kept (tombstoned, high, redacted, ...)."""
        if not fact_ids or self.table is None:
            return
        for start in range(0, len(fact_ids), 1000):
            chunk = fact_ids[start : start + 1000]
            self.table.delete(fact_ids_in(chunk))
        with self._served.lock:
            self._served.forget(fact_ids)

    @one_writer
    def purge_history(self) -> None:
        """Fold the table into one version and drop older versions and files, so nothing a later
        change removed (a redacted value) survives in the folder; rebuild the text index."""
        table = self.table
        if table is None:
            return
        with warnings.catch_warnings():
            # Lance warns that older versions go away: that is the point. The home has one writer.
            warnings.simplefilter("ignore", UserWarning)
            table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
            self._ensure_fts()
            table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
        self._source.resident.clear()  # nor in this process's memory

    @one_writer
    def replace_all(self, data: pa.Table) -> None:
        """Rebuild the table from scratch (reindex): overwritten in place, so a reader sees the old
        rows or the new ones. A table made in an older file format is dropped first instead, once
        (overwriting keeps a table's format); the caller makes that gap safe (see ``reindex``)."""
        if self.table is not None and self._file_format() != FILE_FORMAT:
            self._db.drop_table(TABLE)
            self._table = None
            self._source.reset()
        self._write_meta()
        with self._served.lock:  # every row is the one served: nothing is left to settle
            self._table = self._db.create_table(
                TABLE, data, schema=self._schema, mode="overwrite", storage_options=_NEW_TABLE
            )
            self._served.reset()
        self._appended = None  # counted again from the table when next needed
        self._ensure_fts()

    def _ensure_fts(self) -> None:
        from lancedb.index import FTS

        self._table.create_index("text", config=FTS(with_position=False), replace=True)

    def count(self) -> int:
        return 0 if self.table is None else self.table.count_rows()

    def upgrade_layout(self) -> list[str]:
        """Add the columns a table written by an older build lacks (``layout.missing_columns``);
        the names added (none: it was current)."""
        table = self.table
        added = [] if table is None else missing_columns(table.schema.names)
        if added:
            add_columns(self._source.latest().dataset, self._schema, added)
            self._table = None  # opened again, with the new schema
        return added

    def prewarm(self, *, hit_columns: bool = True, vector_budget_bytes: int = 0) -> int:
        """Load the table's indexes and the columns searches read into memory now rather than
        query by query; for a process that stays open. With ``hit_columns`` the wide columns of
        a hit too (key, text, value, provenance), so answering reads no file (what it costs and
        gains: docs/benchmarks.md, "Prewarm"); the stored vectors too while they take at most
        ``vector_budget_bytes`` (``ResidentColumns.holds_vectors``). Answers the bytes held."""
        if self.table is None:
            return 0
        return self._source.prewarm(hit_columns=hit_columns, vector_budget_bytes=vector_budget_bytes)

    def snapshot(self) -> IndexSnapshot | None:
        """The table's latest version, to read one search from; None before the first write."""
        return None if self.table is None else self._source.latest()

    def _columns(self, columns: Sequence[str] | None) -> list[str]:
        # Converting vectors to Python lists costs more than the search itself: only on request.
        return list(columns) if columns is not None else list(self._row_columns)

    def vector_search(
        self,
        vector: np.ndarray,
        where: str,
        limit: int,
        *,
        columns: Sequence[str] | None = None,
        nprobes: int = NPROBES,
    ) -> list[dict[str, Any]]:
        """Nearest rows by cosine under the prefilter ``where``, on the latest version: ``columns``
        (default every column but the vector), ``_distance`` and ``_rowid``. A search reads its
        legs from one ``snapshot()`` instead."""
        snapshot = self.snapshot()
        if snapshot is None:
            return []
        return snapshot.vector_search(vector, where, limit, self._columns(columns), nprobes=nprobes)

    def hydrate(
        self,
        rows: Sequence[dict[str, Any]],
        columns: Sequence[str] | None = None,
        *,
        read_at: IndexSnapshot | None = None,
    ) -> None:
        """Complete leg rows, in place, with ``columns`` (default every column but the vector),
        taken by row id from the latest version. When that is still ``read_at``, the version the
        rows were found in, their row ids name them. Otherwise each row is replaced by its fact's
        latest row, time and status included: a row id that no longer names its fact (the table
        was compacted in between) is looked up again by fact id; a fact gone from the index
        (deleted in between) keeps its leg row and is marked ``_gone``."""
        pending = [r for r in rows if "value_json" not in r]
        snapshot, served = self.served() if pending else (None, NOTHING_HIDDEN)
        if snapshot is not None:
            complete_rows(
                pending, [n for n in (columns or self._row_columns) if n != "fact_id"], snapshot, served, read_at
            )

    def heads(self) -> list[tuple[str, str, str]]:
        """(fact_id, version_id, value_json) of every row, duplicates included: what a
        consistency check compares with the log."""
        snapshot = self.snapshot()
        if snapshot is None:
            return []
        # Three columns of the latest version, from the files (never the vectors).
        data = snapshot.dataset.to_table(columns=["fact_id", "version_id", "value_json"]).to_pydict()
        return list(zip(data["fact_id"], data["version_id"], data["value_json"]))
