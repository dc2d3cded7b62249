"""The graph and the work queue over a PostgreSQL authority: the DuckDB adapter's behaviour, and
what several processes sharing one database need (no stale link cache; a job claimed once)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

from memory_core.adapters.home_key import HomeKey
from memory_core.adapters.postgres.audit_chain import PgAuditChain
from memory_core.adapters.postgres.graph import PgGraph
from memory_core.adapters.postgres.queue import PgQueue
from memory_core.audit import AuditEntry
from memory_core.graph.follow import Link
from memory_core.graph.model import Observation
from memory_core.graph.plan import GraphWrite
from memory_core.identity import Namespace, Scope

from .conftest import connect

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
NS = Namespace("acme", Scope.USER, "ana")
OTHER = Namespace("acme", Scope.USER, "bob")


def entry(op: str = "graph") -> AuditEntry:
    return AuditEntry(T0, NS.tenant, NS.scope.value, NS.owner_id, "k", op, "", None, "test")


def observation(triple_id: str, subject: str, relation: str, obj: str, at: datetime = T0) -> Observation:
    return Observation(triple_id, subject, relation, obj, at, False, None, at)


def link(triple_id: str, fact_id: str) -> Link:
    return Link(triple_id, fact_id, f"key:{fact_id}", "sha", "stated", T0)


def write(chain: PgAuditChain, graph: PgGraph, change: GraphWrite) -> None:
    with chain.transaction([entry()]) as tx:
        graph.write(tx, change)


def lives_in(ns: Namespace = NS) -> GraphWrite:
    return GraphWrite(
        ns,
        (observation("t1", "ana", "lives_in", "lisbon"), observation("t2", "ana", "works_at", "acme")),
        (link("t1", "f1"), link("t2", "f2")),
        {},
        (("ana", "person"), ("lisbon", "city"), ("acme", None)),
        T0,
    )


# -- the graph ------------------------------------------------------------------------------------


def test_a_graph_write_is_read_back_and_bound_by_the_audit_chain(pg_db, tmp_path):
    chain, graph = PgAuditChain(pg_db, HomeKey.create(tmp_path)), PgGraph(pg_db)
    write(chain, graph, lives_in())
    assert graph.counts() == {"graph_entities": 3, "graph_triples": 2, "graph_links": 2}
    found = graph.observations(NS, ["ana"], T0)
    assert [(o.relation, o.object, [lk.fact_id for lk in links]) for o, links in found] == [
        ("lives_in", "lisbon", ["f1"]),
        ("works_at", "acme", ["f2"]),
    ]
    assert [o.object for o, _ in graph.observations(NS, ["lisbon"], T0)] == ["lisbon"]
    assert graph.observations(NS, ["lisbon"], T0, as_subject_only=True) == []
    assert graph.observations(NS, ["ana"], T0 - timedelta(days=1)) == []  # not valid yet
    assert graph.entity_names(NS) == {"ana", "lisbon", "acme"}
    assert graph.entity_types(NS, "ana") == ["person"] and graph.entity_types(NS, "acme") == []
    assert graph.entity_names(OTHER) == frozenset() and graph.observations(OTHER, ["ana"], T0) == []
    report = chain.verify()
    assert report.ok, report


def test_an_ended_observation_leaves_the_current_graph_and_forget_drops_orphans(pg_db, tmp_path):
    chain, graph = PgAuditChain(pg_db, HomeKey.create(tmp_path)), PgGraph(pg_db)
    write(chain, graph, lives_in())
    later = T0 + timedelta(days=1)
    moved = GraphWrite(
        NS,
        (observation("t3", "ana", "lives_in", "porto", later),),
        (link("t3", "f3"),),
        {"t1": (later, "superseded")},
        (("porto", "city"),),
        later,
    )
    write(chain, graph, moved)
    assert sorted(o.object for o in graph.current_observations(NS, later)) == ["acme", "porto"]
    assert sorted(o.object for o in graph.current_observations(NS, T0)) == ["acme", "lisbon"]
    with chain.transaction([entry("redact")]) as tx:
        graph.forget(tx, ["f3", "f2"])
    assert graph.counts() == {"graph_entities": 2, "graph_triples": 1, "graph_links": 1}
    assert graph.entity_names(NS) == {"ana", "lisbon"}
    assert chain.verify().ok


def test_links_written_by_another_process_are_seen_at_once(pg_db, pg_url, tmp_path):
    other = connect(pg_url)
    try:
        reader = PgGraph(pg_db)
        assert not reader.linked(["f1"]) and not reader.linked([])
        write(PgAuditChain(other, HomeKey.create(tmp_path)), PgGraph(other), lives_in())
        assert reader.linked(["f9", "f1"])  # no process keeps a stale copy of the links
    finally:
        other.close()


def test_follow_inputs_reads_links_subjects_single_valued_groups_and_types(pg_db, tmp_path):
    chain, graph = PgAuditChain(pg_db, HomeKey.create(tmp_path)), PgGraph(pg_db)
    write(chain, graph, lives_in())
    ended = GraphWrite(NS, (), (), {"t1": (T0 + timedelta(hours=1), "superseded")}, (), T0)
    write(chain, graph, ended)
    write(chain, graph, lives_in(OTHER))  # another namespace: never read
    inputs = graph.follow_inputs(NS, ["f2"], {("ana", "lives_in", "porto")}, {"ana", "porto"}, frozenset({"lives_in"}))
    assert [lo.observation.triple_id for lo in inputs.linked["f2"]] == ["t2"]
    # ana's open observation (t2) and the whole single-valued (ana, lives_in) group, ended too (t1).
    assert sorted(o.triple_id for o in inputs.observations) == ["t1", "t2"]
    assert sorted((lk.triple_id, lk.fact_id) for lk in inputs.links) == [("t1", "f1"), ("t2", "f2")]
    assert inputs.states == {}  # no version rows for these facts
    assert inputs.entity_types == {"ana": frozenset({"person"})}
    assert graph.follow_inputs(NS, [], set(), set(), frozenset()).observations == []


# -- the queue ------------------------------------------------------------------------------------


def enqueue(queue: PgQueue, n: int, *, at: datetime = T0 - timedelta(seconds=1), prefix: str = "q", **kw) -> list[str]:
    ids = [f"{prefix}{i:04d}" for i in range(n)]
    for i, queue_id in enumerate(ids):
        assert queue.enqueue(queue_id, NS, "user:ana", "extract", {"i": i}, at + timedelta(microseconds=i), **kw)
    return ids


def test_leases_backoff_retries_and_counts(pg_db):
    queue = PgQueue(pg_db)
    enqueue(queue, 3, max_attempts=2)
    assert queue.unfinished_jobs(NS) == 3 and queue.unfinished_jobs(OTHER) == 0
    first = queue.claim("w1", T0, lease_s=60, limit=2)
    assert [r.queue_id for r in first] == ["q0000", "q0001"]
    assert all(r.status == "running" and r.attempts == 1 and r.lease_owner == "w1" for r in first)
    assert not queue.complete("q0000", "w2", T0, {"x": 1})  # not its lease
    assert queue.complete("q0000", "w1", T0, {"written": ["k"]})
    assert queue.fail("q0001", "w1", T0, "boom", spent=True, backoff_s=10)
    [row] = queue.queue_rows(NS, "user:ana", ["q0001"])
    assert row.status == "pending" and row.attempts == 1 and row.next_attempt_at == T0 + timedelta(seconds=10)
    assert [r.queue_id for r in queue.claim("w1", T0 + timedelta(seconds=5), lease_s=60, limit=5)] == ["q0002"]
    assert queue.claim("w2", T0 + timedelta(seconds=10), lease_s=60, limit=5)[0].queue_id == "q0001"
    # The lease runs out: another worker takes it over; the first one's completion is refused.
    stolen = queue.claim("w3", T0 + timedelta(seconds=100), lease_s=60, limit=5)
    assert [(r.queue_id, r.attempts) for r in stolen] == [("q0002", 2)]  # q0001 had its 2 attempts: failed
    [exhausted] = queue.queue_rows(NS, "user:ana", ["q0001"])
    assert exhausted.status == "failed" and "2 time(s)" in exhausted.last_error
    assert not queue.complete("q0002", "w1", T0, {})
    assert queue.fail("q0002", "w3", T0, "down", spent=False)  # never reached: attempt given back
    assert queue.queue_rows(NS, "user:ana", ["q0002"])[0].attempts == 1
    assert queue.queue_counts(NS) == {"pending": 1, "running": 0, "done": 1, "failed": 1}
    assert queue.retry_failed(NS, "user:ana", None, T0) == ["q0001"]
    assert queue.queue_rows(NS, "user:ana", ["q0001"])[0].attempts == 0
    assert queue.queue_backlog() == {"extract:pending": 2, "extract:done": 1}
    assert queue.queue_cursor().endswith("|3")
    assert queue.queue_rows(NS, "user:ana", ["q0000"])[0].result == {"written": ["k"]}


def test_earlier_spans_by_generation(pg_db):
    queue = PgQueue(pg_db)
    for i, (gen, session) in enumerate([(0, "s1"), (1, "s1"), (1, "s2"), (2, "s1"), (1, "s1")]):
        payload = {"session": session, "generation": gen}
        queue.enqueue(f"h{i}", NS, "user:ana", "harvest", payload, T0 + timedelta(seconds=i))
    found = queue.earlier_spans(NS, "s1", generation=1, banked_at=T0 + timedelta(seconds=4), limit=5)
    assert [r.queue_id for r in found] == ["h0", "h1"]
    assert [r.queue_id for r in queue.earlier_spans(NS, "s1", generation=3, banked_at=T0, limit=2)] == ["h4", "h3"]


def test_two_processes_claiming_at_once_take_every_job_exactly_once(pg_url):
    """Two connections (two replicas) on one schema, four threads each, claiming together:
    ``FOR UPDATE SKIP LOCKED`` gives every job to exactly one claim."""
    dbs = [connect(pg_url), connect(pg_url)]
    try:
        queues = [PgQueue(db) for db in dbs]
        ids = enqueue(queues[0], 300)
        start = threading.Barrier(8)

        def work(n: int) -> list[str]:
            queue, taken = queues[n % 2], []
            start.wait()
            while batch := queue.claim(f"w{n}", T0 + timedelta(seconds=1), lease_s=600, limit=3):
                taken += [r.queue_id for r in batch]
                assert all(r.lease_owner == f"w{n}" and r.attempts == 1 for r in batch)
            return taken

        with ThreadPoolExecutor(8) as pool:
            claimed = [q for taken in pool.map(work, range(8)) for q in taken]
        assert sorted(claimed) == ids  # every job, none twice
        assert queues[1].queue_counts(NS)["running"] == 300
    finally:
        for db in dbs:
            db.close()


def test_capacity_holds_across_processes(pg_url):
    dbs = [connect(pg_url), connect(pg_url)]
    try:
        queues = [PgQueue(db) for db in dbs]
        start = threading.Barrier(8)

        def add(n: int) -> bool:
            start.wait()
            return queues[n % 2].enqueue(f"c{n}", NS, "user:ana", "harvest", {}, T0, capacity=3)

        with ThreadPoolExecutor(8) as pool:
            added = list(pool.map(add, range(8)))
        assert added.count(True) == 3 and queues[0].unfinished_jobs(NS) == 3
    finally:
        for db in dbs:
            db.close()
