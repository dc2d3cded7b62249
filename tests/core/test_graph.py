"""The entity graph: triples stated by rows, one value current, retirements followed, Undo."""

from datetime import timedelta

import pytest

from memory_core import FixedClock, Identity, Memory
from memory_core.errors import InvalidInput
from tests.conftest import store_snapshot, utc

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

OCT1 = utc(2025, 10, 1, 9)


@pytest.fixture
def gclock():
    return FixedClock(OCT1)


@pytest.fixture
def gmem(home, gclock):
    with Memory.open(home, clock=gclock, embedder="hashing") as memory:
        memory.for_run(Identity(tenant="acme", user="ana", admin=True)).configure(
            single_valued=["lives_in", "works_at"]
        )
        yield memory


@pytest.fixture
def ana(gmem):
    return gmem.for_run(Identity(tenant="acme", user="ana", agent="helper", session="s1"))


def current(tool, subject="user", relation="lives_in", **kw):
    return sorted(f.object for f in tool.list_facts(subject, relation=relation, **kw))


def lives(city, **kw):
    return [{"subject": "I", "relation": "lives in", "object": city, **kw}]


def test_named_relations_are_stored_canonical_and_linked_to_their_row(ana):
    result = ana.set("home", "I live in London", relations=lives("London"))
    [fact] = ana.list_facts("I")
    assert (fact.subject, fact.relation, fact.object) == ("user", "lives_in", "london")
    assert fact.rows == ({"key": "home", "fact_id": result.rows[0].fact_id, "link": "stated"},)
    assert ana.get("home").relations[0].object == "london"  # the row carries what it states


def test_relations_are_validated_and_a_refusal_writes_nothing(gmem, ana):
    before = store_snapshot(gmem)
    for bad in (
        "lives in London",
        [["I", "lives in"]],
        [{"subject": "I", "relation": "x", "object": ""}],
        [["I", "r", str(i)] for i in range(9)],
        [["I", "r", "x"], ["i", "R", "X"]],
        [{"subject": "I", "relation": "r", "object": "x", "colour": "red"}],
    ):
        with pytest.raises(InvalidInput):
            ana.set("home", "I live in London", relations=bad)
    assert store_snapshot(gmem) == before


def test_a_newer_value_of_a_single_valued_relation_closes_the_older_when_it_starts(ana, gclock):
    ana.set("home", "I live in London", relations=lives("London"))
    gclock.advance(timedelta(days=10))
    ana.set("home", "I live in Paris", relations=lives("Paris"))
    assert current(ana) == ["paris"]
    assert current(ana, as_of=OCT1 + timedelta(days=5)) == ["london"]
    [london] = [f for f in ana.graph_recall("london", as_of=OCT1 + timedelta(days=5)).facts]
    assert london.valid_at == OCT1 and london.ended_at == OCT1 + timedelta(days=10)  # current then, ended later
    assert london.end_reason == "retired"  # the same-key supersession retired its row at Paris's start


def test_multi_valued_relations_keep_every_value(ana, gclock):
    ana.set("likes-1", "I like tea", relations=[["I", "likes", "tea"]])
    gclock.advance(timedelta(hours=1))
    ana.set("likes-2", "I like jazz", relations=[["I", "likes", "jazz"]])
    assert current(ana, relation="likes") == ["jazz", "tea"]


def test_london_until_december_stays_current_beside_a_newer_value_until_its_end(ana, gclock):
    ana.set(
        "home",
        "I live in London until December",
        valid_at="2025-10-01T00:00:00Z",
        relations=lives("London", valid_to="2025-12-01T00:00:00Z"),
    )
    gclock.advance(timedelta(days=14))
    ana.set("flat", "I live in Paris", relations=lives("Paris"))
    assert current(ana) == ["london", "paris"]  # its own end has not come
    assert current(ana, as_of="2025-12-02T00:00:00Z") == ["paris"]  # and then it ends by itself
    [london] = [f for f in ana.list_facts("user", as_of="2025-11-01T00:00:00Z") if f.object == "london"]
    assert london.ended_at is None and london.invalid_at == utc(2025, 12, 1)


def test_an_undated_value_and_a_dated_value_on_one_day_the_later_arrival_wins(gmem, gclock):
    # Undated Paris seen at 10:00 on Oct 15, then London dated to Oct 15 arriving at 11:00.
    ana = gmem.for_run(Identity(tenant="acme", user="ana"))
    bob = gmem.for_run(Identity(tenant="acme", user="bob"))
    gclock.set(utc(2025, 10, 15, 10))
    ana.set("home", "I live in Paris", relations=lives("Paris"))
    bob.set("home", "I live in London", relations=lives("London", valid_from="2025-10-15T00:00:00Z"))
    gclock.set(utc(2025, 10, 15, 11))
    ana.set("home-2", "I live in London", relations=lives("London", valid_from="2025-10-15T00:00:00Z"))
    assert current(ana) == ["london"]
    # ... and the other way round: the dated value first, the undated one later that day wins.
    gclock.set(utc(2025, 10, 15, 12))
    bob.set("home-2", "I live in Paris", relations=lives("Paris"))
    assert current(bob) == ["paris"]
    [closed] = [f for f in bob.list_facts("user", as_of=utc(2025, 10, 15, 11, 59))]
    assert closed.object == "london"


def test_the_three_value_cycle_a_pairwise_rule_gets_wrong_leaves_one_value(ana, gclock):
    # Seed 001 "Why one key": A dated Oct 13 noon, B undated, C dated Oct 14; arriving C, B, A.
    gclock.set(utc(2025, 10, 14, 10))
    ana.set("c", "I live in Cairo", relations=lives("Cairo", valid_from="2025-10-14T00:00:00Z"))
    gclock.set(utc(2025, 10, 14, 11))
    ana.set("b", "I live in Bern", relations=lives("Bern"))
    gclock.set(utc(2025, 10, 14, 12))
    ana.set("a", "I live in Accra", relations=lives("Accra", valid_from="2025-10-13T12:00:00Z"))
    # The key (start day, seen_at, object) orders them A < C < B: B is current, each held in turn.
    assert current(ana) == ["bern"]
    assert current(ana, as_of=utc(2025, 10, 13, 18)) == ["accra"]
    assert current(ana, as_of=utc(2025, 10, 14, 10, 30)) == ["cairo"]
    for hour in range(0, 48):
        assert len(current(ana, as_of=utc(2025, 10, 13) + timedelta(hours=hour))) <= 1


def test_a_retirement_closes_what_the_winner_does_not_state_and_its_undo_opens_it_again(gmem, ana, gclock):
    gmem.for_run(Identity(tenant="acme", user="ana", admin=True)).configure(conflict_threshold=0.3)
    ana.set("home", "I live in London", relations=lives("London") + [["I", "works at", "Acme"]])
    gclock.advance(timedelta(days=3))
    refined = ana.set("home-now", "I live in Paris", relations=lives("Paris") + [["I", "works at", "Acme"]])
    assert refined.verdict == "refines"
    assert current(ana) == ["paris"] and current(ana, relation="works_at") == ["acme"]  # the winner states Acme
    [london] = [f for f in ana.list_facts("user", as_of=OCT1 + timedelta(days=1)) if f.object == "london"]
    gclock.advance(timedelta(days=1))
    restore_at = gclock.now()
    ana.restore("home")
    # Undo: London current again from the restore on, Paris closed by it; the earlier interval is history.
    assert current(ana) == ["london"]
    assert current(ana, as_of=OCT1 + timedelta(days=3, hours=1)) == ["paris"]
    [marker] = ana.list_facts("user", relation="lives_in")
    assert marker.origin == "restore" and marker.valid_at == restore_at
    assert london.origin == "stated" and london.valid_at == OCT1


def test_a_deleted_row_closes_its_triples_and_restore_reopens_them(ana, gclock):
    ana.set("job", "I work at Acme", relations=[["I", "works at", "Acme"]])
    gclock.advance(timedelta(days=1))
    ana.delete("job")
    assert current(ana, relation="works_at") == []
    assert current(ana, relation="works_at", as_of=OCT1 + timedelta(hours=1)) == ["acme"]
    gclock.advance(timedelta(days=1))
    ana.restore("job")
    assert current(ana, relation="works_at") == ["acme"]


def test_a_triple_another_live_row_states_stays_open(ana, gclock):
    ana.set("job", "I work at Acme", relations=[["I", "works at", "Acme"]])
    ana.set("badge", "My badge says Acme", relations=[["I", "works at", "Acme"]])
    gclock.advance(timedelta(days=1))
    ana.delete("job")
    [fact] = ana.list_facts("user", relation="works_at")
    assert sorted(r["key"] for r in fact.rows) == ["badge", "job"]


def test_a_winner_stating_nothing_keeps_a_triple_its_words_still_say(ana, gclock):
    ana.set("home", "I live in London", relations=lives("London"))
    gclock.advance(timedelta(days=1))
    ana.set("home", "I live in London.")  # a revision naming no relation, same fact in its words
    assert current(ana) == ["london"]
    [fact] = ana.list_facts("user")
    assert {r["link"] for r in fact.rows} == {"stated", "inferred"}
    gclock.advance(timedelta(days=1))
    ana.set("home", "I live in Rome and visited London")  # says London, but not that she lives there
    assert current(ana) == []


def test_when_the_current_value_is_retired_the_newest_value_still_held_comes_back(ana, gclock):
    ana.set("old", "I live in London", relations=lives("London"))
    gclock.advance(timedelta(days=2))
    ana.set("new", "I live in Paris", relations=lives("Paris"))
    assert current(ana) == ["paris"]
    gclock.advance(timedelta(days=2))
    deleted_at = gclock.now()
    ana.delete("new")  # Paris was wrong: London, which a live row still states, is current again
    assert current(ana) == ["london"]
    [fact] = ana.list_facts("user")
    assert fact.origin == "fallback" and fact.valid_at == deleted_at
    assert current(ana, as_of=OCT1 + timedelta(days=3)) == ["paris"]  # history is kept


def test_a_high_row_a_proposal_and_a_dry_run_hold_no_graph_facts(gmem, ana):
    ana.set("secret", "I live in Oslo", sensitivity="high", relations=lives("Oslo"))
    ana.set("maybe", "I might live in Rome", proposed=True, relations=lives("Rome"))
    ana.set("plan", "I live in Lima", dry_run=True, relations=lives("Lima"))
    assert current(ana) == []
    assert gmem.store.graph.counts()["graph_triples"] == 0


def test_graph_recall_walks_hops_and_returns_entity_types(ana):
    ana.set(
        "svc",
        "checkout-api depends on payments-db",
        subject="checkout-api",
        subject_type="service",
        relations=[
            {"subject": "checkout-api", "relation": "depends on", "object": "payments-db", "object_type": "database"}
        ],
    )
    ana.set("db", "payments-db runs on host-7", relations=[["payments-db", "runs on", "host-7"]])
    one = ana.graph_recall("checkout-api")
    assert [(f.subject, f.relation, f.object) for f in one.facts] == [("checkout-api", "depends_on", "payments-db")]
    assert one.entities["checkout-api"]["types"] == ["service"]
    assert one.entities["payments-db"] == {"hop": 1, "types": ["database"]}
    two = ana.graph_recall("checkout-api", hops=2)
    assert {f.object for f in two.facts} == {"payments-db", "host-7"} and two.entities["host-7"]["hop"] == 2
    with pytest.raises(InvalidInput):
        ana.graph_recall("checkout-api", hops=0)
    with pytest.raises(InvalidInput):
        ana.list_facts("  ")


def test_an_entity_chunk_joins_the_graph_and_prose_does_not(ana, gclock):
    ana.doc_put(
        "runbook",
        "# Checkout\n\nRestart the pods.\n\n## Alerts\n\nPage the on-call.",
        metadata={"subject": "checkout-api", "entity_type": "service", "fact_class": "runbook"},
    )
    ana.doc_put("notes", "# Notes\n\nSome prose.")
    found = ana.graph_recall("checkout-api")
    assert [d["key"] for d in found.documents] == ["doc:runbook#0000", "doc:runbook#0001"]
    assert {d["fact_class"] for d in found.documents} == {"runbook"}
    assert found.entities["checkout-api"]["types"] == ["service"]
    gclock.advance(timedelta(hours=1))
    ana.doc_delete("runbook")
    assert ana.graph_recall("checkout-api").documents == ()


def test_an_expired_row_hides_its_triples_at_once(ana, gclock):
    ana.set("visit", "I work at the Lisbon office", ttl_seconds=60, relations=[["I", "works at", "Lisbon office"]])
    assert current(ana, relation="works_at") == ["lisbon office"]
    gclock.advance(timedelta(minutes=2))
    assert current(ana, relation="works_at") == []


def test_redaction_leaves_no_triple_of_the_value(gmem, ana, gclock):
    old = ana.set("home", "I live in Zanzibar", relations=lives("Zanzibar")).rows[0]
    gclock.advance(timedelta(days=1))
    ana.set("home", "I live in Oslo", relations=lives("Oslo"))
    ana.redact("home", old.id)
    assert current(ana) == ["oslo"]
    assert [f.object for f in ana.list_facts("user", as_of=OCT1)] == []
    assert "zanzibar" not in repr(gmem.store.unchecked_sql("SELECT * FROM graph_triples")).casefold()
    assert "zanzibar" not in repr(gmem.store.unchecked_sql("SELECT * FROM graph_entities")).casefold()


def test_a_document_put_again_with_another_subject_moves_its_chunks_in_the_graph(ana, gclock):
    body = "# Checkout\n\nRestart the pods."
    ana.doc_put(
        "runbook", body, metadata={"subject": "checkout-api", "entity_type": "service", "fact_class": "runbook"}
    )
    gclock.advance(timedelta(hours=1))
    again = ana.doc_put(
        "runbook", body, metadata={"subject": "billing-api", "entity_type": "service", "fact_class": "runbook"}
    )
    assert again.details["chunks_unchanged"] == 0  # the text is the same, the graph facts are not
    assert [d["key"] for d in ana.graph_recall("billing-api").documents] == ["doc:runbook#0000"]
    assert ana.graph_recall("checkout-api").documents == ()  # the chunk no longer names it
    gclock.advance(timedelta(hours=1))
    ana.doc_put("runbook", body, metadata={"subject": "billing-api", "entity_type": "service", "fact_class": "runbook"})
    assert ana.get("doc:runbook#0000").reinforcement_count == 1  # a true restatement stays one
