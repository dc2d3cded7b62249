"""Typed state-change events: every write op emits exactly one event per audit row, in the write's
own transaction; the stream reads with a cursor; an event holds hashes, never values, and a reader
gets a value back only where its scope and its lenses may read that row."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from memory_core import Identity, Memory
from memory_core.resolver.judge import RuleJudge
from memory_core.substrate.events import EVENT_TYPES
from tests.conftest import store_snapshot
from tests.faults import FaultyStore
from tests.remember_setup import lensed


def _rows(memory: Memory, table: str) -> int:
    return memory.store.unchecked_sql(f"SELECT count(*) AS n FROM {table}")[0]["n"]


def _redact_first(tool):
    tool.set("k", "v1")
    tool.set("k", "v2")
    return lambda: tool.redact("k", tool.history("k")[0].id)


def _snapshot_payload(tool):
    tool.set("k", "v1")
    payload = tool.snapshot()
    tool.delete("k")
    return lambda: tool.restore_snapshot(payload, scope="agent")


# (what, the op's setup answering the op, the one event type it emits)
OPS = [
    ("set a new key", lambda t: lambda: t.set("k", "v1"), "fact.created"),
    ("set a changed value", lambda t: (t.set("k", "v1"), lambda: t.set("k", "v2"))[1], "fact.superseded"),
    ("set the same value", lambda t: (t.set("k", "v1"), lambda: t.set("k", "v1"))[1], "fact.restated"),
    ("delete", lambda t: (t.set("k", "v1"), lambda: t.delete("k"))[1], "fact.deleted"),
    ("restore", lambda t: (t.set("k", "v1"), t.delete("k"), lambda: t.restore("k"))[2], "fact.restored"),
    ("lock", lambda t: (t.set("k", "v1"), lambda: t.lock("k"))[1], "fact.locked"),
    ("unlock", lambda t: (t.set("k", "v1"), t.lock("k"), lambda: t.unlock("k"))[2], "fact.unlocked"),
    ("pin", lambda t: (t.set("k", "v1"), lambda: t.pin("k"))[1], "fact.pinned"),
    ("unpin", lambda t: (t.set("k", "v1"), t.pin("k"), lambda: t.unpin("k"))[2], "fact.unpinned"),
    ("reject", lambda t: (t.set("k", "v1"), lambda: t.reject("k"))[1], "fact.rejected"),
    ("proposal", lambda t: (t.set("k", "v1", proposed=True), lambda: t.proposal_decide("k"))[1], "fact.promoted"),
    ("demote", lambda t: (t.set("k", "v1"), lambda: t.demote("k"))[1], "fact.demoted"),
    ("redact", _redact_first, "fact.redacted"),
    ("doc_put", lambda t: lambda: t.doc_put("guide", "# Guide\n\nText."), "document.put"),
    (
        "doc_delete",
        lambda t: (t.doc_put("guide", "# Guide\n\nText."), lambda: t.doc_delete("guide"))[1],
        "document.deleted",
    ),
    ("bulk_set", lambda t: lambda: t.bulk_set([{"key": "a", "value": 1}, {"key": "b", "value": 2}]), "batch.written"),
    ("import_items", lambda t: lambda: t.import_items(["one text", "another"]), "batch.written"),
    ("restore_snapshot", _snapshot_payload, "snapshot.restored"),
]


@pytest.mark.parametrize("what, setup, expected", OPS, ids=[o[0] for o in OPS])
def test_every_write_op_emits_exactly_one_event_of_its_type(memory, tool, what, setup, expected):
    op = setup(tool)
    seq, audits = memory.store.substrate.last_event_seq(), _rows(memory, "audit_log")
    op()
    page = tool.events(since=seq, scopes=["agent", "user"])
    assert [e.event_type for e in page.events] == [expected]
    assert _rows(memory, "audit_log") == audits + 1  # one audit row, one event
    assert expected in EVENT_TYPES
    assert memory.verify_audit().ok  # the event rows are bound by the chain like the rows they describe


def test_a_correction_names_both_versions_and_what_changed(tool):
    tool.set("city", "Lisbon")
    tool.set("city", "Porto")
    event = tool.events(types=["fact.superseded"]).events[0]
    old, new = sorted(event.facts, key=lambda f: f.before_version_id is None)
    assert old.changes["status"] == ["active", "superseded"] and old.value_before == old.value_after == "Lisbon"
    assert new.before_version_id is None and new.value_after == "Porto"
    assert new.changes["value"][0] is None and len(new.changes["value"][1]) == 64  # a hash, not the value


def test_a_failed_write_leaves_neither_its_rows_nor_its_event(home, clock):
    store = FaultyStore.open(home)
    memory = Memory(store, clock)
    tool = memory.for_run(Identity(tenant="acme", user="ana"))
    tool.set("kept", "v")
    before = store_snapshot(memory)
    inside = {}

    def check() -> None:  # inside the transaction, just before it fails: the row and its event are there
        inside["versions"] = _rows(memory, "memory_versions")
        inside["events"] = _rows(memory, "state_changes")

    store.versions.fail_inside(lambda batch: bool(batch.events), OSError("disk full"), check=check)
    with pytest.raises(OSError):
        tool.set("lost", "v")
    assert inside == {"versions": 2, "events": 2}
    assert store_snapshot(memory) == before
    tool.set("next", "v")  # the stream goes on without a gap
    assert [e.seq for e in tool.events().events] == [1, 2]
    memory.close()


def test_the_stream_reads_with_a_cursor_by_type_and_family(tool):
    for i in range(5):
        tool.set(f"k{i}", f"v{i}")
    tool.delete("k0")
    first = tool.events(limit=2)
    assert [e.seq for e in first.events] == [1, 2] and first.next_since == 2
    rest = tool.events(since=first.next_since)
    assert [e.seq for e in rest.events] == [3, 4, 5, 6]
    assert [e.event_type for e in tool.events(types=["fact.deleted"]).events] == ["fact.deleted"]
    assert len(tool.events(types=["fact.*"]).events) == 6
    assert tool.events(since=rest.next_since).events == ()


def test_events_stay_in_their_namespace(memory, tool_for):
    ana, bea = tool_for(user="ana"), tool_for(user="bea")
    ana.set("secret", "ana's")
    bea.set("other", "bea's")
    seen = bea.events(scopes=["user"])
    assert [e.key for e in seen.events] == ["other"]
    assert "ana's" not in json.dumps([f.value_after for e in seen.events for f in e.facts])


def test_an_event_stores_no_value_and_a_redaction_reaches_what_it_shows(memory, tool):
    tool.set("pin_code", "4711-SECRET")
    tool.set("pin_code", "0000")
    stored = memory.store.unchecked_sql("SELECT * FROM state_changes")
    assert "4711-SECRET" not in json.dumps(stored, default=str)
    tool.redact("pin_code", tool.history("pin_code")[0].id)
    shown = json.dumps([f.value_before for e in tool.events().events for f in e.facts], default=str)
    assert "4711-SECRET" not in shown
    assert tool.events(types=["fact.redacted"]).events[0].facts[0].changes["value"][0] is None


def test_through_a_lens_only_watched_admitted_events_and_no_value_it_excludes(indexed_memory):
    admin, bob, _ = lensed(indexed_memory)
    bob.set("deploy_day", "Fridays are frozen", memory_type="lesson")
    bob.set("salary", "ana earns 90k", memory_type="lesson", sensitivity="high")
    bob.set("p95", "checkout p95 is 420 ms", memory_type="metric")
    admin.lens_define("narrow", entity_types=["lesson"], watches=["fact.created"])
    admin.lens_assign("narrow", "agent:bob")
    seen = bob.events(lenses=["narrow"])
    assert [e.key for e in seen.events] == ["deploy_day"]  # the high row and the metric stay out
    assert seen.events[0].facts[0].value_after == "Fridays are frozen"
    wide = bob.events(lenses=["narrow", "analyst"])  # union: the metric comes in, never the high row
    assert {e.key for e in wide.events} == {"deploy_day", "p95"}
    assert "90k" not in json.dumps([f.value_after for e in wide.events for f in e.facts])


def test_a_reviewer_decision_and_a_resolver_action_say_which_they_were(home, clock):
    from tests.review_home import fill_review_home

    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = fill_review_home(memory, clock)
        assert "resolver.acted" in {e.event_type for e in tool.events().events}
        item = tool.review_queue()[0]
        seq = memory.store.substrate.last_event_seq()
        tool.resolve_conflict(item.key, item.peers[0]["key"], "clear")
        assert [e.event_type for e in tool.events(since=seq).events] == ["review.decided"]


def test_workers_that_decide_to_do_nothing_leave_a_no_op_trace(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        root = memory.for_run(Identity(tenant="acme", user="root", admin=True))
        assert memory.sweep_expired()["keys"] == 0
        sweep = root.events(scopes=["global"], types=["decision.recorded"]).events
        assert len(sweep) == 1 and sweep[0].actor == "worker:expiry-sweep"
        traces = memory.store.substrate.decisions([root.identity.namespace("global")])
        assert [t.decision for t in traces] == ["no_op"] and "no fact past its expiry" in traces[0].rationale

        memory.for_run(Identity(tenant="acme", user="ops", admin=True)).configure(conflict_threshold=0.99)
        ana = memory.for_run(Identity(tenant="acme", user="ana"))
        ana.set("pet", "Ana has a cat called Miso")
        clock.advance(timedelta(days=1))
        ana.set("pet-food", "Ana has a cat called Miso who eats tuna")  # related, not contradicting
        memory.resolve(RuleJudge())
        traces = memory.store.substrate.decisions([ana.identity.namespace("user")])
        assert traces and all(t.decision == "no_op" and t.actor.startswith("worker:") for t in traces)
        assert all(len(t.inputs) == 2 for t in traces)


def test_a_graph_change_rides_in_the_event_of_the_write_that_made_it(tool):
    tool.set("home", "I live in Lisbon", relations=[["ana", "lives_in", "lisbon"]])
    tool.set("home", "I live in Porto", relations=[["ana", "lives_in", "porto"]])
    first, second = tool.events().events
    assert len(first.summary["graph"]["observed"]) == 1 and first.summary["graph"]["entities"] == 2
    assert second.summary["graph"]["ended"] == first.summary["graph"]["observed"]  # Lisbon ended by Porto
    assert all(r.startswith("relation:") for r in second.summary["graph"]["observed"])


def test_the_other_writes_emit_one_event_each_too(memory, tool, clock):
    def one_event(op, expected):
        seq, audits = memory.store.substrate.last_event_seq(), _rows(memory, "audit_log")
        op()
        found = [e.event_type for e in tool.events(since=seq, scopes=["agent", "user"]).events]
        assert (found, _rows(memory, "audit_log")) == ([expected], audits + 1), found

    tool.set("k", "v1")
    version = tool.history("k")[-1].version
    one_event(lambda: tool.delete_version("k", version), "fact.deleted")
    tool.restore("k")
    tool.set("short", "lived", ttl_seconds=60)
    clock.advance(timedelta(minutes=2))
    one_event(memory.sweep_expired, "fact.expired")
    one_event(lambda: tool.rollback(clock.now() - timedelta(minutes=1), apply=True), "fact.rolled_back")
    messages = [{"role": "user", "content": "I live in Lisbon and I work at Acme."}]
    one_event(lambda: tool.set_from_messages(messages, session="s9"), "batch.written")
