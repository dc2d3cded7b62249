"""Reading the retrieval index: searches and takes on one version of the Lance table.

lancedb writes and maintains the table; its reads go through ``pylance``, the same Lance engine
(pinned to the release lancedb bundles) without lancedb's query layer, which cost a fifth of what
a hybrid search may take at 1M rows (docs/benchmarks.md, "Reads through pylance").

A search reads one ``IndexSnapshot``: both legs see the same rows, and their row ids stay valid
for the take that completes the hits. Each new search asks for the latest version first, so a
write made by this process or another one is seen on the next call. A leg asks Lance for row ids
and scores; the few columns it reads per candidate come from ``ResidentColumns``.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from pathlib import Path
from typing import Any, Sequence

import lance
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...retrieval.rows import HIT_COLUMNS
from .held import HELD_COLUMNS, HeldFilter, held_parts, nearest
from .recent import compared_here, cosine_distances, matrix_of, merge_nearest, nearest_within, recent_fragments
from .resident import ResidentColumns

# A column made from the others when a row is written, so that a search reads fewer columns per
# candidate (each random read of one column of one row costs the same, whatever its size:
# docs/benchmarks.md, "One derived column"): live_span, [valid_at, invalid_at, expires_at] in one
# fixed-size list, is what the legs check time against.
DERIVED_COLUMNS = ("live_span",)
# The columns ``ResidentColumns`` holds once a search reads them: what a leg reads per candidate
# and the narrow ones of a hit. The wide ones (text, value, provenance, key; the vector) are read
# from the files for the answered rows only.
RESIDENT_COLUMNS = frozenset(
    {
        "fact_id",
        "live_span",
        "valid_at",
        "invalid_at",
        "expires_at",
        "observed_at",
        "subject",
        "session",
        "confidence",
        "reinforcement_count",
        "source_class",
        "tenant",
        "scope",
        "owner_id",
        "kind",
        "memory_type",
        "status",
        "version_id",
        "created_at",
    }
)
# The rest of a hit (key, text, value, provenance): read from the files for the answered rows,
# unless ``prewarm`` loaded them too.
WIDE_HIT_COLUMNS = tuple(c for c in HIT_COLUMNS if c not in RESIDENT_COLUMNS)
SPAN_COLUMNS = ("valid_at", "invalid_at", "expires_at")
OPEN_END = np.iinfo(np.int64).max

log = logging.getLogger(__name__)
# Appends kept for ``SnapshotSource.hold_appended`` at most (with the dataset handle each commit
# answered), each of at most this many bytes: in a process with no upkeep thread they wait there
# until newer ones push them out.
_APPENDED_KEPT = 16
_APPENDED_MAX_BYTES = 1 << 20


def live_spans(valid_at: Any, invalid_at: Any, expires_at: Any) -> Any:
    """The ``live_span`` column from three Arrow int64 columns: [valid_at, invalid_at,
    expires_at] in microseconds as one fixed-size list per row, an open end as ``OPEN_END``
    (``IndexSnapshot`` reads it back into the three)."""
    parts = [np.asarray(a.fill_null(OPEN_END), dtype=np.int64) for a in (valid_at, invalid_at, expires_at)]
    return pa.FixedSizeListArray.from_arrays(pa.array(np.stack(parts, axis=1).ravel(), type=pa.int64()), 3)


class IndexSnapshot:
    """One version of the index table, read through Lance directly."""

    def __init__(self, dataset: Any, resident: ResidentColumns | None = None) -> None:
        self.dataset = dataset
        self.version: int = dataset.version
        names = self._names = frozenset(dataset.schema.names)
        # A table written before the derived column existed is read column by column.
        self._spans = "live_span" in names
        # Row ids are addresses only without stable row ids; else every column comes with the query.
        self._resident = None if dataset.has_stable_row_ids else resident
        self._recent: list[Any] | None | bool = False  # not looked up yet (``_recent_fragments``)
        self._held: tuple[int, frozenset[str]] | None = None  # (budget, columns taken from memory): ``_held_names``

    @property
    def resident(self) -> bool:
        return self._resident is not None

    def _leg(self, columns: Sequence[str], score: str, **query: Any) -> list[dict[str, Any]]:
        """A leg's rows: ``score`` and the row id from Lance, ``columns`` from memory where held
        there (``RESIDENT_COLUMNS``; the vector, which only score fusion asks for, only within
        the budget ``prewarm`` was given)."""
        wanted, absent = self._present(self.leg_columns(columns))
        resident = [c for c in wanted if c in self._held_names()] if self._resident is not None else []
        table = self.dataset.to_table(
            columns=[*(c for c in wanted if c not in resident), score], with_row_id=True, prefilter=True, **query
        )
        columns = {name: table.column(name) for name in table.column_names}
        if resident:
            columns.update(self._resident.gather(self.dataset, table.column("_rowid").to_numpy(), resident))
        return _as_rows(columns, absent)

    def _held_names(self) -> frozenset[str]:
        """``RESIDENT_COLUMNS``, and the vector where ``ResidentColumns`` holds this version's
        (``holds_vectors``: weighed once per version and budget)."""
        budget = self._resident.vector_budget if self._resident is not None else 0
        if self._held is None or self._held[0] != budget:
            vectors = self._resident is not None and self._resident.holds_vectors(self.dataset)
            self._held = (budget, (RESIDENT_COLUMNS | {"vector"}) if vectors else RESIDENT_COLUMNS)
        return self._held[1]

    def _present(self, columns: Sequence[str]) -> tuple[list[str], list[str]]:
        """``columns`` this version has, and those it lacks: a table written before a column was
        added, opened read-only (a writable open adds it, ``LanceIndex.upgrade_layout``), answers
        them as null."""
        wanted = list(dict.fromkeys(columns))
        return [c for c in wanted if c in self._names], [c for c in wanted if c not in self._names]

    def leg_columns(self, columns: Sequence[str]) -> list[str]:
        """The stored columns that hold ``columns`` (the span columns are one, ``live_span``)."""
        if not self._spans or not set(SPAN_COLUMNS) & set(columns):
            return list(columns)
        return list(dict.fromkeys([*(c for c in columns if c not in SPAN_COLUMNS), "live_span"]))

    def vector_search(
        self, vector: np.ndarray, where: str, limit: int, columns: Sequence[str], *, nprobes: int
    ) -> list[dict[str, Any]]:
        """The ``limit`` nearest rows by cosine under the prefilter ``where``, best first, each with
        ``_distance`` (cosine distance) and ``_rowid``. Rows the vector index does not cover yet
        (appended since the last optimize) are compared one by one."""
        nearest = {
            "column": "vector",
            # an Arrow array: Lance coerces a NumPy one through float64 and pandas (~1 ms a query)
            "q": pa.array(np.asarray(vector, dtype=np.float32).ravel(), type=pa.float32()),
            "k": limit,
            "metric": "cosine",
            "nprobes": nprobes,
        }
        recent = self._recent_fragments()
        if not compared_here(recent):  # no vector index (every row compared), none, or too many
            return self._leg(columns, "_distance", filter=where, nearest=nearest)
        indexed = self._leg(columns, "_distance", filter=where, nearest=nearest, fast_search=True)
        # A recent row farther than the indexed rows' last cannot make the cut once they are ``limit``.
        farthest = indexed[-1]["_distance"] if len(indexed) >= limit else float("inf")
        nearest = self._nearest_recent(recent or [], vector, where, columns, (limit, farthest))
        return merge_nearest(indexed, nearest, limit)

    def nearest_held(
        self, vector: np.ndarray, where: HeldFilter, limit: int, columns: Sequence[str]
    ) -> list[dict[str, Any]] | None:
        """What ``vector_search`` answers under the narrow filter ``where``, exactly, from the
        vectors held in memory (``held``); None when this version's are not held, or the
        namespace's rows are too many to compare one by one."""
        if self._resident is None or "vector" not in self._held_names():
            return None
        parts = held_parts(self._resident, self.dataset, where)
        if parts is None:
            return None
        row_ids, distances = nearest(parts, vector, limit)
        rows = self.take(row_ids.tolist(), self.leg_columns(columns))
        for row, row_id, distance in zip(rows, row_ids.tolist(), distances.tolist()):
            row["_rowid"], row["_distance"] = row_id, distance
        return rows

    def _recent_fragments(self) -> list[Any] | None:
        """This version's fragments outside the vector index (``recent``), looked up once."""
        if self._recent is False:
            self._recent = recent_fragments(self.dataset)
        return self._recent

    def _nearest_recent(
        self, fragments: list[Any], vector: np.ndarray, where: str, columns: Sequence[str], bound: tuple[int, float]
    ) -> list[dict[str, Any]]:
        """The rows of ``fragments`` that pass ``where`` and could be among the ``bound[0]``
        nearest (none farther than ``bound[1]``), each with its ``_distance`` to ``vector`` and
        its ``_rowid``: their vectors read in one scan, the columns of the few kept as a take."""
        table = self.dataset.scanner(fragments=fragments, filter=where, columns=["vector"], with_row_id=True).to_table()
        if not table.num_rows:
            return []
        distances = cosine_distances(matrix_of(table.column("vector"), table.num_rows), vector)
        kept = nearest_within(distances, *bound)
        row_ids = table.column("_rowid").to_numpy()[kept]
        rows = self.take(row_ids.tolist(), self.leg_columns(columns))
        for row, row_id, distance in zip(rows, row_ids.tolist(), distances[kept].tolist()):
            row["_rowid"], row["_distance"] = row_id, distance
        return rows

    def fts_search(self, text: str, where: str, limit: int, columns: Sequence[str]) -> list[dict[str, Any]]:
        """The ``limit`` best rows by BM25 over ``text`` under the prefilter ``where``, best first,
        each with ``_score`` and ``_rowid``."""
        return self._leg(
            columns, "_score", filter=where, limit=limit, full_text_query={"query": text, "columns": ["text"]}
        )

    def take(self, row_ids: Sequence[int], columns: Sequence[str], *, resident: bool = True) -> list[dict[str, Any]]:
        """Rows by row id, in the order asked. With ``resident`` (for rows this version's legs
        returned) the columns held in memory come from there: the narrow ones always, the wide
        ones when ``prewarm`` loaded them. From the files alone a row deleted in this version is
        left out; a row id of no fragment of it raises."""
        ids = np.asarray(row_ids, dtype=np.uint64)
        columns, absent = self._present(columns)
        found: dict[str, Any] = {}
        if resident and self._resident is not None:
            found.update(self._resident.gather(self.dataset, ids, [c for c in columns if c in RESIDENT_COLUMNS]))
            wide = [c for c in columns if c not in found]
            found.update(self._resident.gather(self.dataset, ids, wide, on_demand=False) or {})
        rest = [c for c in columns if c not in found]
        if rest:
            table = self.dataset._take_rows(ids.tolist(), columns=rest)
            found.update((name, table.column(name)) for name in table.column_names)
        return _as_rows(found, absent)

    def rows_where(self, where: str, columns: Sequence[str], *, with_row_id: bool = False) -> list[dict[str, Any]]:
        columns, absent = self._present(self.leg_columns(columns))
        table = self.dataset.to_table(columns=columns, filter=where, with_row_id=with_row_id)
        return _as_rows({name: table.column(name) for name in table.column_names}, absent)


def _as_rows(columns: dict[str, Any], absent: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Rows as dicts from Arrow columns of one length, ``live_span`` read back into the three
    time columns (read column by column, which costs less than Arrow's row-wise ``to_pylist``),
    and None for each of the ``absent`` columns."""
    values: dict[str, list[Any]] = {}
    for name, array in columns.items():
        if name == "live_span":
            spans = pc.list_flatten(array).to_numpy().reshape(-1, 3).T.tolist()
            values["valid_at"] = spans[0]
            values["invalid_at"] = [None if v == OPEN_END else v for v in spans[1]]
            values["expires_at"] = [None if v == OPEN_END else v for v in spans[2]]
        elif name == "vector":  # rows of one matrix: a list of Python floats per row cost ~25 µs a row
            width = array.type.list_size
            values[name] = list(pc.list_flatten(array).to_numpy(zero_copy_only=False).reshape(-1, width))
        else:
            values[name] = array.to_pylist()
    names = list(values)
    rows = [dict(zip(names, row)) for row in zip(*values.values())]
    for row in rows if absent else ():
        row.update((name, None) for name in absent)
    return rows


class SnapshotSource:
    """The latest version of one table, checked on every call (another process may have written).

    Snapshots share the first dataset's session, so the vector and text indexes are loaded into
    memory once per process, not once per version; and one ``ResidentColumns``.
    """

    def __init__(self, uri: Path, resident: ResidentColumns | None = None) -> None:
        self.uri = str(uri)
        self._base: Any = None
        self._latest: IndexSnapshot | None = None
        self._lock = threading.Lock()
        self.resident = resident or ResidentColumns()
        self._appended: deque[tuple[Any, pa.Table]] = deque(maxlen=_APPENDED_KEPT)

    def latest(self) -> IndexSnapshot:
        with self._lock:
            if self._base is None:
                self._base = lance.dataset(self.uri)
            version = self._base.latest_version
            if self._latest is None or self._latest.version != version:
                self._latest = IndexSnapshot(self._base.checkout_version(version), self.resident)
                self.resident.prune(self._latest.dataset)
            return self._latest

    def appended(self, committed: Any, rows: pa.Table) -> None:
        """``rows`` were appended by this process as the version ``committed`` (the dataset its
        append answered, whose one new fragment holds them in order): kept for
        ``hold_appended``, if small (a bulk write's fragments are loaded as searches read them)."""
        if rows.nbytes <= _APPENDED_MAX_BYTES:
            self._appended.append((committed, rows))

    def hold_appended(self) -> int:
        """Hold the fragments of the appends ``appended`` kept from the rows written
        (``ResidentColumns.seed``), so no search reads them back: for the upkeep thread, after
        the writes were answered. Answers how many it held."""
        held = 0
        while self._appended:
            try:
                committed, rows = self._appended.popleft()
            except IndexError:  # another thread took the last one
                break
            try:
                held += self._hold_appended(committed, rows)
            except (OSError, ValueError, TypeError, pa.ArrowException) as exc:
                # The rows are written either way; only the read a search saves is lost.
                log.warning("an appended fragment is read back instead of held from its rows: %s", exc)
        return held

    def _hold_appended(self, dataset: Any, rows: pa.Table) -> int:
        if dataset.has_stable_row_ids:
            return 0
        # Fragment ids only grow: the append's one new fragment is the version's highest.
        fragment = max(dataset.get_fragments(), key=lambda f: f.fragment_id, default=None)
        if fragment is None or fragment.metadata.physical_rows != rows.num_rows:
            return 0
        return int(self.resident.seed(fragment, rows, dataset.schema))

    def prewarm(self, *, hit_columns: bool = True, vector_budget_bytes: int = 0) -> int:
        """Load every index of the latest version into the shared cache (the vector index's
        partitions are otherwise read from disk the first time a query probes them), and its
        ``RESIDENT_COLUMNS`` (and ``WIDE_HIT_COLUMNS`` with ``hit_columns``, the stored vectors
        while they take at most ``vector_budget_bytes``); answers the bytes held."""
        self.resident.vector_budget = vector_budget_bytes
        # the vector leg's copies of each namespace's held vectors: as much again at most
        self.resident.held_vectors.max_bytes = vector_budget_bytes
        snapshot = self.latest()
        dataset = snapshot.dataset
        for index in dataset.describe_indices():
            dataset.prewarm_index(index.name)
        names = [c for c in snapshot.leg_columns(dataset.schema.names) if c in RESIDENT_COLUMNS]
        names += list(WIDE_HIT_COLUMNS) if hit_columns else []
        names += list(HELD_COLUMNS) if snapshot.resident and self.resident.holds_vectors(dataset) else []
        held = self.resident.load(dataset, names) if snapshot.resident else 0
        return int(dataset.session().index_cache_size_bytes()) + held

    def reset(self) -> None:
        """Forget the table: it was dropped and made anew (its versions start again)."""
        with self._lock:
            self._base = None
            self._latest = None
            self.resident.clear()
