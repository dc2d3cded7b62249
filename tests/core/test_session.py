"""The session's one commit: what it does under the lock, in what order, for many threads."""

from __future__ import annotations

import threading

from memory_core import Identity, Memory

RUN = Identity(tenant="acme", user="ana", agent="helper")


def test_threads_writing_through_a_freshly_opened_memory_lose_nothing_from_the_index(home, clock):
    """The index is opened inside the first commit, under the lock and before its transaction:
    every thread's first fact reaches the index, and a search finds every fact written."""
    with Memory.open(home, clock=clock, embedder="hashing"):
        pass  # the home exists; the next open is fresh: nothing built yet
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        start, failures = threading.Barrier(4), []

        def write(n: int) -> None:
            try:
                start.wait()
                for i in range(5):
                    # notes: no peer check, so none of these alike texts retires another
                    tool.set(f"t{n}-{i}", f"thread {n} wrote note number {i}", kind="note")
            except BaseException as exc:  # noqa: BLE001 - reported below
                failures.append(exc)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        memory.flush()
        report = memory.projector.consistency()
        assert report.facts == 20 and report.ok, report
        for n in range(4):
            hits = tool.recall(f"thread {n} wrote note number 0", recipe="bm25_only", k=20).hits
            assert f"t{n}-0" in {h.key for h in hits}
