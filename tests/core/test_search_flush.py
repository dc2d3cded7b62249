"""A search writes the index's queue only for its own namespace: another namespace's queued states
are the upkeep's to write, and a search never waits for them; its own, queued or being written by
another flush, land before its legs run (read-your-writes).

Index writes are held open through a port implementation (``tests.index_faults``)."""

from __future__ import annotations

import threading
from typing import Any

from memory_core import Identity, Memory
from tests.core.test_threads import value
from tests.index_faults import IndexFaults

ANA = Identity(tenant="acme", user="ana", agent="helper")
BO = Identity(tenant="acme", user="bo", agent="helper")


def _keys(found: Any) -> list[str]:
    return [hit.key for hit in found.hits]


def test_a_search_leaves_another_namespaces_queue_to_the_upkeep(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        ana, bo = memory.for_run(ANA), memory.for_run(BO)
        ana.set("seed", value("seed"))
        memory.flush()  # the index has caught up with the store (a first flush always writes)
        bo.set("city", value("porto"))
        ana.set("city", value("lisbon"))
        # Ana's state is queued: her search writes the queue, Bo's state with it.
        assert _keys(ana.recall(value("lisbon"), recipe="bm25_only", k=3)) == ["city"]
        assert memory.index_queued() == 0
        bo.set("pet", value("cat"))
        bo.set("city", value("braga"))
        waiting = memory.index_queued()
        assert waiting >= 2
        # Only Bo's states wait: Ana's searches leave them queued.
        assert _keys(ana.recall(value("lisbon"), recipe="bm25_only", k=3)) == ["city"]
        assert _keys(ana.recall(value("cat"), recipe="bm25_only", k=3)) == []
        assert memory.index_queued() == waiting
        # Bo reads his own writes: his search writes what waits for him.
        assert _keys(bo.recall(value("cat"), recipe="bm25_only", k=3)) == ["pet"]
        assert _keys(bo.recall(value("braga"), recipe="bm25_only", k=3)) == ["city"]
        assert _keys(bo.recall(value("porto"), recipe="bm25_only", k=3)) == []
        assert memory.index_queued() == 0


def test_a_search_waits_for_its_namespaces_states_another_flush_is_writing(home, clock):
    """A flush (the upkeep's) has taken Ana's state from the queue and is writing it: a search of
    Ana's namespace waits for that write and finds the state; Bo's search does not wait."""
    faults = IndexFaults()
    with Memory.open(home, clock=clock, embedder="hashing", open_index=faults.open_index) as memory:
        ana, bo = memory.for_run(ANA), memory.for_run(BO)
        bo.set("city", value("porto"))
        ana.set("seed", value("seed"))
        memory.flush()
        ana.set("city", value("lisbon"))
        faults.append_gate = threading.Event()
        flushing = threading.Thread(target=memory.flush)
        flushing.start()
        try:
            assert faults.held.wait(timeout=30)  # the queue is taken: Ana's state is in flight
            assert memory.index_queued() == 0
            # Bo's namespace has nothing queued or in flight: his search does not wait.
            assert _keys(bo.recall(value("porto"), recipe="bm25_only", k=3)) == ["city"]
            found: list[Any] = []
            searching = threading.Thread(
                target=lambda: found.append(ana.recall(value("lisbon"), recipe="bm25_only", k=3))
            )
            searching.start()
            searching.join(timeout=0.5)
            assert searching.is_alive() and not found  # held until Ana's state is written
        finally:
            faults.append_gate.set()
        flushing.join(timeout=30)
        searching.join(timeout=30)
        faults.append_gate = None
        assert _keys(found[0]) == ["city"]


def test_a_failed_append_leaves_the_version_before_it_served(home, clock):
    """An index write that fails while searches read the version before it: they go on reading
    it, the failure is noted by the failed namespace's next search, and the next write lands."""
    faults = IndexFaults()
    with Memory.open(home, clock=clock, embedder="hashing", open_index=faults.open_index) as memory:
        ana, bo = memory.for_run(ANA), memory.for_run(BO)
        bo.set("city", value("porto"))
        memory.flush()
        ana.set("city", value("lisbon"))
        faults.failing = OSError("no space left on device")
        memory.flush()  # Ana's state fails to land: recorded for repair
        faults.failing = None
        assert _keys(bo.recall(value("porto"), recipe="bm25_only", k=3)) == ["city"]
        found = ana.recall(value("lisbon"), recipe="bm25_only", k=3)
        assert _keys(found) == [] and any("not in the index yet" in note for note in found.notes), found.notes
        ana.set("pet", value("cat"))
        assert _keys(ana.recall(value("cat"), recipe="bm25_only", k=3)) == ["pet"]
