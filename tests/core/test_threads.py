"""One ``Memory`` used from many threads: every member built on first use is built once, and the
retrieval index holds exactly the fact ids of the store's indexable facts, whatever the
interleaving of writes, deletes, batches and the searches that flush the index queue.

Races are widened through constructor parameters only: a slow ``open_index`` factory, a Lance
index whose writes wait (``tests.index_faults``), a slow embedder or settings store.
"""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FixedClock, Identity, Memory, MemoryTool
from memory_core.adapters.duckdb import DuckDBHome
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.errors import NotFound
from memory_core.identity import Namespace, Scope
from memory_core.write.peers import PeerVectors
from tests.conftest import T0
from tests.index_faults import IndexFaults, delayed

RUN = Identity(tenant="acme", user="ana", agent="helper")
ADMIN = Identity(tenant="acme", user="ana", agent="helper", admin=True)


def run_threads(targets: Sequence[Callable[[], None]]) -> None:
    """Run every target on its own thread, all released at once; re-raise the first failure."""
    start, failures = threading.Barrier(len(targets)), []

    def run(target: Callable[[], None]) -> None:
        try:
            start.wait()
            target()
        except BaseException as exc:  # noqa: BLE001 - handed to the test below
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


def value(*parts: object) -> str:
    """Words no other value shares (so BM25 finds exactly this one, and no peer check fires)."""
    tag = "x".join(str(p) for p in parts)
    return f"w{tag} q{tag}z"


def assert_index_is_the_store(memory: Memory, tool: MemoryTool) -> None:
    """The index holds one row for each indexable fact's latest state and nothing else, and a
    search finds every live fact by its value."""
    memory.flush()
    report = memory.projector.consistency()
    assert report.ok and not report.pending_repair, report.to_dict(examples=5)
    indexable = sorted(s.fact_id for s in memory.store.versions.latest_states() if memory.indexable(s))
    assert sorted(f for f, _, _ in memory.projector.index.heads()) == indexable
    # Folded into the text index first: until then BM25 scores the rows the text index was built
    # over apart from the rows appended since (a table's first row can rank below weaker matches,
    # with or without threads), and that ranking is not what this test is about.
    memory.projector.optimize()
    for fact in tool.list():
        hits = tool.recall(fact.value, recipe="bm25_only", k=5).hits
        assert fact.key in {h.key for h in hits}, (fact.key, fact.value)


# -- the lazily built index ---------------------------------------------------------------------


def test_threads_writing_through_a_fresh_memory_with_a_slow_index_open_lose_nothing(home, clock):
    """The reported race: every thread's first write asks for the index while it is still being
    built. It is built once, and every first fact reaches it (on the old code three of four were
    lost for good: neither repair nor a reopen brought them back)."""
    with Memory.open(home, clock=clock, embedder="hashing"):
        pass  # the home exists; the next open is fresh: nothing built yet
    opening = delayed(delay_s=0.3)
    with Memory.open(home, clock=clock, embedder="hashing", open_index=opening) as memory:
        tool = memory.for_run(RUN)

        def writer(n: int) -> Callable[[], None]:
            return lambda: [tool.set(f"t{n}-{i}", value(n, i), kind="note") for i in range(5)]

        run_threads([writer(n) for n in range(4)])
        assert opening.calls == 1
        assert memory.projector.consistency().facts == 20
        assert_index_is_the_store(memory, tool)
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        assert_index_is_the_store(memory, memory.for_run(RUN))


def test_searches_racing_the_first_write_build_one_index(home, clock):
    """A search (which flushes) and a write both build the index on first use: once."""
    opening = delayed(delay_s=0.2)
    with Memory.open(home, clock=clock, embedder="hashing", open_index=opening) as memory:
        tool = memory.for_run(RUN)
        run_threads([lambda: tool.set("a", value("a")), lambda: tool.recall("anything"), lambda: memory.flush()])
        assert opening.calls == 1
        assert_index_is_the_store(memory, tool)


# -- writers and readers at once ------------------------------------------------------------------


def mixed_load(memory: Memory, n: int) -> Callable[[], None]:
    """A writer's sets, supersessions and deletes of its own keys, a batch, and the searches that
    flush the index queue from this thread."""
    tool = memory.for_run(RUN)

    def run() -> None:
        for i in range(12):
            key = f"t{n}-{i % 4}"
            if i % 5 == 4:
                tool.delete(key)
            else:
                tool.set(key, value(n, i % 4, i))
            if i % 3 == 0:
                tool.recall(value(n, i % 4, i), recipe="bm25_only", k=3)
        tool.bulk_set([{"key": f"b{n}-{j}", "value": value("b", n, j)} for j in range(20)])
        tool.set(f"b{n}-0", value("b", n, 0, "again"))

    return run


def test_writers_and_searches_on_many_threads_leave_the_index_exactly_the_store(tmp_path, clock):
    """Appending a fact's first row is slow, so the flushes of searches and of long queues overlap
    the commits of other threads: no state enqueued during a flush is dropped, no later state
    is overtaken by its fact's first row (two rows, the stale one served), and the watermark
    never passes a state that is not in the index."""
    faults = IndexFaults(append_delay_s=0.02)
    with Memory.open(tmp_path / "home", clock=clock, embedder="hashing", open_index=faults.open_index) as memory:
        memory.for_run(ADMIN).configure(bulk_check_cap=2)  # most of each batch takes the fresh-tail path
        tool = memory.for_run(RUN)

        def reader() -> None:
            for i in range(25):
                tool.recall(value(i % 3, i % 4, i), k=3)

        run_threads([mixed_load(memory, n) for n in range(3)] + [reader, reader])
        assert faults.opened == 1
        assert_index_is_the_store(memory, tool)
    with Memory.open(tmp_path / "home", clock=clock, embedder="hashing") as memory:
        assert_index_is_the_store(memory, memory.for_run(RUN))


def test_a_fact_deleted_while_its_first_row_is_appended_is_never_served(tmp_path, clock):
    """A search flushes a new fact (a slow append) and the fact is deleted meanwhile: the delete's
    flush must not run before the append ends, or the deleted fact's row lands after its delete
    and a search serves a deleted fact."""
    faults = IndexFaults(append_delay_s=0.03)
    with Memory.open(tmp_path / "home", clock=clock, embedder="hashing", open_index=faults.open_index) as memory:
        tool = memory.for_run(RUN)
        done = threading.Event()

        def writer() -> None:
            try:
                for j in range(12):
                    tool.set(f"gone{j}", value("gone", j))
                    time.sleep(0.005)  # a search's flush takes the new fact
                    tool.delete(f"gone{j}")
            finally:
                done.set()

        def reader() -> None:
            while not done.is_set():
                tool.recall("anything at all", recipe="bm25_only", k=3)

        run_threads([writer, reader, reader])
        assert_index_is_the_store(memory, tool)
        for j in range(12):
            assert not tool.recall(value("gone", j), recipe="bm25_only", k=3).hits


# -- a property: any interleaving of writes from N threads ---------------------------------------

OP = st.tuples(st.sampled_from(["set", "set", "delete", "bulk"]), st.integers(0, 3), st.integers(0, 3))


def write_plans(plans: list[list[tuple[str, int, int]]], append_delay_s: float) -> None:
    """Each plan on its own thread through one freshly opened Memory; keys ``s*`` are shared by
    every thread, ``own*`` by one. Then the index must hold exactly the store's indexable facts."""
    with tempfile.TemporaryDirectory() as folder:
        faults = IndexFaults(append_delay_s=append_delay_s)
        home, clock = Path(folder) / "home", FixedClock(T0)
        with Memory.open(home, clock=clock, embedder="hashing", open_index=faults.open_index) as memory:
            tool = memory.for_run(RUN)

            def run(n: int, plan: list[tuple[str, int, int]]) -> None:
                for step, (op, k, v) in enumerate(plan):
                    key = f"s{k}" if k < 2 else f"own{n}-{k}"
                    if op == "set":
                        tool.set(key, value(key, n, step, v))
                    elif op == "delete":
                        try:
                            tool.delete(key)
                        except NotFound:  # never written, or deleted already: an answer, not a failure
                            pass
                    else:
                        tool.bulk_set([{"key": f"{key}-b{j}", "value": value(key, n, step, j)} for j in range(v + 1)])
                    if step % 2:
                        tool.recall(value(key, n, step, v), recipe="bm25_only", k=3)

            run_threads([lambda n=n, plan=plan: run(n, plan) for n, plan in enumerate(plans)])
            assert faults.opened <= 1  # none yet if every op was refused (a delete of nothing)
            assert_index_is_the_store(memory, tool)
            assert faults.opened == 1


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans=st.lists(st.lists(OP, min_size=1, max_size=6), min_size=2, max_size=3))
def test_any_interleaving_of_writes_leaves_the_index_exactly_the_store(plans):
    write_plans(plans, append_delay_s=0.005)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans=st.lists(st.lists(OP, min_size=4, max_size=16), min_size=4, max_size=8))
def test_any_interleaving_of_many_writes_leaves_the_index_exactly_the_store(plans):
    write_plans(plans, append_delay_s=0.005)


# -- the peer-vector cache ------------------------------------------------------------------------


class SlowOnThread:
    """The hashing embedder, but a chosen thread's ``slow_call``-th call waits ``delay_s`` after
    ``started`` is set (so another thread can act while that call is under way)."""

    def __init__(self, *, slow_call: int, delay_s: float) -> None:
        self._inner = HashingEmbedder()
        self.name, self.dim = self._inner.name, self._inner.dim
        self.slow_thread: str | None = None
        self.slow_call, self.delay_s = slow_call, delay_s
        self.started = threading.Event()
        self._calls = 0

    def embed(self, texts: Sequence[str]) -> Any:
        if threading.current_thread().name == self.slow_thread:
            self._calls += 1
            if self._calls == self.slow_call:
                self.started.set()
                time.sleep(self.delay_s)
        return self._inner.embed(texts)


def test_a_peer_load_racing_a_write_keeps_the_write_s_vector(home, clock):
    """The resolver loads a namespace's peer vectors (slowly, outside any write) while a write
    lands in that namespace: the write's vector stays in the cache, so a later write of the same
    value under another key finds it as a peer."""
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        for i in range(3):
            memory.for_run(RUN).set(f"old{i}", value("old", i))
    embedder = SlowOnThread(slow_call=2, delay_s=0.4)  # the resolver's 2nd call: the peer load
    with Memory.open(home, clock=clock, embedder=embedder) as memory:
        tool = memory.for_run(RUN)
        resolver = threading.Thread(target=memory.resolve, name="resolver")
        embedder.slow_thread = "resolver"
        resolver.start()
        assert embedder.started.wait(5)
        tool.set("fresh", value("fresh"))  # lands while the resolver's load is under way
        resolver.join()
        again = tool.set("fresh-copy", value("fresh"))
        assert "fresh" in {p["key"] for p in again.details.get("peers", [])}, again


def test_peer_vectors_put_while_a_namespace_loads_is_kept():
    """``PeerVectors`` with the caller's lock: a put waiting on a load lands in the loaded block."""
    lock = threading.RLock()
    ns = Namespace("acme", Scope.USER, "ana")
    embed = HashingEmbedder().embed
    stored = {"f1": ("k1", embed(["first value"])[0])}
    loading = threading.Event()

    def load(_ns: Namespace) -> dict[str, Any]:
        seen = dict(stored)
        loading.set()
        time.sleep(0.2)
        return seen

    peers = PeerVectors(HashingEmbedder().dim, load, locked=lambda: lock)
    query = embed(["second value"])
    reader = threading.Thread(target=lambda: peers.nearest(ns, query, -1.0))
    reader.start()
    assert loading.wait(5)
    with lock:  # as a commit: the row lands, then its vector goes to the cache, under one lock
        stored["f2"] = ("k2", query[0])
        peers.put_rows(ns, ["f2"], ["k2"], query)
    reader.join()
    assert {f for f, _, _ in peers.nearest(ns, query, -1.0)[0]} == {"f1", "f2"}


# -- the tenant's write configuration -------------------------------------------------------------


class SlowSettings:
    """``TenantSettingsStore``: the real one, but a read of the write configuration waits
    ``delay_s`` after reading (once ``armed``), with ``started`` set."""

    def __init__(self, inner: Any, delay_s: float) -> None:
        self._inner, self.delay_s = inner, delay_s
        self.armed, self.started = False, threading.Event()

    def write_configs(self, tenant: str) -> Any:
        found = self._inner.write_configs(tenant)
        if self.armed:
            self.armed = False
            self.started.set()
            time.sleep(self.delay_s)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class SlowSettingsStore:
    """``Store``: a real home's ports, its settings a ``SlowSettings``."""

    def __init__(self, inner: Any, delay_s: float) -> None:
        self.inner = inner
        self.settings = SlowSettings(inner.settings, delay_s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_config_read_racing_a_configure_never_keeps_the_old_config(home, clock):
    """A thread reads the tenant's write configuration (slowly) while an admin changes it: the
    configuration the session keeps afterwards is the new one."""
    store = SlowSettingsStore(DuckDBHome.open(home), delay_s=0.3)
    with Memory(store, clock) as memory:
        store.settings.armed = True
        reader = threading.Thread(target=memory.write_config, args=("acme",))
        reader.start()
        assert store.settings.started.wait(5)
        memory.for_run(ADMIN).configure(bulk_check_cap=7)
        reader.join()
        assert memory.write_config("acme").tenant.bulk_check_cap == 7


def test_admins_configuring_at_once_keep_both_changes(home, clock):
    with Memory.open(home, clock=clock) as memory:
        admin = memory.for_run(ADMIN)
        run_threads([lambda: admin.configure(bulk_check_cap=9), lambda: admin.configure(char_limit=999)])
        config = memory.write_config("acme").tenant
        assert (config.bulk_check_cap, config.char_limit) == (9, 999)


def test_a_point_read_does_not_wait_for_a_write_holding_the_store(home, clock):
    """A get of a loaded scope reads the cache under its own lock: a write's read-decide-commit
    (or an index write) holding the store does not hold it up; and it sees a commit all or none."""
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        tool.set("city", "lives in Lisbon")
        assert tool.get("city").value == "lives in Lisbon"  # the scope is loaded
        read = threading.Event()
        got: list[Any] = []

        def reader() -> None:
            got.append(tool.get("city"))
            read.set()

        with memory.session.locked():  # as a write between its first read and its commit
            worker = threading.Thread(target=reader)
            worker.start()
            answered_while_held = read.wait(timeout=30)
        worker.join(timeout=30)
        assert answered_while_held and got[0].value == "lives in Lisbon"
