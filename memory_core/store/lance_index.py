"""The retrieval index: one LanceDB table in the memory home, one row per fact (its latest state).

Every column search filters on lives on the row, so a search never joins back to DuckDB to
filter. Times are int64 microseconds since the epoch (null: open-ended). Rows appended since the
last ``optimize`` are still found (Lance scans them), only more slowly; ``unindexed_rows`` says
how many there are.
"""
from __future__ import annotations

import json
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Sequence

import lancedb
import numpy as np
import pyarrow as pa

from ..errors import MemcoreError

TABLE = "memory_index"
META_FILE = "memory_index.meta.json"
# Below this many rows an exact scan beats any ANN index; above it optimize() builds one.
VECTOR_INDEX_MIN_ROWS = 50_000
# Lance's 2.0 file format stores vectors plainly; the newer default compresses them, which made
# writing 100k rows about 3x slower and a prefiltered vector scan about 3x slower on this
# project's machine (measured side by side, 2026-11-29). A table keeps the format it was made with.
FILE_FORMAT = "2.0"
_NEW_TABLE = {"new_table_data_storage_version": FILE_FORMAT}
# What a search leg returns per candidate: the columns the filters and the fusion read. The rest
# of a row (value, text, provenance) is taken afterwards for the hits answered: reading every
# column of every candidate cost about as much as the search itself at 1M rows.
LEG_COLUMNS = ("fact_id", "tenant", "scope", "owner_id", "status", "kind", "valid_at", "invalid_at", "expires_at",
               "observed_at", "subject")


class EmbedderMismatch(MemcoreError):
    status = 409
    code = "EMBEDDER_MISMATCH"


def micros(value: datetime | None) -> int | None:
    if value is None:
        return None
    return int((value - datetime(1970, 1, 1, tzinfo=timezone.utc)) / timedelta(microseconds=1))


def from_micros(value: int | None) -> datetime | None:
    if value is None:
        return None
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=int(value))


def sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def fact_ids_in(fact_ids: Sequence[str]) -> str:
    """A filter naming these facts."""
    return "fact_id IN (" + ", ".join(sql_str(f) for f in fact_ids) + ")"


def namespace_key(tenant: str, scope: str, owner_id: str) -> str:
    """One column naming a row's namespace, so the prefilter every search needs is one lookup."""
    return json.dumps([tenant, scope, owner_id], ensure_ascii=False)


def schema(dim: int) -> pa.Schema:
    text = pa.string()
    return pa.schema([
        ("fact_id", text), ("version_id", text), ("namespace", text), ("tenant", text), ("scope", text), ("owner_id", text),
        ("key", text), ("kind", text), ("memory_type", text), ("status", text), ("source_class", text),
        ("sensitivity", text), ("valid_at", pa.int64()), ("invalid_at", pa.int64()), ("observed_at", pa.int64()),
        ("expires_at", pa.int64()), ("created_at", pa.int64()), ("version", pa.int64()),
        ("reinforcement_count", pa.int64()), ("subject", text), ("text", text), ("value_json", text), ("provenance_json", text),
        ("vector", pa.list_(pa.float32(), dim)),
    ])


class LanceIndex:
    """The index table, bound to the embedder whose vectors it holds."""

    def __init__(self, folder: Path, embedder_name: str, dim: int) -> None:
        self.folder = Path(folder)
        self.embedder_name = embedder_name
        self.dim = dim
        self._schema = schema(dim)
        # Every column but the vector, and those of them a light leg row lacks.
        self._row_columns = [n for n in self._schema.names if n != "vector"]
        self._rest_columns = [n for n in self._row_columns if n not in LEG_COLUMNS]
        self._db = lancedb.connect(str(self.folder), read_consistency_interval=timedelta(0))
        self._table: Any = None
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
                    index_embedder=meta["embedder"], embedder=self.embedder_name,
                )

    def _write_meta(self) -> None:
        """Recorded when a table is made: its embedder, and the file format it was made in."""
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / META_FILE).write_text(json.dumps({"embedder": self.embedder_name, "dim": self.dim,
                                                         "file_format": FILE_FORMAT}))

    def _file_format(self) -> str | None:
        """The format the table was made in; None for a table made before it was recorded."""
        meta_path = self.folder / META_FILE
        return json.loads(meta_path.read_text()).get("file_format") if meta_path.exists() else None

    @property
    def table(self) -> Any | None:
        if self._table is None and TABLE in self._db.list_tables().tables:
            self._table = self._db.open_table(TABLE)
        return self._table

    def _data(self, rows: pa.Table | Sequence[dict[str, Any]]) -> pa.Table:
        return rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(list(rows), schema=self._schema)

    def upsert(self, rows: pa.Table | Sequence[dict[str, Any]]) -> None:
        """Insert or replace rows by fact_id."""
        data = self._data(rows)
        if not data.num_rows:
            return
        table = self.table
        if table is None:
            self._write_meta()
            # Made empty, then appended to: creating a table with its rows took about twice as long
            # (100k rows: 0.3-0.5 s against 0.2 s, measured side by side, 2026-11-29).
            self._table = self._db.create_table(TABLE, schema=self._schema, storage_options=_NEW_TABLE)
            self._table.add(data)
            self._ensure_fts()
            return
        table.merge_insert("fact_id").when_matched_update_all().when_not_matched_insert_all().execute(data)

    def add(self, rows: pa.Table | Sequence[dict[str, Any]]) -> None:
        """Append rows of facts the table does not hold yet (new facts): cheaper than a merge."""
        data = self._data(rows)
        if not data.num_rows:
            return
        if self.table is None:
            self.upsert(data)
            return
        self.table.add(data)

    def delete_facts(self, fact_ids: Sequence[str]) -> None:
        """Drop the rows of facts that must not be served or kept (tombstoned, high, redacted, ...)."""
        if not fact_ids or self.table is None:
            return
        for start in range(0, len(fact_ids), 1000):
            chunk = fact_ids[start:start + 1000]
            self.table.delete(fact_ids_in(chunk))

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

    def replace_all(self, data: pa.Table) -> None:
        """Rebuild the table from scratch (reindex): overwritten in place, so a reader sees the old
        rows or the new ones. A table made in an older file format is dropped first instead, once
        (overwriting keeps a table's format); the caller makes that gap safe (see ``reindex``)."""
        if self.table is not None and self._file_format() != FILE_FORMAT:
            self._db.drop_table(TABLE)
            self._table = None
        self._write_meta()
        self._table = self._db.create_table(TABLE, data, schema=self._schema, mode="overwrite",
                                            storage_options=_NEW_TABLE)
        self._ensure_fts()

    def _ensure_fts(self) -> None:
        from lancedb.index import FTS

        self._table.create_index("text", config=FTS(with_position=False), replace=True)

    def count(self) -> int:
        return 0 if self.table is None else self.table.count_rows()

    def unindexed_rows(self) -> int:
        if self.table is None:
            return 0
        stats = self.table.index_stats("text_idx")
        return 0 if stats is None else int(stats.num_unindexed_rows)

    def optimize(self, *, cleanup_older_than: timedelta | None = timedelta(days=1)) -> dict[str, Any]:
        """Fold appended rows into the indexes; build an ANN vector index once the table is large."""
        table = self.table
        if table is None:
            return {"rows": 0}
        table.optimize(cleanup_older_than=cleanup_older_than)
        rows = table.count_rows()
        has_vector_index = any(ix.index_type.startswith("IVF") for ix in table.list_indices())
        if rows >= VECTOR_INDEX_MIN_ROWS and not has_vector_index:
            self.build_scalar_indexes()
            self.build_vector_index()
        return {"rows": rows, "unindexed_rows": self.unindexed_rows()}

    def build_scalar_indexes(self) -> None:
        """Scalar indexes on the columns every prefilter names: they keep filtered search fast."""
        from lancedb.index import BTree, Bitmap

        for column, config in (("namespace", BTree()), ("status", Bitmap()), ("kind", Bitmap()),
                               ("valid_at", BTree()), ("invalid_at", BTree())):
            self.table.create_index(column, config=config, replace=True)

    def build_vector_index(self, *, num_partitions: int | None = None, index_type: str = "IVF_HNSW_SQ") -> None:
        rows = self.table.count_rows()
        partitions = num_partitions or max(1, int(np.sqrt(rows) / 2))
        self.table.create_index(metric="cosine", vector_column_name="vector", index_type=index_type,
                                num_partitions=partitions, replace=True)

    def _columns(self, with_vector: bool, light: bool) -> list[str]:
        # Converting vectors to Python lists costs more than the search itself: fetch them only
        # when the caller needs them.
        names = LEG_COLUMNS if light else self._row_columns
        return [*names, "vector"] if with_vector else list(names)

    def vector_search(self, vector: np.ndarray, where: str, limit: int, *, nprobes: int = 32,
                      refine_factor: int | None = 2, exact: bool = False, with_vector: bool = False,
                      light: bool = False) -> list[dict[str, Any]]:
        """``light``: only ``LEG_COLUMNS`` and the row id (complete the rows kept with ``hydrate``)."""
        if self.table is None:
            return []
        query = (self.table.search(np.asarray(vector, dtype=np.float32), vector_column_name="vector")
                 .metric("cosine").where(where, prefilter=True)
                 .select([*self._columns(with_vector, light), "_distance"]).with_row_id(light).limit(limit))
        if exact:
            query = query.bypass_vector_index()
        else:
            query = query.nprobes(nprobes)
            if refine_factor:
                query = query.refine_factor(refine_factor)
        return query.to_list()

    def fts_search(self, text: str, where: str, limit: int, *, with_vector: bool = False,
                   light: bool = False) -> list[dict[str, Any]]:
        if self.table is None:
            return []
        return (self.table.search(text, query_type="fts", fts_columns="text").where(where, prefilter=True)
                .select([*self._columns(with_vector, light), "_score"]).with_row_id(light).limit(limit).to_list())

    def hydrate(self, rows: Sequence[dict[str, Any]]) -> None:
        """Complete light leg rows, in place, with every other column, taken by row id. A row id
        that no longer names its fact (the table was compacted in between) is looked up again by
        fact id; a fact gone from the index (deleted in between) keeps its light row and is
        marked ``_gone``."""
        pending = [r for r in rows if "value_json" not in r]
        if not pending or self.table is None:
            return
        rest = self._rest_columns
        taken = {r["fact_id"]: r for r in self.table.take_row_ids([r["_rowid"] for r in pending])
                 .select(["fact_id", *rest]).to_list()}
        missing = [r["fact_id"] for r in pending if r["fact_id"] not in taken]
        if missing:
            found = (self.table.search().where(fact_ids_in(missing))
                     .select(["fact_id", *rest]).limit(len(missing)).to_list())
            taken.update((r["fact_id"], r) for r in found)
        for row in pending:
            full = taken.get(row["fact_id"])
            if full is None:
                row["_gone"] = True
            else:
                row.update((n, full[n]) for n in rest)

    def heads(self) -> dict[str, tuple[str, str]]:
        """fact_id → (version_id, status) for every row: what consistency checks compare."""
        if self.table is None:
            return {}
        data = self.table.to_arrow().select(["fact_id", "version_id", "status"]).to_pydict()
        return {f: (v, s) for f, v, s in zip(data["fact_id"], data["version_id"], data["status"])}
