"""Who waits for whom around the retrieval index: a commit does not wait for an index write, a
search with nothing queued takes none of the store's locks, and the upkeep thread (``tend``)
writes, settles and folds beside writers and searches without losing or doubling a row.

Index writes are held open through a port implementation (``tests.index_faults``)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from memory_core import Memory
from memory_core.adapters.duckdb import DuckDBHome
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.adapters.lance.projector import TEND_FOLD_AT_APPENDS
from memory_core.api.upkeep import IndexUpkeep
from tests.core.test_threads import RUN, assert_index_is_the_store, mixed_load, run_threads, value
from tests.index_faults import IndexFaults


def test_commits_go_on_while_the_index_is_written(home, clock):
    """A flush takes the queue under the store's lock and writes the index after letting go of it:
    a write commits while an index write is still in progress, and both reach the index in order."""
    faults = IndexFaults()
    with Memory.open(home, clock=clock, embedder="hashing", open_index=faults.open_index) as memory:
        tool = memory.for_run(RUN)
        tool.set("first", value("first"))
        memory.flush()
        tool.set("second", value("second"))
        faults.append_gate = threading.Event()
        flushing = threading.Thread(target=memory.flush)
        flushing.start()
        assert faults.held.wait(timeout=30)  # the flush is writing "second" to the index
        committed = threading.Event()
        writer = threading.Thread(target=lambda: (tool.set("third", value("third")), committed.set()))
        writer.start()
        committed_while_writing = committed.wait(timeout=30)
        faults.append_gate.set()
        flushing.join(timeout=30)
        writer.join(timeout=30)
        faults.append_gate = None
        assert committed_while_writing
        assert_index_is_the_store(memory, tool)


def test_a_search_with_nothing_queued_does_not_wait_for_a_write_holding_the_store(home, clock):
    """Once the queue is written, a search takes none of the store's locks (its flush has nothing
    to do, and the notes on failed index writes and queued extraction are read from caches): a
    write's read-decide-commit holding the store does not hold it up."""
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        tool.set("city", value("lisbon"))
        assert tool.recall(value("lisbon"), recipe="bm25_only", k=3).hits  # writes the queue
        found: list[Any] = []
        done = threading.Event()

        def search() -> None:
            found.append(tool.recall(value("lisbon"), recipe="bm25_only", k=3))
            done.set()

        with memory.session.locked():
            worker = threading.Thread(target=search)
            worker.start()
            answered_while_held = done.wait(timeout=30)
        worker.join(timeout=30)
        assert answered_while_held
        assert [h.key for h in found[0].hits] == ["city"]


def test_tend_writes_the_queue_and_folds_appended_fragments(home, clock):
    """``tend_index`` (the service's upkeep) writes what is queued, so a later search has nothing
    to write, and folds the appended fragments once enough wait; nothing to do answers False."""
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        for n in range(TEND_FOLD_AT_APPENDS):
            tool.set(f"k{n}", value("k", n))
            assert memory.index_queued() == 1
            assert memory.tend_index()
            assert memory.index_queued() == 0
        assert memory.projector.status()["unsettled_appends"] == 0  # folded at the threshold
        assert not memory.tend_index()
        tool.set("k1", value("k", 1, "again"))  # a revision: its older row is hidden, then settled
        assert memory.tend_index()
        assert tool.recall(value("k", 1, "again"), recipe="bm25_only", k=3).hits[0].key == "k1"
        assert_index_is_the_store(memory, tool)


def test_upkeep_searches_and_writes_on_many_threads_leave_the_index_exactly_the_store(tmp_path, clock):
    """The mixed load of writers and searchers with a thread tending the index all along (as the
    service runs it): nothing deadlocks, and the index ends exactly the store."""
    faults = IndexFaults(append_delay_s=0.002)
    with Memory.open(tmp_path / "home", clock=clock, embedder="hashing", open_index=faults.open_index) as memory:
        upkeep = IndexUpkeep(memory, 0.001).start()
        try:
            run_threads([mixed_load(memory, n) for n in range(4)])
        finally:
            upkeep.stop()
        assert upkeep.failed == 0 and upkeep.tended > 0
        assert_index_is_the_store(memory, memory.for_run(RUN))


def test_the_stored_watermark_never_passes_a_replaced_row_still_in_the_table(home, clock):
    """A settling flush decides to store its watermark, lets go of the writer lock, and a revision
    is flushed before it stores it: the stored watermark must stay below the revision (a restart
    replays from it, and only a replay deletes a replaced row this process no longer filters)."""
    faults = IndexFaults()
    with Memory.open(home, clock=clock, embedder="hashing", open_index=faults.open_index) as memory:
        tool, projector = memory.for_run(RUN), memory.projector
        tool.set("city", value("lisbon"))
        memory.flush()
        tool.set("pet", value("cat"))  # the settling flush's write
        faults.append_gate = threading.Event()
        settling = threading.Thread(target=memory.flush)
        settling.start()
        assert faults.held.wait(timeout=30)
        with memory.session.locked():  # where the settling flush records its watermark
            gate, faults.append_gate = faults.append_gate, None
            gate.set()
            assert projector.index.writing.acquire(timeout=30)  # it wrote, and let go of the writer
            try:
                tool.set("city", value("porto"))  # a revision: the older row is hidden, not deleted
                projector.flush(settle=False)
            finally:
                projector.index.writing.release()
            revised_at = memory.store.versions.last_seq
        settling.join(timeout=30)
        assert projector.index.unsettled[0] == 1
        assert memory.store.projections.index_watermark() < revised_at


def test_tend_settles_rows_a_failed_settle_left_though_nothing_is_queued(home, clock):
    """Replaced rows a failed settle left behind (past the threshold) are deleted by the next
    ``tend``, with nothing queued to write."""
    from memory_core.adapters.lance.projector import SETTLE_AT_ROWS

    faults = IndexFaults()
    with Memory.open(home, clock=clock, embedder="hashing", open_index=faults.open_index) as memory:
        tool = memory.for_run(RUN)
        for n in range(SETTLE_AT_ROWS + 2):
            tool.set(f"k{n}", value("k", n))
        memory.flush()
        faults.settle_failing = OSError("no space left on device")
        for n in range(SETTLE_AT_ROWS + 2):
            tool.set(f"k{n}", value("k", n, "again"))
        tool.recall(value("k", 0, "again"), recipe="bm25_only", k=3)  # writes; its settle fails
        assert memory.index_queued() == 0
        assert memory.projector.status()["unsettled_rows"] >= SETTLE_AT_ROWS
        faults.settle_failing = None
        assert memory.tend_index()
        assert memory.projector.status()["unsettled_rows"] == 0
        assert_index_is_the_store(memory, tool)


class LedgerFailingOnce:
    """``ProjectionLedger``: the home's, but the first failure it is asked to record raises."""

    def __init__(self, inner: Any) -> None:
        self._inner, self.refused = inner, 0

    def record_projection_failure(self, *args: Any) -> None:
        if not self.refused:
            self.refused += 1
            raise OSError("the store is briefly unwritable")
        self._inner.record_projection_failure(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class StoreWithLedger:
    """``Store``: a real home's ports, its projection ledger a ``LedgerFailingOnce``."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.projections = inner, LedgerFailingOnce(inner.projections)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_failed_index_write_whose_record_failed_is_recorded_by_the_next_flush(home, clock):
    """An index write fails, and so does recording it for repair: the failure is kept and the
    next flush records it (the search before it fails instead of answering without a note)."""
    faults = IndexFaults()
    store = StoreWithLedger(DuckDBHome.open(home))
    with Memory(store, clock, embedder=HashingEmbedder(), open_index=faults.open_index) as memory:
        tool = memory.for_run(RUN)
        tool.set("city", value("lisbon"))
        memory.flush()
        faults.failing = OSError("no space left on device")
        tool.set("pet", value("cat"))
        with pytest.raises(OSError):
            tool.recall(value("cat"), recipe="bm25_only", k=3)
        faults.failing = None
        found = tool.recall(value("cat"), recipe="bm25_only", k=3)
        assert store.projections.refused == 1
        assert memory.projector.status()["pending_repairs"] == 1
        assert any("not in the index yet" in note for note in found.notes), found.notes
        assert memory.repair_projections() == 1
        assert [h.key for h in tool.recall(value("cat"), recipe="bm25_only", k=3).hits] == ["pet"]


class LedgerWatermarkFailingOnce(LedgerFailingOnce):
    """``ProjectionLedger``: the home's, but the first read of the index watermark raises."""

    def index_watermark(self) -> int:
        if not self.refused:
            self.refused += 1
            raise OSError("the store is briefly unreadable")
        return self._inner.index_watermark()

    def record_projection_failure(self, *args: Any) -> None:
        self._inner.record_projection_failure(*args)


def test_a_catch_up_that_failed_is_tried_again_by_the_next_flush(home, clock):
    """Facts written while no index was open are projected the first time the index is needed;
    if reading how far the index got fails then, the next flush tries again."""
    with Memory.open(home, clock=clock) as memory:  # no embedder: the write is not indexed
        memory.for_run(RUN).set("city", value("lisbon"))
    store = StoreWithLedger(DuckDBHome.open(home))
    store.projections = LedgerWatermarkFailingOnce(store.inner.projections)
    with Memory(store, clock, embedder=HashingEmbedder()) as memory:
        tool = memory.for_run(RUN)
        with pytest.raises(OSError):
            tool.recall(value("lisbon"), recipe="bm25_only", k=3)
        assert [h.key for h in tool.recall(value("lisbon"), recipe="bm25_only", k=3).hits] == ["city"]
