"""Keeping the retrieval index in step with the authoritative store: the ``IndexSink`` over Lance.

DuckDB is written first; the index second, behind it: a write queues the states it changed
(with the vectors it already computed) and the queue is flushed in one index write when a read
needs the index (search, a peer load), when it grows past ``flush_at`` rows, and at close. So a
search always sees the writes made before it, and a point write does not pay an index round trip.

The store's global sequence number marks how far the index has caught up (``index_seq``). Rows
appended after it (by a process that crashed before its flush, or one opened without an
embedder) are re-projected the first time the index is needed. A failed index write is recorded
in ``projection_failures`` and repaired later: it never fails the primary write.

Many threads share one projector. The queue is read and moved under the store's lock
(``versions.locked()``, re-entrant; a commit enqueues under it), so a flush never drops a state
enqueued while it takes the queue. The table is written under the index's writer lock
(``LanceIndex.writing``), which a flush takes before it lets go of the store's: two flushes write
in the order they took their queues, never one fact out of order, and commits need not wait for
the index write. The watermark moves only past states written. Locks are taken in one order: the
store's, then the writer's, then the served rows'; nothing that holds the writer lock takes the
store's.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from ...identity import Namespace
from ...model import FactVersion
from ...ports import Clock, Embedder, NewRows, ProjectionLedger, VersionLog
from ...texts import index_text
from ...vectors import VectorRows, gather_rows
from .in_flight import InFlight, namespace_of
from .index import LanceIndex
from .mending import Indexable, IndexMending
from .rows import index_table, rows_of_fields

log = logging.getLogger(__name__)
_INDEX_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memcore-index")
# How many rows no longer served, or appended fragments, a search's flush lets wait before it
# settles them (one delete: about 20 ms at 100k rows; folding 32 fragments about 0.1 s).
SETTLE_AT_ROWS = 64
COMPACT_AT_APPENDS = 32
# What ``tend`` (index upkeep between requests, off the search path) lets wait before it folds
# the appended fragments: each one costs every search a few milliseconds per leg (about 25
# appended fragments made a leg 7 ms where 3 left it 4.5: docs/benchmarks.md, "Memory service
# under load, third pass").
TEND_FOLD_AT_APPENDS = 8
TEND_BACKOFF_S = 5.0
# What ``tend`` lets wait outside the indexes before it brings them under (``index_appended``):
# a search compares such rows one by one, its lexical leg at a cost that grows with their number
# (at 100,000 rows, about 0.7 ms a leg with 17 of them, 3.8 ms with 1,100), and an index round
# costs 15 to 190 ms of the upkeep thread (docs/benchmarks.md, "Memory service: recall in a
# write mix, fourth pass").
TEND_INDEX_AT_ROWS = 512
# Seqs the stored watermark may lag what the index holds (a restart re-projects at most these).
WATERMARK_LAG = 256


class IndexProjector(IndexMending):
    """``IndexSink`` over Lance (the module doc); checking and mending in ``IndexMending``."""

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
        follow: Callable[[], object] | None = None,
    ) -> None:
        self.versions = versions
        self.follow = follow  # catches up with other writers of a shared authority (``session.follow``)
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
        # Enqueue calls made, and how many of them the index has written: equal, nothing waits,
        # and a search need not take the store's lock to learn so (``flush``). Written starts
        # behind, so the first flush (which catches up with the store) always runs.
        self._enqueued, self._flushed_through = 0, -1
        # Index writes that failed, waiting to be recorded once no index lock is held (``_record``).
        self._failures_waiting: list[tuple[list[FactVersion], str]] = []
        self._failures_lock = threading.Lock()
        self._in_flight = InFlight()  # states taken from the queue, not yet written
        self._tend_backoff_until = 0.0  # monotonic seconds: a failed settle or fold waits until then

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
            self._enqueued += 1
            if len(self._pending) >= self.flush_at and not hold:
                self.flush()

    def _catch_up(self) -> None:
        if self._caught_up:
            return
        behind = self.versions.rows_since(self.projections.index_watermark(), self._horizon)
        if behind:
            log.info("index is %d facts behind the store; projecting them", len(behind))
            self.replay(behind)
        self._caught_up = True  # only once read: a read that failed is tried again by the next flush

    def replay(self, fact_ids: Sequence[str]) -> None:
        if fact_ids:
            self._replayed.update(fact_ids)
            self.enqueue(self.versions.latest_states(fact_ids), hold=True)  # the next flush writes them

    def queued(self) -> int:
        return len(self._pending)  # read without the lock: a gauge, not a decision

    def _nothing_queued(self) -> bool:
        """True when every enqueue so far has been written (read without the lock: ``enqueued``
        first, so a write acknowledged before this call is either counted written or seen
        waiting)."""
        enqueued = self._enqueued
        # A failed write not yet recorded: the search's flush records it, so its note says so.
        return self._flushed_through >= enqueued and not self._failures_waiting

    def flush(
        self,
        new_rows: NewRows | None = None,
        *,
        settle: bool = True,
        fold: bool = True,
        namespace: Namespace | None = None,
    ) -> int:
        """Write every queued state to the index. Returns how many facts were written or dropped.
        A read-only home has nothing queued and may not move the watermark: nothing to do.

        ``namespace`` (a search's, with ``settle=False``): the queue is written only when a state of
        that namespace waits in it or is being written, or a failed write waits to be recorded;
        other namespaces' states are left to the upkeep, so a search never pays for them.

        ``new_rows``: index rows a caller built for facts the index has never held (a batch's
        fresh entries); they are appended in the same write as the queue's new facts, and the
        watermark moves past them only once they are written.

        ``settle``: also delete the rows that newer states replaced and fold the appended
        fragments (``LanceIndex.settle``), leaving one row per fact. A search passes False: the
        rows it must not see are filtered as it reads, and they are settled in one go once
        ``SETTLE_AT_ROWS`` such rows or ``COMPACT_AT_APPENDS`` appends wait. With nothing queued
        it returns at once, without the store's lock.

        ``fold``: settling also folds the appended fragments; ``tend`` passes False and folds
        at its own threshold."""
        if self.versions.read_only:
            if new_rows is not None:
                new_rows.done()
            return 0
        if self.follow is not None:
            self.follow()  # what other replicas wrote is queued before the check below
        if not settle and new_rows is None and (self._nothing_queued() or self._nothing_queued_in(namespace)):
            return 0  # a search after the upkeep thread (or another search) wrote its states
        # The queue is taken under the store's lock (no commit in between), and the index's writer
        # lock is taken before the store's is let go: flushes write in the order they took their
        # queues, while commits go on beside the index write (unless the caller holds the store's
        # lock itself: a repair, a bulk commit). Nothing below takes the store's lock while the
        # writer lock is held (failures and the watermark are recorded after). A bulk commit's
        # rows are appended on a worker thread, which takes the writer lock itself; its caller
        # holds the store's lock throughout, so no other flush can take a queue meanwhile.
        hand_over = new_rows is None or not new_rows.count
        self.index.wait_for_fold()  # not behind a fold while holding the store's lock (when we can)
        with self.versions.locked():
            if self.follow is not None:
                # Again under the lock: another replica may have committed since the catch-up
                # above, and the watermark below covers its rows, so they must be in the queue
                # (a restart replays only what lies past the stored watermark).
                self.follow()
            self._catch_up()
            taken, watermark = self._enqueued, self.versions.last_seq
            states = list(self._pending.values())
            flying = self._in_flight.take_off(states)  # before the queue empties: never in neither
            self._pending, vectors, self._vectors = {}, self._vectors, []
            indexed = self._indexable(states)  # reads tenant settings, under the store's lock
            if hand_over:
                self.index.writing.acquire()  # held on past the store's lock: released below
        try:
            failed = self._write(states, indexed, vectors, new_rows) if states or new_rows is not None else None
            # Under the writer lock on a batch's path too (its append took the lock on a worker, or
            # never did if it failed first): an earlier flush still writing is not counted done.
            with self.index.writing:
                if failed is not None:  # before the watermark moves past them (``_record``)
                    with self._failures_lock:
                        self._failures_waiting.append(failed)
                if states or new_rows is not None:
                    self._written = max(self._written, watermark)
                self._flushed_through = max(self._flushed_through, taken)
                hidden, appends = self.index.unsettled
                settling = (settle and (hidden or appends)) or hidden >= SETTLE_AT_ROWS or appends >= COMPACT_AT_APPENDS
                if settling:
                    self._settle(fold=fold)
                store_watermark = not self.index.unsettled[0] and (
                    settle or settling or self._written - self._stored >= WATERMARK_LAG
                )
        finally:
            self._in_flight.land(flying)  # after a failure is queued for its note, as after a write
            if hand_over:
                self.index.writing.release()
        if self._failures_waiting or store_watermark:
            self._record(store_watermark)
        if new_rows is not None:
            new_rows.done()
        return len(states) + (new_rows.count if new_rows is not None else 0)

    def _nothing_queued_in(self, namespace: Namespace | None) -> bool:
        """True when no state of ``namespace`` waits in the queue or is being written, the queue
        has caught up with the store, and no failed write waits to be recorded. Read without the
        store's lock, in the order the states move: the queue, then the states in flight (a flush
        counts them before it empties the queue), then the failures (queued before the states
        land), so a state is seen at every step of its way."""
        if namespace is None or not self._caught_up:
            return False
        if any(namespace_of(s) == namespace for s in list(self._pending.values())):
            return False
        return not self._in_flight.holds(namespace) and not self._failures_waiting

    def _record(self, store_watermark: bool) -> None:
        """Record the index writes that failed, then (``store_watermark``) how far the index has
        caught up, in that order and under the store's lock: a stored watermark never passes a
        failure not yet recorded for repair."""
        with self.versions.locked():
            # Read together under the writer lock (store's, then writer's: the order flushes take
            # them in): how far the index is written, and whether rows wait hidden. A flush that
            # appends after this moves neither; a failure this covers was queued before it moved.
            with self.index.writing:
                written, hidden = self._written, self.index.unsettled[0]
            with self._failures_lock:
                waiting, self._failures_waiting = self._failures_waiting, []
            for n, (states, error) in enumerate(waiting):
                log.warning("index write failed for %d facts; recorded for repair: %s", len(states), error)
                try:
                    self.projections.record_projection_failure(states, error, self.clock.now())
                except BaseException:  # kept for the next flush; no watermark past them meanwhile
                    with self._failures_lock:
                        self._failures_waiting[:0] = waiting[n:]
                    raise
            if store_watermark and not hidden and written > self._stored:
                self.projections.set_index_watermark(written)
                self._stored = written

    def tend(self) -> bool:
        """Index upkeep between requests, for a thread of its own (the memory service runs one):
        write what is queued, delete the replaced rows once ``SETTLE_AT_ROWS`` wait, fold the
        appended fragments once ``TEND_FOLD_AT_APPENDS`` wait, and bring the rows outside the
        indexes under them once ``TEND_INDEX_AT_ROWS`` wait, those two without the store's lock
        (a flush waits for a fold or an index round to end before it takes the store's lock). So searches seldom
        find anything to write, settle or fold themselves. After a failed settle or fold it lets
        them be for ``TEND_BACKOFF_S``. True when it did something."""
        if self.versions.read_only:
            return False
        worked = False
        if self.follow is not None:
            self.follow()  # an idle replica converges with the others' writes too
        if not self._nothing_queued():
            self.flush(settle=False, fold=False)
            worked = True
        self.index.hold_appended()  # what was appended, held before a search reads it back
        if time.monotonic() < self._tend_backoff_until:
            return worked
        try:
            if self.index.unsettled[0] >= SETTLE_AT_ROWS:
                self.index.settle(compact=False)
                worked = True
            if self.index.unsettled[1] >= TEND_FOLD_AT_APPENDS:
                self.index.compact_small()
                self.index.hold_small()  # the folded fragment read here, not by a search
                worked = True
            if self.index.index_appended(TEND_INDEX_AT_ROWS):
                worked = True
        except Exception as exc:  # noqa: BLE001 - like a failed settle: the rows stay filtered, still served right
            self._tend_backoff_until = time.monotonic() + TEND_BACKOFF_S
            log.warning("index upkeep could not settle or fold the index; trying again later: %s", exc)
        return worked

    def _settle(self, *, fold: bool = True) -> None:
        try:
            self.index.settle(compact=fold)
        # Like an index write: the rows stay filtered (never served) until a later settle succeeds.
        except Exception as exc:  # noqa: BLE001
            log.warning("settling the index failed; its superseded rows stay filtered: %s", exc)

    def _indexable(self, states: Sequence[FactVersion]) -> list[bool] | Exception:
        """Which states the index serves; what it raised when that could not be told (the states
        are then recorded for repair, as a failed write)."""
        try:
            return [self.indexable(s) for s in states]
        except Exception as exc:  # noqa: BLE001 - like a failed index write: the commit stands
            return exc

    def _write(
        self,
        states: Sequence[FactVersion],
        indexed: Sequence[bool] | Exception,
        vectors: Sequence[Mapping[str, np.ndarray]],
        new_rows: NewRows | None = None,
    ) -> tuple[list[FactVersion], str] | None:
        """Write ``states`` (``indexed``: which of them the index serves) and ``new_rows``; the
        states that failed and why, for the caller to record once it holds no index lock."""
        try:
            if isinstance(indexed, Exception):
                raise indexed
            keep = [s for s, ok in zip(states, indexed) if ok]
            drop = [s.fact_id for s, ok in zip(states, indexed) if not ok]
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
            return None
        # The one deliberate catch-all of the core: whatever the index or the embedder raised,
        # the primary write has committed and must stand. The failure is recorded for repair.
        except Exception as exc:  # noqa: BLE001
            failed = list(states)
            if new_rows is not None:
                new_rows.run_beside()
                failed += new_rows.states()
            return failed, f"{type(exc).__name__}: {exc}"

    def build_rows(
        self,
        field: Callable[[str], Sequence[Any]],
        texts: Sequence[str],
        vectors: np.ndarray,
        namespace: Namespace | None = None,
    ) -> pa.Table:
        return rows_of_fields(field, texts, vectors, self.index.dim, namespace)
