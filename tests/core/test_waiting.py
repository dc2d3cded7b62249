"""Reads that must not wait (ports/waiting.py): under ``without_waiting`` a get answered from
memory answers as it always does, and one that would wait on a lock or a store raises
``WouldWait`` and leaves everything as it was, so it can be run again where waiting is allowed."""

from __future__ import annotations

import threading

import pytest

from memory_core import FixedClock, Memory
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.ports.waiting import ReadLock, StoreLock, WouldWait, without_waiting
from tests.conftest import T0, store_snapshot
from tests.waiting_home import ANA, BOB, Held, home_with_facts


def test_a_read_lock_is_taken_when_free_and_refused_when_held_elsewhere():
    lock = ReadLock("a cache")
    with without_waiting():
        with lock:
            pass  # free: taken and let go
    held = Held(lock)
    try:
        with without_waiting(), pytest.raises(WouldWait, match="a cache"):
            with lock:
                pass
    finally:
        held.release()
    with lock:  # outside ``without_waiting`` it waits (here: nothing to wait for any more)
        pass


def test_a_store_lock_is_never_taken_without_waiting_even_when_free():
    lock = StoreLock("the store")
    with without_waiting(), pytest.raises(WouldWait, match="the store"):
        with lock:
            pass
    with lock, lock:  # re-entrant where waiting is allowed
        pass


def test_without_waiting_ends_with_its_block_and_on_its_own_thread():
    lock = StoreLock("the store")
    seen: list[str] = []

    def other_thread() -> None:
        with lock:  # another thread is not under this thread's ``without_waiting``
            seen.append("taken")

    with without_waiting():
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join(5)
    assert seen == ["taken"]
    with lock:
        pass


def test_a_get_held_in_memory_answers_without_waiting_as_it_does_with_waiting(tmp_path):
    home_with_facts(tmp_path / "home")
    with Memory.open(tmp_path / "home", clock=FixedClock(T0), embedder=HashingEmbedder()) as memory:
        ana = memory.for_run(ANA)
        waited = ana.get("city")  # loads ana's namespace
        with without_waiting():
            now = ana.get("city")
            missing = ana.get("no-such-key")
        assert now == waited and now.value == "Lisbon"
        assert missing is None


def test_a_get_that_would_read_the_store_raises_would_wait_and_changes_nothing(tmp_path):
    home_with_facts(tmp_path / "home")
    with Memory.open(tmp_path / "home", clock=FixedClock(T0), embedder=HashingEmbedder()) as memory:
        before = store_snapshot(memory)
        bob = memory.for_run(BOB)
        with without_waiting(), pytest.raises(WouldWait):
            bob.get("city")  # bob's namespace is not in memory yet: loading it reads the store
        assert bob.get("city").value == "Porto"  # run again where waiting is allowed
        with without_waiting(), pytest.raises(WouldWait):
            bob.get("city", known_at=T0)  # the store as it was at an instant: a statement
        assert bob.get("city", known_at=T0).value == "Porto"
        assert store_snapshot(memory) == before


def test_a_get_held_in_memory_does_not_wait_behind_a_write_holding_the_store(tmp_path):
    home_with_facts(tmp_path / "home")
    with Memory.open(tmp_path / "home", clock=FixedClock(T0), embedder=HashingEmbedder()) as memory:
        ana = memory.for_run(ANA)
        ana.get("city")
        held = Held(memory.session.versions.locked())  # a write's read-decide-commit under way
        try:
            with without_waiting():
                assert ana.get("city").value == "Lisbon"
            with without_waiting(), pytest.raises(WouldWait):
                memory.for_run(BOB).get("city")  # not in memory: it would wait for the write
        finally:
            held.release()


def test_over_postgresql_every_get_reads_the_database_so_none_is_answered_without_waiting(tmp_path):
    from tests.pg import on_postgres

    with on_postgres():
        home_with_facts(tmp_path / "home")
        with Memory.open(tmp_path / "home", clock=FixedClock(T0), embedder=HashingEmbedder()) as memory:
            ana = memory.for_run(ANA)
            assert ana.get("city").value == "Lisbon"
            with without_waiting(), pytest.raises(WouldWait):
                ana.get("city")
            assert ana.get("city").value == "Lisbon"
