"""The index table's search structures: the text, vector and scalar indexes that ``optimize``
builds, and ``index_appended``, which brings appended rows under them between requests.

A mixin of ``LanceIndex``: it reads the table, the writer lock and the fold event from there.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import lance
import numpy as np

from .writer import one_writer

# ``index_appended`` merges rows into the newest segment of each index while that segment covers
# fewer rows than this, and starts another past it: a merge rewrites the segment it merges into
# (into a 100,000-row base, 0.6 s; into a small delta, 15 to 150 ms: docs/benchmarks.md,
# "Memory service: recall in a write mix, fourth pass").
DELTA_MAX_ROWS = 65_536
# The indexes ``index_appended`` extends: the text and vector ones, which a search's legs read,
# and the bitmaps its prefilter reads. A bitmap that leaves out fragments the text index covers
# costs every filtered text query more than fragments left out of both do (at 100,000 rows, 8
# small fragments so left out: 5.30 ms at p50; left out of both: 4.42; of neither: 3.57;
# docs/benchmarks.md, "Prefilter bitmaps extended with the text index"); the three cost about
# 18 ms more a round. The B-trees stay as ``optimize`` left them, fact_id's above all, which
# deletes read: with every index extended, a killed-and-restarted replica kept a replaced row in
# 3 runs of 9 (``tests/service/test_replicas.py``).
SEARCHED_FIELDS = (["text"], ["vector"], ["namespace"], ["kind"], ["status"])


class SearchStructures:
    """``optimize``, the builds it runs, and the upkeep of appended rows (``index_appended``)."""

    table: Any
    vector_index_min_rows: int
    _source: Any
    _not_folding: Any
    _appended: int | None  # rows appended since the indexes last covered every row (None: unknown)

    def unindexed_rows(self) -> int:
        if self.table is None:
            return 0
        stats = self.table.index_stats("text_idx")
        return 0 if stats is None else int(stats.num_unindexed_rows)

    def note_appended(self, rows: int) -> None:
        """Count rows written outside the indexes (called under the writer lock)."""
        if self._appended is not None:
            self._appended += rows

    @one_writer
    def index_appended(self, at_least: int) -> int:
        """Bring the rows no index covers yet under the text, vector and prefilter indexes
        (``SEARCHED_FIELDS``), once at least ``at_least`` of them wait: merged into the newest
        segment of each index while the text index's newest covers fewer than ``DELTA_MAX_ROWS``
        rows, else into a new one, never into a large base ``optimize`` built (a bitmap left
        with its base alone by an older build is merged into it: at 100,000 rows, about 18 ms).
        Without the store's lock, like a fold (a flush waits for it first). Answers the rows
        indexed (0: fewer waited, or the table has no index to extend)."""
        table = self.table
        if table is None:
            return 0
        if self._appended is None:  # once per process: the count kept since is the table's own
            self._appended = self.unindexed_rows()
        waiting = self._appended
        if waiting < max(1, at_least):
            return 0
        self._not_folding.clear()
        try:
            # On a handle of its own, as a fold: searches read the latest snapshot's.
            dataset = lance.dataset(self._source.uri)
            descriptions = dataset.describe_indices()
            newest = _newest_segment_rows(dataset, descriptions)
            if newest is not None:
                merge = 1 if 0 < newest < DELTA_MAX_ROWS else 0
                searched = [d.name for d in descriptions if list(d.field_names) in SEARCHED_FIELDS]
                dataset.optimize.optimize_indices(num_indices_to_merge=merge, index_names=searched)
            self._appended = 0
        finally:
            self._not_folding.set()
        return waiting if newest is not None else 0

    @one_writer
    def optimize(self, *, cleanup_older_than: timedelta | None = timedelta(days=1)) -> dict[str, Any]:
        """Fold appended rows into the indexes; build an ANN vector index once the table is large."""
        table = self.table
        if table is None:
            return {"rows": 0}
        table.optimize(cleanup_older_than=cleanup_older_than)
        rows = table.count_rows()
        # Named by column: Lance spells the types "IvfFlat", "IvfHnswSq", ...
        has_vector_index = any(list(ix.columns) == ["vector"] for ix in table.list_indices())
        if rows >= self.vector_index_min_rows and not has_vector_index:
            self.build_scalar_indexes()
            self.build_vector_index()
        unindexed = self.unindexed_rows()
        self._appended = unindexed
        return {"rows": rows, "unindexed_rows": unindexed}

    @one_writer
    def build_scalar_indexes(self) -> None:
        """Scalar indexes on the columns every prefilter names: they keep filtered search fast.

        The namespace, status and kind clauses are answered from bitmaps (a B-tree returns every
        matching row id one by one: docs/benchmarks.md, "Bitmap prefilters"); the time columns
        keep B-trees for the full filter, and ``fact_id`` one for the reads that name facts (the
        key-match and graph legs, a later page's rows as the index serves them now)."""
        from lancedb.index import Bitmap, BTree

        existing = {tuple(ix.columns): ix for ix in self.table.list_indices()}
        for column, config, kind in (
            ("namespace", Bitmap(), "Bitmap"),
            ("status", Bitmap(), "Bitmap"),
            ("kind", Bitmap(), "Bitmap"),
            ("valid_at", BTree(), "BTree"),
            ("invalid_at", BTree(), "BTree"),
            ("fact_id", BTree(), "BTree"),
        ):
            old = existing.get((column,))
            if old is not None and old.index_type != kind:
                self.table.drop_index(old.name)  # a replace of another type would add a second index
            self.table.create_index(column, config=config, replace=True)

    @one_writer
    def build_vector_index(self, *, num_partitions: int | None = None) -> None:
        from lancedb.index import IvfFlat

        rows = self.table.count_rows()
        partitions = num_partitions or max(1, int(np.sqrt(rows)))
        self.table.create_index(
            "vector", config=IvfFlat(distance_type="cosine", num_partitions=partitions), replace=True
        )


def _newest_segment_rows(dataset: Any, descriptions: Any) -> int | None:
    """How many rows the newest segment of the text index covers (None: no text index; 0: the
    newest is the only segment, the base, which is never merged into here)."""
    for description in descriptions:
        if description.name == "text_idx":
            segments = sorted(description.segments, key=lambda s: s.dataset_version_at_last_update)
            if len(segments) <= 1:
                return 0
            fragments = {f.fragment_id: f.metadata.physical_rows for f in dataset.get_fragments()}
            return sum(fragments.get(f, 0) for f in segments[-1].fragment_ids)
    return None
