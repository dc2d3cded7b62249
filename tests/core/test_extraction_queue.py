"""The deferred extraction queue: leases, backoff, unreachable providers, retries, a killed worker."""

import os
import signal
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

from memory_core import FixedClock, Identity, Memory
from memory_core.errors import InvalidInput
from memory_core.llm import LLMRefused, LLMUnavailable
from tests.conftest import store_snapshot

TALK = [{"role": "user", "name": "Ana", "content": "I live in Lisbon."}]


@pytest.fixture
def ana(indexed_memory):
    return indexed_memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session="s1"))


class Failing:
    """An extractor that fails as told, then works."""

    name = "failing"

    def __init__(self, *errors):
        self.errors = list(errors)

    def extract(self, turns, *, session_date):
        from memory_core.extraction.rules import RuleExtractor

        if self.errors:
            raise self.errors.pop(0)
        return RuleExtractor().extract(turns, session_date=session_date)


def test_a_queued_conversation_is_read_later_and_search_says_so_meanwhile(indexed_memory, ana):
    queue_id = ana.enqueue_extraction(TALK, session="s1")
    assert ana.get("ana:lives_in") is None  # nothing extracted on the caller's path
    found = ana.recall("where does Ana live")
    assert found.pending_extraction == 1 and any("still queued" in n for n in found.notes)
    assert ana.extraction_queue_status() == {"pending": 1, "running": 0, "done": 0, "failed": 0}
    assert indexed_memory.run_extraction_queue(worker="w1") == {
        "done": 1,
        "failed": 0,
        "waiting": 0,
        "lease_lost": 0,
        "claimed": 1,
    }
    assert ana.get("ana:lives_in").value == "Ana lives in Lisbon"
    [status] = ana.extraction_status([queue_id])
    assert status.status == "done" and status.result["written"] == ["ana:lives_in"]
    assert ana.recall("where does Ana live").pending_extraction == 0


def test_a_bad_transcript_is_refused_when_queued(indexed_memory, ana):
    before = store_snapshot(indexed_memory)
    with pytest.raises(InvalidInput):
        ana.enqueue_extraction([{"role": "user"}])
    assert store_snapshot(indexed_memory) == before


def test_an_unreachable_provider_spends_no_attempt_and_backs_off(indexed_memory, ana, clock):
    indexed_memory.extractor = Failing(LLMUnavailable("down", reached=False), LLMUnavailable("429s", reached=True))
    queue_id = ana.enqueue_extraction(TALK, max_attempts=3)
    assert indexed_memory.run_extraction_queue(worker="w1")["waiting"] == 1
    [row] = ana.extraction_status([queue_id])
    assert row.status == "pending" and row.attempts == 0 and "down" in row.last_error
    assert indexed_memory.run_extraction_queue(worker="w1")["claimed"] == 0  # not due yet: backoff
    clock.advance(timedelta(minutes=1))
    assert indexed_memory.run_extraction_queue(worker="w1")["waiting"] == 1
    assert ana.extraction_status([queue_id])[0].attempts == 1  # reached, failed: an attempt spent
    clock.advance(timedelta(minutes=2))
    assert indexed_memory.run_extraction_queue(worker="w1")["done"] == 1


def test_a_refusal_fails_at_once_and_retry_puts_the_callers_own_jobs_back(indexed_memory, ana, clock):
    indexed_memory.extractor = Failing(LLMRefused("bad request", http_status=400))
    queue_id = ana.enqueue_extraction(TALK)
    assert indexed_memory.run_extraction_queue(worker="w1")["failed"] == 1
    assert ana.extraction_status()[0].status == "failed"
    bob = indexed_memory.for_run(Identity(tenant="acme", user="ana", agent="other-agent"))
    assert bob.retry_extraction() == [] and bob.extraction_status() == []  # not bob's jobs
    assert ana.retry_extraction() == [queue_id]
    assert indexed_memory.run_extraction_queue(worker="w1")["done"] == 1


def test_attempts_run_out(indexed_memory, ana, clock):
    indexed_memory.extractor = Failing(*[LLMUnavailable("busy", reached=True)] * 5)
    ana.enqueue_extraction(TALK, max_attempts=2)
    indexed_memory.run_extraction_queue(worker="w1")
    clock.advance(timedelta(hours=1))
    indexed_memory.run_extraction_queue(worker="w1")
    assert ana.extraction_queue_status()["failed"] == 1


def test_a_worker_whose_lease_ran_out_writes_nothing_to_the_job(indexed_memory, ana, clock):
    ana.enqueue_extraction(TALK)
    [row] = indexed_memory.store.queue.claim("slow-worker", clock.now(), lease_s=10, limit=5)
    clock.advance(timedelta(seconds=11))
    [again] = indexed_memory.store.queue.claim("fast-worker", clock.now(), lease_s=10, limit=5)
    assert again.queue_id == row.queue_id and again.attempts == 2
    assert not indexed_memory.store.queue.complete(row.queue_id, "slow-worker", clock.now(), {})
    assert indexed_memory.store.queue.complete(row.queue_id, "fast-worker", clock.now(), {"ok": True})


WORKER = textwrap.dedent("""
    import sys, time
    from memory_core import Memory
    with Memory.open(sys.argv[1]) as memory:
        rows = memory.store.queue.claim("doomed-worker", memory.clock.now(), lease_s=60, limit=10)
        print(len(rows), flush=True)
        time.sleep(600)  # killed here, mid-batch
""")


def test_the_queue_survives_a_worker_killed_mid_batch(home):
    with Memory.open(home, embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        ids = [tool.enqueue_extraction(TALK, session=f"s{i}") for i in range(3)]
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(home)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert worker.stdout.readline().strip() == "3"
    finally:
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    with Memory.open(home, embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        assert {r.status for r in tool.extraction_status(ids)} == {"running"}
        assert memory.run_extraction_queue(worker="w2")["claimed"] == 0  # still leased to the dead worker
        memory.clock = FixedClock(memory.clock.now() + timedelta(seconds=61))
        assert memory.run_extraction_queue(worker="w2")["done"] == 3  # its lease ran out: back in line
        assert {r.status for r in tool.extraction_status(ids)} == {"done"}
        assert tool.get("ana:lives_in").value == "Ana lives in Lisbon"
