"""Where the project once differed from the seed and now follows it: an expiry's demote keeps the
fact, a snapshot leaves an audit row, a bad outcome quarantines the facts its decision used, and
an Undo of a recorded retirement writes an ``unsupersede`` record naming it. Each with its
refusals: typed, and the store exactly as it was."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core import Identity, Memory, Op, Status
from memory_core.errors import InternalError, InvalidInput, NotFound, NothingToRestore, ScopeForbidden
from memory_core.lifecycle.quarantine import is_negative, used_fact_ids
from tests.conftest import store_snapshot
from tests.remember_setup import lensed

pytestmark = pytest.mark.faces  # the behaviour suite: in-process, through the service, on PostgreSQL

ANA = Identity(tenant="acme", user="ana", agent="helper", session="s1")


@pytest.fixture
def memory(indexed_memory):
    return indexed_memory


@pytest.fixture
def ana(memory):
    return memory.for_run(ANA)


# -- 1. on_expire=demote ---------------------------------------------------------------------------


def test_an_expired_demote_stays_an_established_fact_with_its_graph_facts(ana, memory, clock):
    ana.set("home", "I live in Lisbon", relations=[["ana", "lives_in", "lisbon"]], ttl_seconds=60, on_expire="demote")
    ana.set("maybe", "may move to Porto", proposed=True, ttl_seconds=60, on_expire="demote", confidence=0.8)
    clock.advance(timedelta(minutes=2))
    assert ana.get("home") is None  # reads hide it at once, before any sweep
    assert memory.sweep_expired() == {"tombstone": 0, "demote": 2, "anonymize": 0, "keys": 2}
    home = ana.get("home")
    assert (home.status, home.op, home.confidence, home.expires_at) == (Status.ACTIVE, Op.EXPIRE, 0.5, None)
    assert [(f.subject, f.relation, f.object) for f in ana.list_facts("ana")] == [("ana", "lives_in", "lisbon")]
    assert "home" in [h.key for h in ana.recall("where does ana live").hits]
    maybe = ana.get("maybe")  # a proposal stays a proposal: the sweep never promotes or demotes status
    assert (maybe.status, maybe.confidence) == (Status.PROPOSED, 0.4)
    assert memory.sweep_expired()["keys"] == 0  # no expiry left: nothing is due again
    clock.advance(timedelta(days=400))
    assert ana.get("home").value == "I live in Lisbon"


def test_the_demote_op_still_makes_a_fact_a_proposal(ana):
    ana.set("team", "platform")
    demoted = ana.demote("team").version
    assert (demoted.status, demoted.confidence) == (Status.PROPOSED, 0.5)


def test_an_unknown_on_expire_is_refused_and_writes_nothing(ana, memory):
    before = store_snapshot(memory)
    with pytest.raises(InvalidInput):
        ana.set("otp", "4411", ttl_seconds=60, on_expire="demote-later")
    assert store_snapshot(memory) == before


# -- 2. snapshot's audit row -----------------------------------------------------------------------


def test_a_snapshot_leaves_one_hash_only_audit_row(ana, memory):
    ana.set("diet", "vegetarian")
    rows_before = len(memory.store.versions.audit_rows())
    payload = ana.snapshot()
    rows = memory.store.versions.audit_rows()
    assert len(rows) == rows_before + 1
    entry = rows[-1].entry
    assert (entry.op, entry.key, entry.scope, entry.owner_id) == (
        "snapshot",
        f"snapshot:{payload['snapshot_id']}",
        "user",
        "ana",
    )
    assert entry.content_sha256 == payload["content_sha256"] and entry.actor == "agent:helper"
    assert "vegetarian" not in repr(entry)
    assert memory.verify_audit().ok
    assert ana.events(types=["snapshot.*"]).events == ()  # a read: no state changed, no event


def test_a_snapshot_of_a_scope_the_run_lacks_is_refused_and_writes_nothing(memory):
    narrow = memory.for_run(Identity(tenant="acme", user="ana", memory_scopes=frozenset({"user"})))
    before = store_snapshot(memory)
    with pytest.raises(ScopeForbidden):
        narrow.snapshot(scope="tenant")
    assert store_snapshot(memory) == before


def test_a_snapshot_of_a_read_only_home_is_served_without_an_audit_row(home, clock):
    with Memory.open(home, clock=clock) as memory:
        memory.for_run(ANA).set("diet", "vegetarian")
        audited = len(memory.store.versions.audit_rows())
    with Memory.open(home, clock=clock, read_only=True) as memory:
        before = store_snapshot(memory)
        payload = memory.for_run(ANA).snapshot()
        assert [r["key"] for r in payload["rows"]] == ["diet"]
        assert store_snapshot(memory) == before and len(memory.store.versions.audit_rows()) == audited


# -- 3. negative-outcome quarantine ----------------------------------------------------------------


def test_what_counts_as_a_bad_outcome():
    assert is_negative("failure") and is_negative("Failed: the refund went to the old card")
    assert is_negative("negative:  customer complained")
    assert not is_negative("fixed the failing test") and not is_negative("success") and not is_negative(None)
    assert not is_negative("failures were fixed")
    assert used_fact_ids(["fact:a", "decision:d", "note:b", "fact:a", "relation:r"]) == ("a", "b")


def _facts(bob):
    ids = {}
    for key, value, extra in (
        ("refund", "refunds go to the card on file", {}),
        ("vip", "Ana is a VIP customer", {"pin": True}),
        ("dob", "Ana was born in 1990", {}),
        ("tone", "Ana prefers a formal tone", {}),
    ):
        ids[key] = bob.set(key, value, **extra).version.fact_id
    bob.lock("dob")
    return ids


def test_a_bad_outcome_rejects_the_facts_its_decision_used_and_restore_undoes_it(memory):
    _, bob, _ = lensed(memory)
    ids = _facts(bob)
    stranger = memory.for_run(Identity(tenant="globex", user="zed", agent="z"))
    theirs = stranger.set("refund", "refunds go to store credit").version.fact_id
    inputs = [f"fact:{ids[k]}" for k in ("refund", "vip", "dob")] + [f"fact:{theirs}"]
    trace = bob.decide("act", "refund to the card on file", lens_id="developer", inputs=inputs)
    assert bob.get("refund").status is Status.ACTIVE  # no outcome yet: nothing happens
    done = bob.decision_outcome(trace.decision_id, "failure: the card was closed, the refund bounced")
    assert done.outcome.startswith("failure")
    refund = bob.history("refund")[-1]
    assert (refund.op, refund.status, refund.changed_by) == (Op.REJECT, Status.REJECTED, "agent:bob")
    assert bob.get("refund") is None
    assert bob.get("vip").status is Status.ACTIVE  # pinned: a person vouched for it, never quarantined
    assert bob.get("dob").status is Status.ACTIVE  # locked: the lock holds
    assert bob.get("tone").status is Status.ACTIVE  # not used by the decision
    assert stranger.get("refund").status is Status.ACTIVE  # another tenant's fact: never touched
    [event] = [e for e in bob.events(types=["fact.rejected"]).events if e.key == "refund"]
    assert event.evidence == (f"decision:{trace.decision_id}",)  # the decision whose outcome is the reason
    audit = memory.store.versions.audit_rows()
    assert [r.entry.op for r in audit if r.entry.key == "refund"][-1] == "quarantine"
    assert bob.restore("refund").verdict == "restored"
    assert bob.get("refund").status is Status.ACTIVE
    assert memory.verify_audit().ok


def test_a_decision_recorded_with_a_bad_outcome_quarantines_at_once(memory):
    _, bob, _ = lensed(memory)
    ids = _facts(bob)
    bob.decide("act", "used the tone", lens_id="developer", inputs=[f"fact:{ids['tone']}"], outcome="failed")
    assert bob.get("tone") is None and bob.history("tone")[-1].op is Op.REJECT


def test_an_outcome_that_is_not_bad_rejects_nothing(memory):
    _, bob, _ = lensed(memory)
    ids = _facts(bob)
    trace = bob.decide("act", "refund to the card", lens_id="developer", inputs=[f"fact:{ids['refund']}"])
    bob.decision_outcome(trace.decision_id, "fixed the failing refund: it went through")
    assert bob.get("refund").status is Status.ACTIVE
    again = bob.decide("act", "again", lens_id="developer", inputs=[f"fact:{ids['refund']}"])
    bob.decision_outcome(again.decision_id, "failure")
    bob.decision_outcome(again.decision_id, "failure")  # said twice: the fact is already rejected
    assert [r.op for r in bob.history("refund")].count(Op.REJECT) == 1


def test_a_refused_outcome_rejects_nothing_and_writes_nothing(memory):
    _, bob, eve = lensed(memory)
    ids = _facts(bob)
    trace = bob.decide("act", "refund", lens_id="developer", inputs=[f"fact:{ids['refund']}"])
    before = store_snapshot(memory)
    with pytest.raises(NotFound):  # only the decision's maker adds its outcome
        eve.decision_outcome(trace.decision_id, "failure")
    with pytest.raises(NotFound):
        bob.decision_outcome("no-such-decision", "failure")
    with pytest.raises(InvalidInput):
        bob.decision_outcome(trace.decision_id, "")
    with pytest.raises(InvalidInput):
        bob.decision_outcome(trace.decision_id, "failure: " + "x" * 5000)
    assert store_snapshot(memory) == before
    assert bob.get("refund").status is Status.ACTIVE


# -- 4. Undo's unsupersede record ------------------------------------------------------------------

OFFICE = "Ana's office is on the third floor of the Lisbon building"
MOVED = "Ana's office is on the fourth floor of the Lisbon building"


@pytest.fixture
def rmem(memory):
    # The write path leaves these pairs alone (threshold 0.99); the resolver's floor is 0.60.
    memory.for_run(Identity(tenant="acme", user="ops", admin=True)).configure(
        policy="auto_reinforce", conflict_threshold=0.99
    )
    return memory


def _retired(rmem, ana, clock):
    ana.set("office", OFFICE)
    clock.advance(timedelta(days=1))
    ana.set("office-now", MOVED)
    clock.advance(timedelta(seconds=1))
    assert rmem.resolve().actions["retire"] == 1
    [retire] = rmem.store.ledger.resolver_records()
    return retire


def test_an_undo_of_a_retirement_records_unsupersede_naming_it(rmem, ana, clock):
    retire = _retired(rmem, ana, clock)
    clock.advance(timedelta(minutes=1))
    assert ana.restore("office").verdict == "restored" and ana.get("office").value == OFFICE
    records = rmem.store.ledger.resolver_records()
    [undo] = [r for r in records if r["action"] == "unsupersede"]
    assert undo["reason"] == f"undoes {retire['record_id']}"
    assert (undo["peer_fact"], undo["judged_fact"], undo["peer_key"]) == (
        retire["peer_fact"],
        retire["judged_fact"],
        "office",
    )
    assert (undo["verdict"], undo["judge"]) == ("undo", "agent:helper")
    assert rmem.resolve().judged == 0  # the pair stays unowed after the Undo
    assert rmem.verify_audit().ok


def test_an_undo_of_a_delete_writes_no_record_and_a_refused_undo_writes_nothing(rmem, ana, clock):
    retire = _retired(rmem, ana, clock)
    ana.set("pet", "a cat named Miso")
    ana.delete("pet")
    ana.restore("pet")
    assert rmem.store.ledger.resolver_records() == [retire]
    before = store_snapshot(rmem)
    with pytest.raises(NothingToRestore):
        ana.restore("office-now")  # its latest change retired nothing
    with pytest.raises(NotFound):
        ana.restore("no-such-key")
    other = rmem.for_run(Identity(tenant="globex", user="ana", agent="helper"))
    with pytest.raises(NotFound):  # another tenant's retired key answers as missing
        other.restore("office")
    assert store_snapshot(rmem) == before


def test_an_undo_whose_record_cannot_be_written_restores_nothing(rmem, ana, clock, monkeypatch):
    _retired(rmem, ana, clock)
    before = store_snapshot(rmem)

    def refuse(record):
        raise OSError("the records table is unavailable")

    monkeypatch.setattr(rmem.session.ledger, "record_resolution", refuse)
    with pytest.raises((OSError, InternalError)):  # in process: the failure itself; remotely: 500 INTERNAL
        ana.restore("office")
    assert store_snapshot(rmem) == before and ana.get("office") is None
