"""A revision reaches the index as an append: the fact's older row stops being served at once and
is deleted when the index settles (an explicit flush, a close, a maintenance step, or once enough
such rows wait). Searches never see a replaced or dropped row, a restart that finds rows left
unsettled replays them to one row per fact, and concurrent revisions and recalls never show a
fact twice."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections import Counter

from memory_core import Identity, Memory
from memory_core.adapters.lance.projector import COMPACT_AT_APPENDS, SETTLE_AT_ROWS
from memory_core.identity import Scope
from memory_core.model import Kind
from memory_core.retrieval.filters import LegFilter

RUN = Identity(tenant="acme", user="ana", agent="helper")


def rows_of(memory: Memory) -> Counter[str]:
    """Index rows per fact id, replaced ones included."""
    return Counter(fact_id for fact_id, _, _ in memory.projector.index.heads())


def test_a_revision_is_appended_and_the_older_row_is_never_served(seeded):
    memory, tool = seeded
    city = tool.get("city")
    tool.set("city", "lives in Porto")
    hits = tool.recall("where does she live, Lisbon or Porto", k=10).hits
    assert [h.value for h in hits if h.key == "city"] == ["lives in Porto"]
    assert "city" not in {h.key for h in tool.recall("Lisbon", recipe="bm25_only").hits}
    # The older row is still in the table, only not served: the search's flush left it there.
    assert rows_of(memory)[city.fact_id] == 2 and memory.projector.index.unsettled[0] == 1
    memory.flush()
    assert rows_of(memory)[city.fact_id] == 1 and memory.projector.index.unsettled == (0, 0)
    assert memory.projector.consistency().ok


def test_a_deleted_fact_leaves_the_answers_at_once_and_the_table_when_settled(seeded):
    memory, tool = seeded
    pet = tool.get("pet")
    tool.delete("pet")
    assert "pet" not in {h.key for h in tool.recall("cat named Miso", k=10).hits}
    assert rows_of(memory)[pet.fact_id] == 1  # not served, not yet deleted
    report = memory.projector.consistency()  # a check settles first: one row per served fact
    assert report.ok and rows_of(memory)[pet.fact_id] == 0


def test_searches_settle_once_enough_replaced_rows_wait(seeded):
    memory, tool = seeded
    waiting = []
    for i in range(SETTLE_AT_ROWS + 6):
        tool.set(f"k{i}", f"w{i}x first value")
    tool.recall("value", k=1)
    for i in range(SETTLE_AT_ROWS + 6):
        tool.set(f"k{i}", f"w{i}x second value")
        tool.recall("value", k=1)
        waiting.append(memory.projector.index.unsettled)
    facts, appends = zip(*waiting)
    assert max(facts) <= SETTLE_AT_ROWS and max(appends) < COMPACT_AT_APPENDS
    assert any(b < a for a, b in zip(facts, facts[1:]))  # settled on the way, by a search's flush
    values = {h.key: h.value for h in tool.recall("second value", k=200).hits if h.key.startswith("k")}
    assert all("second" in v for v in values.values()) and len(values) == SETTLE_AT_ROWS + 6


def test_a_restart_after_rows_were_left_unsettled_leaves_one_row_per_fact(home):
    # The real clock throughout: the dying process writes with it.
    with Memory.open(home, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        tool.set("city", "lives in Lisbon")
        tool.set("pet", "has a cat named Miso")
    # A process that revises, searches (the older rows stay, unsettled) and dies without closing.
    script = textwrap.dedent(
        f"""
        import os
        from memory_core import Identity, Memory
        memory = Memory.open({str(home)!r}, embedder="hashing")
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        tool.set("city", "lives in Porto")
        tool.delete("pet")
        tool.set("food", "likes ramen")
        assert tool.recall("Porto", k=5).hits[0].value == "lives in Porto"
        assert memory.projector.index.unsettled[0] == 2
        os._exit(0)
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    with Memory.open(home, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        hits = tool.recall("where does she live, Lisbon or Porto", k=10).hits
        assert [h.value for h in hits if h.key == "city"] == ["lives in Porto"]
        assert "pet" not in {h.key for h in tool.recall("cat named Miso", k=10).hits}
        assert tool.recall("ramen", k=3).hits[0].key == "food"
        assert memory.projector.consistency().ok
        assert set(rows_of(memory).values()) == {1}


def test_concurrent_revisions_and_recalls_never_show_a_fact_twice(home):
    with Memory.open(home, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        tool.set("city", "lives in town number 0")
        written = ["lives in town number 0"]
        seen: list[list[str]] = []
        failures: list[BaseException] = []
        stop = threading.Event()

        def revise() -> None:
            try:
                for i in range(1, 120):
                    value = f"lives in town number {i}"
                    tool.set("city", value)
                    written.append(value)
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                failures.append(exc)
            finally:
                stop.set()

        def recall() -> None:
            try:
                while not stop.is_set():
                    seen.append([h.value for h in tool.recall("lives in town number", k=10).hits if h.key == "city"])
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                failures.append(exc)

        threads = [threading.Thread(target=revise), threading.Thread(target=recall), threading.Thread(target=recall)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert not failures, failures
        # Never twice. (A search whose hits are completed after a revision committed may find the
        # fact in neither state: its rows are re-read as they are now, and the older state is
        # retired while the newer one was not among the legs' rows. That predates appending.)
        assert seen and all(len(values) <= 1 for values in seen), [v for v in seen if len(v) > 1][:3]
        assert all(value in written for values in seen for value in values)
        assert tool.recall("lives in town number", k=10).hits[0].value == written[-1]
        memory.flush()
        assert memory.projector.consistency().ok


def test_a_leg_asks_for_as_many_more_rows_as_one_fact_s_revisions_hide(seeded, clock):
    """One fact revised four times hides four rows: a leg of three still answers three facts."""
    memory, tool = seeded
    for i in range(4):
        tool.pin("city") if i % 2 == 0 else tool.unpin("city")  # a new state of the same fact
        tool.recall("warm", k=1)  # each search appends the queue: one more hidden row
    assert memory.projector.index.unsettled[0] >= 4
    reader = memory.session.search_index.reader()
    where = LegFilter(RUN.namespace(Scope.USER), frozenset({Kind.FACT}), clock.now(), clock.now())
    vector = memory.embedder.embed(["lives in Lisbon"])[0]
    rows = reader.vector_leg(vector, where, 3, ["fact_id", "status"], full=True)
    assert len(rows) == 3 and len({r["fact_id"] for r in rows}) == 3


def test_facts_dropped_before_the_index_has_a_table_leave_nothing_to_settle(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        tool.set("secret", "the door code", memory_type="general")
        tool.delete("secret")
        tool.recall("door code", k=3)  # the first index write: only a drop
        memory.flush()
        assert memory.projector.index.unsettled == (0, 0)
        assert memory.projector.consistency().ok


def fragments_of(memory: Memory) -> int:
    return len(memory.projector.index.snapshot().dataset.get_fragments())


def test_one_write_per_flush_or_per_process_leaves_few_fragments(home):
    """Each flush that found one append, and each process that wrote once and closed, used to leave
    its fragment unfolded for good (the fold counted appends since the last fold, one each time),
    and every later search paid for each of them: 59 fragments after 60 one-write processes made a
    recall of this small home 36 ms instead of 8."""
    for i in range(6):  # one write per process, as `memcore set` does
        with Memory.open(home, embedder="hashing") as memory:
            memory.for_run(RUN).set(f"k{i}", f"w{i}x a value about Lisbon")
    with Memory.open(home, embedder="hashing") as memory:
        assert fragments_of(memory) <= 2
        tool = memory.for_run(RUN)
        for i in range(6, 12):  # one write per explicit flush
            tool.set(f"k{i}", f"w{i}x a value about Lisbon")
            memory.flush()
        assert fragments_of(memory) <= 2
        assert {h.key for h in tool.recall("a value about Lisbon", k=20).hits} == {f"k{i}" for i in range(12)}
        assert memory.projector.consistency().ok


def test_appends_an_earlier_process_left_count_toward_the_fold(home):
    """A process that finds small fragments unfolded (an earlier one's searches appended them and
    it died without closing) counts them toward the folds' thresholds, and its next flush folds."""
    script = textwrap.dedent(
        f"""
        import os
        from memory_core import Identity, Memory
        memory = Memory.open({str(home)!r}, embedder="hashing")
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        for i in range(6):
            tool.set(f"k{{i}}", f"w{{i}}x a value")
            tool.recall("value", k=1)  # a search's flush appends the write and folds nothing
        print(len(memory.projector.index.snapshot().dataset.get_fragments()), flush=True)
        os._exit(0)
        """
    )
    left = int(
        subprocess.run([sys.executable, "-c", script], check=True, timeout=120, capture_output=True, text=True).stdout
    )
    assert left >= 6
    with Memory.open(home, embedder="hashing") as memory:
        assert memory.projector.index.table is not None
        assert memory.projector.index.unsettled[1] == left - 1
        memory.flush()
        assert fragments_of(memory) <= 2 and memory.projector.index.unsettled == (0, 0)
        assert {h.key for h in memory.for_run(RUN).recall("a value", k=20).hits} == {f"k{i}" for i in range(6)}
