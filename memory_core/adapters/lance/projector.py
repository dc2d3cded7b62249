"""Keeping the retrieval index in step with the authoritative store: the ``IndexSink`` over Lance.

DuckDB is written first; the index second, behind it: a write queues the states it changed
(with the vectors it already computed) and the queue is flushed in one index write when a read
needs the index (search, a peer load), when it grows past ``flush_at`` rows, and at close. So a
search always sees the writes made before it, and a point write does not pay an index round trip.

The store's global sequence number marks how far the index has caught up (``index_seq``). Rows
appended after it (by a process that crashed before its flush, or one opened without an
embedder) are re-projected the first time the index is needed. A failed index write is recorded
in ``projection_failures`` and repaired later: it never fails the primary write.

Many threads share one projector. Everything that reads or moves the queue, the watermark or the
table runs under the store's lock (``versions.locked()``, re-entrant; a commit enqueues under it):
a flush never drops a state enqueued while it takes the queue, two flushes never write one fact
out of order, and the watermark never passes a state that is not written. The lock is always
taken before anything the projector calls takes (the store's own statements take it too).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from ...identity import Namespace
from ...model import FactVersion
from ...ports import Clock, Embedder, IndexConsistency, NewRows, ProjectionLedger, VersionLog
from ...texts import index_text
from ...vectors import VectorRows, gather_rows
from .index import LanceIndex
from .rows import index_table, rows_of_fields, schema

log = logging.getLogger(__name__)
_INDEX_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memcore-index")
# How many rows no longer served, or appended fragments, a search's flush lets wait before it
# settles them (one delete: about 20 ms at 100k rows; folding 32 fragments about 0.1 s).
SETTLE_AT_ROWS = 64
COMPACT_AT_APPENDS = 32
# Seqs the stored watermark may lag what the index holds (a restart re-projects at most these).
WATERMARK_LAG = 256
Progress = Callable[[int, int], None]
Indexable = Callable[[FactVersion], bool]


class IndexProjector:
    def __init__(
        self,
        versions: VersionLog,
        projections: ProjectionLedger,
        index: LanceIndex,
        embedder: Embedder,
        clock: Clock,
        indexable: Indexable,
        *,
        flush_at: int = 256,
    ) -> None:
        self.versions = versions
        self.projections = projections
        self.index = index
        self.embedder = embedder
        self.clock = clock
        self.indexable = indexable
        self.flush_at = flush_at
        self._pending: dict[str, FactVersion] = {}
        self._vectors: list[Mapping[str, np.ndarray]] = []  # as enqueued: a later one wins
        self._caught_up = False
        self._replayed: set[str] = set()  # facts the index may already hold: replace, never append
        # Rows appended after this point are this process's own writes, queued as they happen;
        # only rows before it, past the watermark, can be missing from the index.
        self._horizon = versions.last_seq
        # How far the index has caught up (``_written``) and how far the store says so (``_stored``;
        # one statement and a commit, 7 ms at 100k facts). Stored only when no replaced row waits to
        # be settled, so that everything past the stored watermark is what a restart replays, and
        # a replay replaces every row of its facts (``_write``).
        self._written = self._stored = -1

    def _embed_states(self, states: Sequence[FactVersion]) -> np.ndarray:
        return self.embedder.embed([index_text(s.key, s.value) for s in states])

    def enqueue(
        self, states: Sequence[FactVersion], vectors: Mapping[str, np.ndarray] | None = None, *, hold: bool = False
    ) -> None:
        """Queue the latest state of each fact for the index; ``vectors`` saves re-embedding.
        ``hold``: do not flush here even if the queue is long (the caller flushes next)."""
        with self.versions.locked():
            for state in states:
                known = self._pending.get(state.fact_id)
                if known is None or known.version <= state.version:
                    self._pending[state.fact_id] = state
            if vectors:
                self._vectors.append(vectors)
            if len(self._pending) >= self.flush_at and not hold:
                self.flush()

    def _catch_up(self) -> None:
        if self._caught_up:
            return
        self._caught_up = True
        behind = self.versions.rows_since(self.projections.index_watermark(), self._horizon)
        if behind:
            log.info("index is %d facts behind the store; projecting them", len(behind))
            self._replayed.update(behind)
            self.enqueue(self.versions.latest_states(behind), hold=True)  # the flush calling this writes them

    def queued(self) -> int:
        return len(self._pending)  # read without the lock: a gauge, not a decision

    def flush(self, new_rows: NewRows | None = None, *, settle: bool = True) -> int:
        """Write every queued state to the index. Returns how many facts were written or dropped.
        A read-only home has nothing queued and may not move the watermark: nothing to do.

        ``new_rows``: index rows a caller built for facts the index has never held (a batch's
        fresh entries); they are appended in the same write as the queue's new facts, and the
        watermark moves past them only once they are written.

        ``settle``: also delete the rows that newer states replaced and fold the appended
        fragments (``LanceIndex.settle``), leaving one row per fact. A search passes False: the
        rows it must not see are filtered as it reads, and they are settled in one go once
        ``SETTLE_AT_ROWS`` such rows or ``COMPACT_AT_APPENDS`` appends wait."""
        if self.versions.read_only:
            if new_rows is not None:
                new_rows.done()
            return 0
        with self.versions.locked():  # no commit between taking the queue and moving the watermark
            self._catch_up()
            states: list[FactVersion] = []
            if self._pending or new_rows is not None:
                watermark = self.versions.last_seq
                states = list(self._pending.values())
                self._pending, vectors, self._vectors = {}, self._vectors, []
                self._write(states, vectors, new_rows)
                self._written = watermark
            hidden, appends = self.index.unsettled
            settling = (settle and (hidden or appends)) or hidden >= SETTLE_AT_ROWS or appends >= COMPACT_AT_APPENDS
            if settling:
                self._settle()
            if self._written > self._stored and not self.index.unsettled[0]:
                if settle or settling or self._written - self._stored >= WATERMARK_LAG:
                    self.projections.set_index_watermark(self._written)
                    self._stored = self._written
        if new_rows is not None:
            new_rows.done()
        return len(states) + (new_rows.count if new_rows is not None else 0)

    def _settle(self) -> None:
        try:
            self.index.settle()
        # Like an index write: the rows stay filtered (never served) until a later settle succeeds.
        except Exception as exc:  # noqa: BLE001
            log.warning("settling the index failed; its superseded rows stay filtered: %s", exc)

    def _write(
        self,
        states: Sequence[FactVersion],
        vectors: Sequence[Mapping[str, np.ndarray]],
        new_rows: NewRows | None = None,
    ) -> None:
        indexed = [self.indexable(s) for s in states]
        keep = [s for s, ok in zip(states, indexed) if ok]
        drop = [s.fact_id for s, ok in zip(states, indexed) if not ok]
        try:
            held = [v.keys() for v in vectors]
            missing = (
                [s for s in keep if s.fact_id not in held[0]]
                if len(held) == 1
                else [s for s in keep if not any(s.fact_id in h for h in held)]
            )
            if missing:
                vectors = [*vectors, VectorRows([s.fact_id for s in missing], self._embed_states(missing))]
            # Every state is appended: a fact's first one is new to the index, a later one goes
            # beside the rows it replaces, which stop being served at once and are deleted when the
            # index settles (``LanceIndex.append_states``). A fact replayed after a restart may hold
            # any rows, this very state's included: they are deleted first, never doubled. An empty
            # side builds no table (a build costs a fraction of a millisecond even empty, on every
            # flush), and writing an empty table does nothing.
            replayed = sorted({s.fact_id for s in states} & self._replayed)
            if replayed:
                self.index.delete_facts(replayed)
            served: dict[str, str | None] = {
                s.fact_id: s.id for s in keep if s.fact_id != s.id and s.fact_id not in self._replayed
            }
            served.update((fact_id, None) for fact_id in drop)
            dim = self.index.dim
            appended = index_table(keep, gather_rows(vectors, [s.fact_id for s in keep], dim), dim) if keep else None
            if new_rows is None or not new_rows.count:
                self.index.append_states(appended, served)
                if new_rows is not None:
                    new_rows.run_beside()
            else:  # one append with the caller's rows, on a thread, while the caller works here

                def append_all() -> None:
                    data = new_rows.data()
                    self.index.append_states(data if appended is None else pa.concat_tables([appended, data]), served)

                writing = _INDEX_WRITER.submit(append_all)
                new_rows.run_beside()
                writing.result()
            self._replayed.difference_update(s.fact_id for s in states)
        # The one deliberate catch-all of the core: whatever the index or the embedder raised,
        # the primary write has committed and must stand. The failure is recorded for repair.
        except Exception as exc:  # noqa: BLE001
            failed = list(states)
            if new_rows is not None:
                new_rows.run_beside()
                failed += new_rows.states()
            log.warning("index write failed for %d facts; recorded for repair: %s", len(failed), exc)
            self.projections.record_projection_failure(failed, f"{type(exc).__name__}: {exc}", self.clock.now())

    def repair(self) -> int:
        """Re-project every fact whose index write failed, and every fact ``consistency`` finds
        out of step: write the missing and stale, forget the extra, rewrite the duplicated.
        Returns how many facts were mended."""
        with self.versions.locked():
            self.flush()
            pending = self.projections.pending_projection_failures()
            report = self._consistency(pending)
            rewrite = sorted({*pending, *report.missing, *report.stale, *report.duplicated})
            states = self.versions.latest_states(rewrite)
            keep = [s for s in states if self.indexable(s)]
            # A fact held twice is dropped first: a merge into two target rows would keep both.
            gone = {*report.extra, *report.duplicated, *(s.fact_id for s in states if not self.indexable(s))}
            gone |= set(rewrite) - {s.fact_id for s in states}  # unknown to the log: nothing to serve
            self.index.delete_facts(sorted(gone))
            if keep:
                self.index.upsert(index_table(keep, self._embed_states(keep), self.index.dim))
            if pending:
                self.projections.resolve_projection_failures(pending, self.clock.now())
            mended = len({*rewrite, *report.extra})
        if mended:
            log.info("index repair mended %d facts (%d recorded failures)", mended, len(pending))
        return mended

    def reindex(self, *, batch: int = 4096, progress: Progress | None = None) -> int:
        """Rebuild the index from the store's latest fact states."""
        with self.versions.locked():  # a commit in between would be dropped or doubled
            self._pending, self._vectors, self._caught_up = {}, [], True
            watermark = self.versions.last_seq
            states = [s for s in self.versions.latest_states() if self.indexable(s)]
            tables = []
            for start in range(0, len(states), batch):
                chunk = states[start : start + batch]
                tables.append(index_table(chunk, self._embed_states(chunk), self.index.dim))
                if progress:
                    progress(min(start + batch, len(states)), len(states))
            data = pa.concat_tables(tables) if tables else schema(self.index.dim).empty_table()
            # The table may be dropped before it is written anew (to leave an old file format): until
            # that is done the watermark says nothing is indexed, so a run stopped in between is
            # caught up from the store at the next open.
            self.projections.set_index_watermark(0)
            self.index.replace_all(data)
            self.projections.set_index_watermark(watermark)
            self._written = self._stored = watermark
            pending = self.projections.pending_projection_failures()
            if pending:
                self.projections.resolve_projection_failures(pending, self.clock.now())
            return len(states)

    def build_rows(
        self,
        field: Callable[[str], Sequence[Any]],
        texts: Sequence[str],
        vectors: np.ndarray,
        namespace: Namespace | None = None,
    ) -> pa.Table:
        return rows_of_fields(field, texts, vectors, self.index.dim, namespace)

    def forget(self, fact_ids: Sequence[str]) -> None:
        """A redaction: write the queue, drop the facts' rows, and fold the table so that no older
        version of its files (nor this process's memory) keeps what was redacted."""
        with self.versions.locked():
            self.flush()
            self.index.delete_facts(fact_ids)
            self.index.purge_history()

    def optimize(self, *, cleanup_older_than: timedelta | None = timedelta(days=1)) -> dict[str, Any]:
        with self.versions.locked():  # a compaction racing an index write fails one of them
            self.flush()  # one row per fact first
            return self.index.optimize(cleanup_older_than=cleanup_older_than)

    def status(self) -> dict[str, Any]:
        hidden, appends = self.index.unsettled
        return {
            "rows": self.index.count(),
            "unindexed_rows": self.index.unindexed_rows(),
            # Waiting for the index to settle: rows no longer served (at most), and appends.
            "unsettled_rows": hidden,
            "unsettled_appends": appends,
            "pending_repairs": len(self.projections.pending_projection_failures()),
            "embedder": self.embedder.name,
            "dim": self.embedder.dim,
        }

    def consistency(self) -> IndexConsistency:
        """Does the index agree with the store, fact id by fact id? Written what is queued first,
        as a search would, and read under the store's lock, so no write lands between the reads."""
        with self.versions.locked():
            self.flush()
            return self._consistency(self.projections.pending_projection_failures())

    def _consistency(self, pending: Sequence[str]) -> IndexConsistency:
        return compare(self.versions.latest_states(), self.index.heads(), self.indexable, pending)


def compare(
    latest: Sequence[FactVersion],
    rows: Sequence[tuple[str, str, str]],
    indexable: Indexable,
    pending: Sequence[str] = (),
) -> IndexConsistency:
    """The index's rows (fact id, version id, value JSON) against the facts' latest states."""
    by_fact = {s.fact_id: s for s in latest}
    wanted = {f for f, s in by_fact.items() if indexable(s)}
    held: dict[str, list[tuple[str, str]]] = {}
    for fact_id, version_id, value_json in rows:
        held.setdefault(fact_id, []).append((version_id, value_json))
    stale = [
        f
        for f, found in held.items()
        if f in wanted and any(row != (by_fact[f].id, by_fact[f].value_json) for row in found)
    ]
    return IndexConsistency(
        facts=len(by_fact),
        indexable=len(wanted),
        index_rows=len(rows),
        missing=tuple(sorted(wanted - held.keys())),
        stale=tuple(sorted(stale)),
        extra=tuple(sorted(held.keys() - wanted)),
        duplicated=tuple(sorted(f for f, found in held.items() if f in wanted and len(found) > 1)),
        pending_repair=tuple(sorted(pending)),
    )
