"""The stores of memory that compounds over a PostgreSQL authority (consolidation, Dreams,
communities, profile schemas, reflect, usage): each read back as written, and what several
replicas doing the same work at once leave behind."""

from __future__ import annotations

import dataclasses
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

from memory_core.adapters.duckdb.substrate_rows import event_params
from memory_core.adapters.home_key import HomeKey
from memory_core.adapters.postgres.audit_chain import PgAuditChain
from memory_core.adapters.postgres.communities import PgCommunities
from memory_core.adapters.postgres.connection import PgConnection
from memory_core.adapters.postgres.consolidation import PgConsolidation
from memory_core.adapters.postgres.dreams import PgDreams
from memory_core.adapters.postgres.profiles import PgProfiles
from memory_core.adapters.postgres.reflect import PgReflect
from memory_core.adapters.postgres.usage import PgUsage
from memory_core.audit import AuditEntry
from memory_core.consolidation import ClusterOutcome, ConsolidationRun
from memory_core.dreams import DreamProposal, DreamTarget
from memory_core.errors import WrongState
from memory_core.graph.communities import Communities
from memory_core.identity import Namespace, Scope
from memory_core.profiles import ProfileSchemaInfo
from memory_core.reflect import Claim, Plan, Source
from memory_core.retrieval.usage import Answered, Exposure, fold_usage
from memory_core.substrate.events import FactChange, StateChange
from tests.conftest import T0
from tests.postgres.conftest import connect
from tests.postgres.log_kit import NS, version

OTHER = Namespace("acme", Scope.USER, "bob")


def race(workers: Sequence[Callable[[], Any]]) -> list[Any]:
    """Run the workers at once (released together), each on its own thread; their answers."""
    gate, out, errors = threading.Barrier(len(workers)), [None] * len(workers), []

    def run(i: int) -> None:
        try:
            gate.wait()
            out[i] = workers[i]()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return out


@pytest.fixture
def two(pg_url: str, pg_db: PgConnection):
    """A second "process" of the same authority."""
    other = connect(pg_url)
    yield pg_db, other
    other.close()


# -- consolidation ---------------------------------------------------------------------------------


def test_consolidation_runs_and_lineage_round_trip(pg_db: PgConnection) -> None:
    store = PgConsolidation(pg_db)
    clusters = (
        ClusterOutcome(0, "merged", ("f1", "f2"), "k_sum", "f9", (), "two into one"),
        ClusterOutcome(1, "failed", ("f3",), None, None, ("f3",), ""),
    )
    run = ConsolidationRun(
        "run-1", "acme", "user", "ana", "agent:a", "rules", T0, T0 + timedelta(seconds=2), 3, 2, clusters
    )
    store.record_run(run)
    store.record_run(dataclasses.replace(run, run_id="run-0", started_at=T0 - timedelta(days=1), clusters=()))
    store.record_run(dataclasses.replace(run, run_id="run-b", owner_id="bob", clusters=()))

    assert store.run("run-1") == run and store.run("nope") is None
    assert [r.run_id for r in store.runs(NS)] == ["run-0", "run-1"]
    assert [r.run_id for r in store.runs()] == ["run-0", "run-1", "run-b"]
    assert (store.run("run-1").merged, store.run("run-1").failed) == (1, 1)
    store.mark_undone("run-1", T0 + timedelta(hours=1))
    assert store.run("run-1").undone_at == T0 + timedelta(hours=1)

    summary = version("s1", key="k_sum", fact_id="f9")
    store.record_lineage(
        summary, [version("a", key="k1", fact_id="f1"), version("b", key="k2", fact_id="f2")], "run-1", T0
    )
    found = store.lineage(NS, "f9")
    assert [(r["fact_id"], r["source_fact"], r["source_key"], r["support_type"]) for r in found] == [
        ("f9", "f1", "k1", "derived_from"),
        ("f9", "f2", "k2", "derived_from"),
    ]
    assert found[0]["recorded_at"] == T0 and store.lineage(NS, "f1") == found[:1] and store.lineage(OTHER, "f9") == []


# -- Dreams ----------------------------------------------------------------------------------------


def proposal(pid: str, at_offset: int = 0, **changes: Any) -> DreamProposal:
    fields: dict[str, Any] = dict(
        proposal_id=pid,
        version=1,
        tenant="acme",
        scope="user",
        owner_id="ana",
        kind="merge",
        status="pending",
        targets=(DreamTarget("fact", "f1", "k1", "r1"), DreamTarget("key", "k_sum", None, None)),
        change={"key": "k_sum", "value": "é ünïcode"},
        rationale="two say the same",
        confidence=0.75,
        dedup=f"merge:{pid}",
        pass_id="pass-1",
        decision_id=f"d-{pid}",
        window_start=T0 - timedelta(days=1),
        window_end=T0,
        recorded_at=T0 + timedelta(seconds=at_offset),
        actor="worker:dreams",
    )
    fields.update(changes)
    return DreamProposal(**fields)


def test_dream_proposals_round_trip_in_queue_order(pg_db: PgConnection) -> None:
    store = PgDreams(pg_db)
    # Queued at one instant, ids out of alphabetical order: the queue's order is the insertion's.
    for pid in ("dr-c", "dr-a", "dr-b"):
        store.record(proposal(pid))
    store.record(proposal("dr-0", -5))
    store.record(proposal("dr-x", owner_id="bob"))
    rejected = proposal("dr-a", 9, version=2, status="rejected", actor="user:ana", note="no")
    store.record(rejected)

    assert [p.proposal_id for p in store.proposals(NS)] == ["dr-0", "dr-c", "dr-a", "dr-b"]
    assert store.proposals(NS, "rejected") == [rejected]
    assert [p.proposal_id for p in store.proposals(NS, "pending")] == ["dr-0", "dr-c", "dr-b"]
    assert store.proposal("acme", "dr-a") == rejected and store.proposal("other", "dr-a") is None
    assert store.proposal("acme", "dr-c") == proposal("dr-c")
    assert store.known(NS) == {"merge:dr-0", "merge:dr-a", "merge:dr-b", "merge:dr-c"}
    assert store.pending_namespaces() == [NS, OTHER]
    with pytest.raises(WrongState):  # decided already: a second next version is refused
        store.record(dataclasses.replace(rejected, status="applied"))


def test_dream_windows_over_events_and_interactions(pg_db: PgConnection) -> None:
    store = PgDreams(pg_db)
    assert store.first_event_seq(NS, T0) == 0
    for seq, hours in ((1, -2), (2, 1), (3, 2)):
        insert_event(pg_db, seq, event(f"e{seq}", recorded_at=T0 + timedelta(hours=hours)))
    assert store.first_event_seq(NS, T0) == 1 and store.first_event_seq(NS, T0 + timedelta(days=1)) == 3
    with pg_db.tx() as tx:
        for i, (kind, hours) in enumerate((("render", 1), ("context", 2), ("feedback", 3), ("render", -1))):
            tx.execute(
                "INSERT INTO interactions VALUES ('acme', ?, 'user:ana', ?, '[]', NULL, NULL, ?, NULL, NULL, ?, '{}')",
                [f"i{i}", kind, f'["fact:f{i}", "note:n{i}"]', T0 + timedelta(hours=hours)],
            )
    assert store.surfaced_since("acme", T0) == {"fact:f0", "note:n0", "fact:f1", "note:n1"}


# -- communities and profile schemas ---------------------------------------------------------------


def test_communities_keep_one_row_per_namespace(two: tuple[PgConnection, PgConnection]) -> None:
    first, second = PgCommunities(two[0]), PgCommunities(two[1])
    assert first.stored(NS) is None and first.graph_namespaces() == []
    found = Communities("g1", 4, 3, (("ana", "bo"), ("cy", "gil")), 0.25)
    first.put(NS, found, "louvain", T0)
    assert first.stored(NS) == {
        "graph_digest": "g1",
        "algorithm": "louvain",
        "entities": 4,
        "edges": 3,
        "modularity": 0.25,
        "communities": [["ana", "bo"], ["cy", "gil"]],
        "computed_at": T0,
    }
    # Two replicas rebuilding the same namespace at once: one row, one of their answers.
    results = [dataclasses.replace(found, digest=f"g{i}") for i in range(2, 10)]
    stores = [first, second] * 4
    race([lambda s=s, r=r: s.put(NS, r, "louvain", T0) for s, r in zip(stores, results)])
    assert two[0].one("SELECT count(*) FROM entity_communities") == 1
    assert first.stored(NS)["graph_digest"] in {r.digest for r in results}
    assert first.graph_namespaces() == [NS]


def test_profile_schemas_are_versioned_and_audited(two: tuple[PgConnection, PgConnection], tmp_path: Path) -> None:
    key = HomeKey.create(tmp_path / "keys")
    stores = [PgProfiles(db, PgAuditChain(db, key)) for db in two]

    def put(store: PgProfiles, n: int) -> int:
        schema = ProfileSchemaInfo("acme", "user", "ana", 0, f"h{n}", {"city": {"type": "string", "n": n}}, "u", T0)
        entry = AuditEntry(T0, "acme", "user", "ana", "profile_schema", "set_profile_schema", "", f"h{n}", "u")
        return store.put_schema(schema, entry)

    assert put(stores[0], 0) == 1 and stores[0].schema(NS).properties == {"city": {"type": "string", "n": 0}}
    taken = race([lambda i=i: put(stores[i % 2], i) for i in range(1, 9)])
    assert sorted(taken) == list(range(2, 10))  # each replica's write got its own next version
    versions = stores[1].schema_versions(NS)
    assert [v.version for v in versions] == list(range(1, 10)) and stores[1].schema(NS) == versions[-1]
    assert stores[0].schema_namespaces() == [NS] and stores[0].schema(OTHER) is None
    assert stores[0]._audit.verify().ok


# -- reflect ---------------------------------------------------------------------------------------


def event(event_id: str, *, evidence: tuple[str, ...] = (), event_type: str = "fact.created", recorded_at=T0):
    facts = (FactChange("f1", "k1", None, "r1", ()),)
    return StateChange(
        event_id, event_type, "acme", "user", "ana", "k1", None, "fact", "general", "normal", "agent:a",
        ("agent:a",), None, None, facts, evidence, recorded_at,
    )  # fmt: skip


def insert_event(db: PgConnection, seq: int, e: StateChange) -> None:
    with db.tx() as tx:
        tx.execute(
            "INSERT INTO state_changes (seq, event_id, event_type, tenant, scope, owner_id, frame_id, body, audit_seq) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            event_params(seq, e, seq),
        )


def source(ref: str, seq: int) -> Source:
    return Source(
        ref, "capture", "acme", "user", "ana", seq, f"f-{ref}", f"k-{ref}", "Ana lives in Lisbon", "Ana", "general", T0
    )


def claims_of(src: Source, n: int = 2) -> list[Claim]:
    return [
        Claim(f"{src.ref}#{i}", "acme", "user", "ana", src.ref, "capture", src.seq, src.fact_id, src.key, i,
              text=f"claim {i}", key=f"k{i}", memory_type="general", subject="Ana", observed_at=T0,
              relations=(("ana", "lives_in", "lisbon"),))
        for i in range(n)
    ]  # fmt: skip


def test_reflect_cursors_inputs_claims_and_events(pg_db: PgConnection) -> None:
    store = PgReflect(pg_db)
    store.advance("acme", "reduce", 5, T0)
    store.advance("acme", "reduce", 3, T0)  # never back
    store.advance("acme", "reflect", 2, T0)
    assert store.cursors("acme") == {"reduce": 5, "reflect": 2} and store.cursors("other") == {}

    for seq, evidence in ((1, ()), (2, ("memory.reflect:claim:c1", "x")), (3, ("memory.reflect:claim:c1",))):
        insert_event(pg_db, seq, event(f"e{seq}", evidence=evidence, event_type="fact.created" if seq < 3 else "x"))
    assert [e.seq for e in store.events("acme", 0, 3, 10, ["fact.created"])] == [1, 2]
    assert [e.seq for e in store.events("acme", 1, 3, 1, ["fact.created", "x"])] == [2]
    assert [e.seq for e in store.tagged("acme", 0, "memory.reflect:claim:c1")] == [2, 3]
    assert store.tagged("acme", 2, "memory.reflect:claim:c1")[0].evidence == ("memory.reflect:claim:c1",)

    src = source("fact:a", 2)
    staged = claims_of(src)
    store.stage(src, staged, T0)
    store.stage(src, staged, T0)  # staged again (a kill before the cursor moved): nothing added
    assert store.reduced("acme", ["fact:a", "fact:b"]) == {"fact:a"} and store.reduced("acme", []) == set()
    assert store.claims("acme") == staged and store.claims("acme", after=2) == [] and store.claims("acme", upto=1) == []
    [read] = store.inputs("acme")
    assert (read["source_ref"], read["claims"], read["status"], read["archived_at"]) == ("fact:a", 2, "reduced", None)

    plan = Plan("new", key="k0", value="Lisbon", memory_type="general", target=("f7", "k7"), cosine=0.9, why="fresh")
    written = dataclasses.replace(staged[0], status="written", plan=plan, fact_id="f-new", fact_key="k0", outcome="x")
    store.save([written, dataclasses.replace(staged[1], status="rejected", reason="too long")], T0)
    assert store.claims("acme")[0] == written and store.claims("acme")[1].reason == "too long"
    lineage = pg_db.dicts("SELECT fact_id, source_fact, support_type, run_id FROM belief_sources")
    assert lineage == [
        {"fact_id": "f-new", "source_fact": "f-fact:a", "support_type": "reflected_from", "run_id": "fact:a#0"}
    ]
    assert store.archive("acme", ["fact:a"], T0) == 1 and store.archive("acme", ["fact:a"], T0) == 0
    assert store.inputs("acme")[0]["status"] == "archived" and all(c.archived for c in store.claims("acme"))


def test_two_replicas_never_take_the_same_reflect_work(two: tuple[PgConnection, PgConnection]) -> None:
    stores = [PgReflect(db) for db in two]
    sources = [source(f"fact:{i}", i) for i in range(1, 13)]
    # Both reduce the same inputs at once: each input and claim is kept once.
    race([lambda s=s: [s.stage(src, claims_of(src), T0) for src in sources] for s in stores])
    assert two[0].one("SELECT count(*) FROM reflect_inputs") == 12
    assert two[0].one("SELECT count(*) FROM reflect_claims") == 24

    # Both begin applying every claim from the same read: each claim is taken by one of them,
    # and the loser's later verdict never replaces the winner's.
    read = stores[0].claims("acme")
    race([lambda s=s, n=n: s.save([dataclasses.replace(c, status="applying", applying_from=n) for c in read], T0)
          for n, s in enumerate(stores)])  # fmt: skip
    held = {c.claim_id: c.applying_from for c in stores[0].claims("acme")}
    verdicts = [
        [dataclasses.replace(c, status="written", fact_id=f"w{n}-{c.claim_id}", fact_key="k", applying_from=n)
         for c in read if held[c.claim_id] == n] for n in range(2)
    ]  # fmt: skip
    losers = [
        [dataclasses.replace(c, status="rejected", reason="identical", applying_from=n)
         for c in read if held[c.claim_id] != n] for n in range(2)
    ]  # fmt: skip
    race([lambda n=n: stores[n].save(verdicts[n], T0) for n in range(2)])
    race([lambda n=n: stores[n].save(losers[n], T0) for n in range(2)])
    final = stores[1].claims("acme")
    assert all(c.status == "written" and c.fact_id == f"w{c.applying_from}-{c.claim_id}" for c in final)
    assert two[0].one("SELECT count(*) FROM belief_sources") == 24  # each claim's lineage, once

    # Both archive every input at once: each input is counted by exactly one of them.
    refs = [s.ref for s in sources]
    counts = race([lambda s=s: sum(s.archive("acme", refs[i : i + 3], T0) for i in range(0, 12, 3)) for s in stores])
    assert sum(counts) == 12

    # Cursors raced forward and back end at the furthest position.
    race([lambda n=n: stores[n % 2].advance("acme", "verify", n, T0) for n in range(16)])
    assert stores[0].cursors("acme") == {"verify": 15}


# -- usage -----------------------------------------------------------------------------------------


def fold(db: PgConnection, store: PgUsage, answered: Sequence[Answered] = ()) -> None:
    """One usage fold as the service runs it (under the authority's lock)."""
    with db.lock:
        exposures, through = store.waiting_exposures()
        ids = sorted({e.fact_id for e in exposures} | {r.split(":", 1)[1] for a in answered for r in a.refs})
        totals = fold_usage(exposures, answered, {f: NS for f in ids}, store.totals_of(ids))
        store.apply_fold(totals, through, answered, timedelta(hours=1), T0)


def test_usage_exposures_fold_into_totals(pg_db: PgConnection) -> None:
    store = PgUsage(pg_db)
    store.record_exposures([Exposure(NS, "f1", 2, T0), Exposure(NS, "f2", 1, T0 + timedelta(seconds=1))])
    store.record_exposures([Exposure(NS, "f1", 3, T0 + timedelta(seconds=2))])
    waiting, through = store.waiting_exposures()
    assert through == 3 and [(e.fact_id, e.count) for e in waiting] == [("f1", 2), ("f2", 1), ("f1", 3)]
    with pg_db.tx() as tx:
        for i, (kind, refs, feedback) in enumerate(
            (("render", '["fact:f2"]', None), ("feedback", '["fact:f1"]', "useful"))
        ):
            tx.execute(
                "INSERT INTO interactions VALUES ('acme', ?, 'user:ana', ?, '[]', NULL, NULL, ?, NULL, ?, ?, '{}')",
                [f"i{i}", kind, refs, feedback, T0 + timedelta(minutes=i)],
            )
    answered = store.unfolded(timedelta(hours=1))
    assert [(a.interaction_id, a.kind, a.refs, a.feedback) for a in answered] == [
        ("i0", "render", ("fact:f2",), None),
        ("i1", "feedback", ("fact:f1",), "useful"),
    ]
    fold(pg_db, store, answered)
    assert store.waiting_exposures() == ([], 0) and store.unfolded(timedelta(hours=1)) == []
    totals = store.totals_of(["f1", "f2", "f3"])
    assert (totals["f1"].exposures, totals["f1"].recalls, totals["f2"].exposures) == (5, 1, 2) and "f3" not in totals
    assert store.totals(NS, ["f2", "f1", "f3"]) == {"f1": (1, 0)} and store.totals(OTHER, ["f1"]) == {}
    fold(pg_db, store)  # nothing waits: the totals stay
    assert store.totals_of(["f1"]) == {"f1": totals["f1"]}


def test_exposures_from_two_replicas_sum_exactly(two: tuple[PgConnection, PgConnection]) -> None:
    stores = [PgUsage(db) for db in two]
    facts = [f"f{i}" for i in range(5)]
    done = threading.Event()

    def flush(n: int) -> None:
        for round_ in range(30):
            stores[n % 2].record_exposures([Exposure(NS, f, 1 + (n + round_) % 3, T0) for f in facts])

    def folds(n: int) -> None:
        while not done.is_set():
            fold(two[n], stores[n])

    folders = [threading.Thread(target=folds, args=(n,)) for n in range(2)]
    for t in folders:
        t.start()
    try:
        race([lambda n=n: flush(n) for n in range(4)])
    finally:
        done.set()
        for t in folders:
            t.join()
    fold(two[0], stores[0])
    expected = sum(1 + (n + r) % 3 for n in range(4) for r in range(30))
    assert {f: t.exposures for f, t in stores[1].totals_of(facts).items()} == {f: expected for f in facts}
    assert stores[0].waiting_exposures() == ([], 0)
