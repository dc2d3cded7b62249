"""Dreams: a pass over a namespace queues proposals (merge, retire, age out, procedure) and
changes no memory; approval applies a proposal as normal writes that name it, rejection records
who and why, a changed target makes a proposal stale, and no pass reads its own output."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core import FixedClock, Identity, Memory, MemoryTool
from memory_core.dreams import ACTOR, ORIGIN
from memory_core.errors import InvalidInput, NotFound, PreconditionFailed, WrongState
from tests.dreams_home import ANA, HIKES, LOOSE, fill_dreams_home

KINDS = {"merge", "retire", "age_out", "procedure"}


@pytest.fixture
def ana(indexed_memory: Memory, clock: FixedClock) -> MemoryTool:
    return fill_dreams_home(indexed_memory, clock)


def live(tool: MemoryTool) -> dict[str, str]:
    return {f.key: f.value for f in tool.list()}


def log(memory: Memory) -> list[tuple]:
    """The version log, every row: equal answers mean no memory was written."""
    return memory.store.inspection.tables()["memory_versions"]


def by_kind(proposals) -> dict:
    return {p.kind: p for p in proposals}


def trace(memory: Memory, decision_id: str):
    return memory.store.substrate.decision("acme", decision_id)


def test_a_pass_queues_one_proposal_of_each_kind_and_writes_no_memory(ana, indexed_memory):
    before, facts = log(indexed_memory), live(ana)
    run = ana.dream(min_cosine=LOOSE)
    assert {p.kind for p in run.proposals} == KINDS and run.no_op_decision is None
    assert log(indexed_memory) == before and live(ana) == facts  # proposals only
    queued = by_kind(ana.dream_proposals())
    assert set(queued) == KINDS and {p.status for p in queued.values()} == {"pending"}
    assert {t.key for t in queued["merge"].targets} == {k for k, _ in HIKES}
    assert queued["merge"].change["text"] == f"{HIKES[0][1]}. {HIKES[1][1]}."
    assert [t.key for t in queued["retire"].targets] == ["office", "office-now"]  # the older one goes
    assert queued["retire"].change["keep"] == queued["retire"].targets[1].ident
    assert [t.key for t in queued["age_out"].targets] == ["gym"] and "121 days ago" in queued["age_out"].rationale
    note = queued["procedure"].change
    assert note["key"] == "procedure:build" and "failed 3 of 3 times" in note["text"]
    for p in queued.values():
        assert p.rationale and 0 < p.confidence <= 1 and all(t.version for t in p.targets if t.kind != "key")
        written = trace(indexed_memory, p.decision_id)  # each proposal is an escalate decision
        assert (written.decision, written.actor) == ("escalate", ACTOR) and p.proposal_id in written.rationale
        assert set(written.inputs) == {t.ref for t in p.targets if t.kind != "key"}


def test_approval_applies_each_kind_as_writes_that_name_the_proposal(ana, indexed_memory):
    queued = by_kind(ana.dream(min_cosine=LOOSE).proposals)
    for p in queued.values():
        done = ana.dream_approve(p.proposal_id)
        assert (done.status, done.actor, done.version) == ("applied", "agent:helper", 2) and done.applied
        applied = indexed_memory.store.versions.version_rows(list(done.applied))
        assert len(applied) == len(done.applied) and all(
            (r.provenance.origin, r.provenance.source) == (ORIGIN, f"dreams:{p.proposal_id}") for r in applied
        )
        assert trace(indexed_memory, p.decision_id).outcome == "applied by agent:helper"
    now = live(ana)
    summary = queued["merge"].change["key"]
    assert set(now) == {summary, "office-now", "procedure:build"}
    assert now[summary] == queued["merge"].change["text"]
    assert {r["source_key"] for r in ana.lineage(summary)} == {k for k, _ in HIKES}
    assert ana.history("office")[-1].status.value == "superseded"
    assert ana.get("procedure:build").kind.value == "note"
    assert ana.history("gym")[-1].status.value == "tombstoned"
    ana.restore("gym")  # aging out is a tombstone: restore brings the row back as it was
    assert ana.get("gym").provenance.origin == "memory.api"
    ana.restore("office")  # and a retirement, as a reviewer's is
    assert live(ana)["office"].startswith("Ana's office is on the third floor")
    assert {p.status for p in ana.dream_proposals(status="all")} == {"applied"}
    assert indexed_memory.verify_audit().ok


def test_rejection_records_who_and_why_and_changes_no_memory(ana, indexed_memory):
    p = by_kind(ana.dream(min_cosine=LOOSE).proposals)["age_out"]
    before = log(indexed_memory)
    done = ana.dream_reject(p.proposal_id, note="Ana still goes there on Fridays")
    assert (done.status, done.actor, done.note) == ("rejected", "agent:helper", "Ana still goes there on Fridays")
    assert log(indexed_memory) == before and "gym" in live(ana)
    assert ana.dream_proposals(status="rejected") == [done]
    assert trace(indexed_memory, p.decision_id).outcome == "rejected by agent:helper: Ana still goes there on Fridays"
    with pytest.raises(WrongState):
        ana.dream_approve(p.proposal_id)  # decided once
    again = ana.dream(min_cosine=LOOSE)
    assert again.proposals == () and again.already_queued == 4  # not proposed again while gym is as read


@pytest.mark.faces  # the same through the memory service
def test_a_target_changed_since_the_pass_makes_approval_refuse_and_the_proposal_stale(ana, indexed_memory):
    p = by_kind(ana.dream(min_cosine=LOOSE).proposals)["merge"]
    ana.set("hike_maya", "Ana went hiking in the Dolomites with Maya")  # the owner changed a target
    before, facts = log(indexed_memory), live(ana)
    with pytest.raises(PreconditionFailed) as refused:
        ana.dream_approve(p.proposal_id)
    assert refused.value.code == "PRECONDITION_FAILED" and "hike_maya" in refused.value.message
    assert log(indexed_memory) == before and live(ana) == facts
    [stale] = ana.dream_proposals(status="stale")
    assert stale.proposal_id == p.proposal_id and "hike_maya" in stale.note
    assert trace(indexed_memory, p.decision_id).outcome.startswith("stale by agent:helper")


def test_a_second_pass_neither_duplicates_pending_proposals_nor_reads_its_own_output(ana, indexed_memory, clock):
    first = ana.dream(min_cosine=LOOSE)
    second = ana.dream(min_cosine=LOOSE)
    assert second.proposals == () and second.already_queued == 4 and len(ana.dream_proposals()) == 4
    assert trace(indexed_memory, second.no_op_decision).decision == "no_op"
    for p in first.proposals:
        ana.dream_approve(p.proposal_id)
    third = ana.dream(min_cosine=LOOSE)  # the summary, the kept row and the note are Dreams' own
    assert third.proposals == () and third.read["own_rows_skipped"] == 3 and third.no_op_decision
    ana.set("tea", "Ana drinks green tea every morning")
    clock.advance(timedelta(days=100))  # everything is stale now, Dreams' rows too
    later = ana.dream(min_cosine=LOOSE)
    assert [(p.kind, [t.key for t in p.targets]) for p in later.proposals] == [("age_out", ["tea"])]


@pytest.mark.faces  # the same through the memory service
def test_a_pass_with_nothing_to_propose_writes_a_no_op_decision(indexed_memory):
    tool = indexed_memory.for_run(ANA)
    tool.set("city", "Ana lives in Lisbon")
    before = log(indexed_memory)
    run = tool.dream()
    assert run.proposals == () and tool.dream_proposals(status="all") == []
    written = trace(indexed_memory, run.no_op_decision)
    assert (written.decision, written.actor) == ("no_op", ACTOR) and run.pass_id in written.rationale
    assert log(indexed_memory) == before


def test_a_fact_recalled_in_the_window_does_not_age_out(ana):
    ana.render(lenses=["dev"])  # the view discloses the gym fact: it was read this week
    assert "age_out" not in {p.kind for p in ana.dream(min_cosine=LOOSE).proposals}


def test_another_owner_can_neither_see_nor_decide_a_proposal(ana, indexed_memory):
    p = ana.dream(min_cosine=LOOSE).proposals[0]
    bob = indexed_memory.for_run(Identity(tenant="acme", user="bob", agent="helper"))
    assert bob.dream_proposals(status="all") == []
    with pytest.raises(NotFound):
        bob.dream_approve(p.proposal_id)
    with pytest.raises(NotFound):
        bob.dream_reject(p.proposal_id)
    assert ana.dream_proposals()[0].status == "pending"


def test_dream_all_passes_over_every_user_and_agent_namespace(ana, indexed_memory):
    indexed_memory.for_run(Identity(tenant="acme", user="bob", agent="helper")).set("pet", "Bob has a cat")
    passes = indexed_memory.dream_all(tenant="acme", min_cosine=LOOSE)
    found = {(p.scope, p.owner_id): len(p.proposals) for p in passes}
    assert found[("user", "ana")] == 4 and found[("user", "bob")] == 0


@pytest.mark.parametrize(
    "op, kwargs",
    [
        ("dream", {"window_days": 0}),
        ("dream", {"stale_days": 0}),
        ("dream", {"min_cosine": 0.0}),
        ("dream_proposals", {"status": "maybe"}),
        ("dream_reject", {"proposal_id": "dr-x", "note": "n" * 2001}),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(ana, indexed_memory, op, kwargs):
    before = indexed_memory.store.inspection.tables()
    with pytest.raises(InvalidInput):
        getattr(ana, op)(**kwargs)
    assert indexed_memory.store.inspection.tables() == before


def test_erasing_the_owner_leaves_none_of_her_proposals(ana, indexed_memory):
    ana.dream(min_cosine=LOOSE)
    request = indexed_memory.erase("acme", user="ana")
    assert request.status.value == "verified" and request.residue_count == 0
    assert request.residue["rows:dream_proposals"] == 0 and request.residue["text:dream_proposals"] == 0
    assert indexed_memory.store.inspection.tables()["dream_proposals"] == []


def test_the_queue_keeps_no_fact_words_so_a_redaction_reaches_what_a_reviewer_sees(ana, indexed_memory):
    p = by_kind(ana.dream(min_cosine=LOOSE).proposals)["age_out"]
    kept = repr(indexed_memory.store.inspection.tables()["dream_proposals"])
    assert "FitCo" not in kept and "Alps" not in kept  # the words are the log's, shown from it
    [shown] = [q for q in ana.dream_proposals() if q.proposal_id == p.proposal_id]
    assert "FitCo" in shown.targets[0].text
    ana.set("gym", "Ana cancelled her gym membership")  # the row read is history now: redactable
    ana.redact("gym", p.targets[0].version)
    [shown] = [q for q in ana.dream_proposals() if q.proposal_id == p.proposal_id]
    assert "FitCo" not in shown.targets[0].text
    assert "FitCo" not in repr(indexed_memory.store.inspection.tables())
