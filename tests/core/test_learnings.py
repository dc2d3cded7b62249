"""Learnings: a rule a user states about the agent ("always answer in French") is filed to the
learnings queue as a candidate with its supporters, never written as a memory; the same rule said
again adds a supporter; an admin accepts or rejects it; a user's erasure takes their supporter
rows, deletes a pending candidate left unsupported and blanks a decided one's rule, keeping its
decision (docs/extraction.md, "Learnings")."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core import Identity
from memory_core.errors import AdminRequired, InvalidInput, NotFound, WrongState
from memory_core.extraction.learnings import agent_rule, normalize
from tests.conftest import store_snapshot

pytestmark = pytest.mark.faces

ADMIN = Identity(tenant="acme", user="root", agent="ops", admin=True)
FRENCH = "agent:rule:always-answer-in-french"


def run(memory, user: str, session: str = "s1", tenant: str = "acme", agent: str = "helper"):
    return memory.for_run(Identity(tenant=tenant, user=user, agent=agent, session=session, run="r1"))


def say(tool, *texts: str, **options):
    return tool.set_from_messages([{"role": "user", "content": t} for t in texts], **options)


def by_rule(learnings, words: str):
    [found] = [x for x in learnings if normalize(x.rule) == normalize(words)]
    return found


@pytest.mark.parametrize(
    "sentence",
    [
        "Always answer in French.",
        "never use emojis",
        "Don't use bullet points in your replies.",
        "From now on, reply in Spanish.",
        "You should always cite your sources.",
        "Please stop using jargon.",
        "Make sure to keep answers under 100 words.",
    ],
)
def test_a_standing_instruction_to_the_agent_is_a_rule(sentence):
    assert agent_rule(sentence) == sentence.strip()


@pytest.mark.parametrize(
    "sentence",
    [
        "Call me Ana.",  # how the user wants to be named: about the user
        "Always call me Ana.",
        "Never eat pork.",  # not something the agent does when it answers
        "Can you always answer in French?",  # a question states nothing
        "Please answer in French.",  # a one-off request: no marker that it lasts
        "I always answer emails in the morning.",  # about the user's own habits
        "I live in Oslo.",
    ],
)
def test_everything_else_is_not_a_rule(sentence):
    assert agent_rule(sentence) is None


def test_a_stated_agent_rule_is_queued_and_never_remembered(memory):
    ana = run(memory, "ana")
    result = say(ana, "I live in Oslo. Always answer in French. Call me Ana.", "Never eat pork.")
    assert result.learnings == (FRENCH,)
    assert "user:lives_in" in result.written and not any("rule" in k for k in result.written)
    assert not [f.key for f in ana.list() if "rule" in f.key]
    assert not [f for f in ana.list() if f.key.startswith("user:") and "French" in str(f.value)]
    [candidate] = memory.for_run(ADMIN).learnings()
    assert (candidate.rule, candidate.status, candidate.scope, candidate.owner_id) == (
        "Always answer in French.",
        "pending",
        "agent",
        "helper",
    )
    [who] = candidate.supporters
    assert (who.user, who.agent, who.session, who.run, who.quote) == ("ana", "helper", "s1", "r1", candidate.rule)


def test_a_dry_run_reports_the_rule_and_files_nothing(memory):
    ana = run(memory, "ana")
    before = store_snapshot(memory)
    result = say(ana, "Never use emojis.", dry_run=True)
    assert result.learnings == ("agent:rule:never-use-emojis",) and result.dry_run
    assert store_snapshot(memory) == before


def test_the_same_rule_again_adds_a_supporter_to_the_same_candidate(memory):
    ana, bo = run(memory, "ana"), run(memory, "bo", session="s2")
    say(ana, "Always answer in French.")
    say(ana, "Always answer in French.")  # the same turn extracted again: no second supporter
    say(bo, "From now on, always answer in French!")
    [candidate] = memory.for_run(ADMIN).learnings()
    assert [(s.user, s.quote) for s in candidate.supporters] == [
        ("ana", "Always answer in French."),
        ("bo", "From now on, always answer in French!"),
    ]
    # A user sees the candidates they support, with their own words only.
    [mine] = bo.learnings()
    assert mine.learning_id == candidate.learning_id and [s.user for s in mine.supporters] == ["bo"]
    assert run(memory, "cy").learnings(status="all") == []
    # Said to another agent, it is that agent's candidate.
    say(run(memory, "ana", agent="writer"), "Always answer in French.")
    assert sorted(x.owner_id for x in memory.for_run(ADMIN).learnings()) == ["helper", "writer"]


def test_a_reviewer_accepts_or_rejects_and_a_rejected_rule_never_comes_back_pending(memory, clock):
    ana, admin = run(memory, "ana"), memory.for_run(ADMIN)
    say(ana, "Always answer in French.", "Never use emojis.")
    french = by_rule(admin.learnings(), "always answer in french")
    emojis = by_rule(admin.learnings(), "never use emojis")
    clock.advance(timedelta(minutes=5))
    accepted = admin.learning_decide(french.learning_id, accept=True)
    assert (accepted.status, accepted.version, accepted.decided_by) == ("accepted", 2, ADMIN.actor)
    assert accepted.decided_at == clock.now() and accepted.rule == french.rule
    assert admin.learning_decide(french.learning_id, accept=True).version == 2  # the same decision: nothing new
    rejected = admin.learning_decide(emojis.learning_id, accept=False)
    assert rejected.status == "rejected"
    assert [x.learning_id for x in admin.learnings()] == []
    assert [x.learning_id for x in admin.learnings(status="accepted")] == [french.learning_id]
    assert [x.learning_id for x in admin.learnings(status="rejected")] == [emojis.learning_id]
    assert {x.learning_id for x in admin.learnings(status="all")} == {french.learning_id, emojis.learning_id}
    say(run(memory, "bo", session="s2"), "Never use emojis!")
    again = by_rule(admin.learnings(status="all"), "never use emojis")
    assert again.status == "rejected" and len(again.supporters) == 2 and admin.learnings() == []


def test_refusals_are_typed_and_leave_the_store_as_it_was(memory):
    ana, admin = run(memory, "ana"), memory.for_run(ADMIN)
    say(ana, "Always answer in French.")
    [candidate] = admin.learnings()
    before = store_snapshot(memory)
    with pytest.raises(AdminRequired):
        ana.learning_decide(candidate.learning_id, accept=True)
    with pytest.raises(NotFound):
        admin.learning_decide("lrn-0000000000000000", accept=True)
    with pytest.raises(InvalidInput):
        admin.learning_decide(candidate.learning_id, accept="yes")
    with pytest.raises(InvalidInput):
        admin.learning_decide("", accept=True)
    with pytest.raises(InvalidInput):
        admin.learnings(status="decided")
    assert store_snapshot(memory) == before


def test_another_tenant_never_sees_or_decides_a_candidate(memory):
    say(run(memory, "ana"), "Always answer in French.")
    [candidate] = memory.for_run(ADMIN).learnings()
    other = memory.for_run(Identity(tenant="globex", user="root", agent="ops", admin=True))
    before = store_snapshot(memory)
    assert other.learnings(status="all") == []
    with pytest.raises(NotFound):  # missing, never forbidden
        other.learning_decide(candidate.learning_id, accept=False)
    assert store_snapshot(memory) == before
    assert memory.for_run(ADMIN).learnings()[0].status == "pending"


def test_a_users_erasure_takes_their_supporters_and_settles_the_candidates(memory):
    ana, bo, admin = run(memory, "ana"), run(memory, "bo", session="s2"), memory.for_run(ADMIN)
    say(ana, "Always answer in French.", "Never use emojis.", "Always cite your sources.")
    say(bo, "Always answer in french!")
    shared = by_rule(admin.learnings(), "always answer in french")
    pending = by_rule(admin.learnings(), "never use emojis")
    decided = by_rule(admin.learnings(), "always cite your sources")
    admin.learning_decide(shared.learning_id, accept=False)
    admin.learning_decide(decided.learning_id, accept=True)

    request = memory.erase("acme", user="ana")
    assert request.status.value == "verified" and request.residue_count == 0, request.error
    assert request.residue["rows:learnings_supporters"] == request.residue["rows:learnings_unsupported"] == 0

    left = {x.learning_id: x for x in admin.learnings(status="all")}
    assert pending.learning_id not in left  # pending and unsupported: deleted
    kept = left[decided.learning_id]  # decided: its decision stays, its words go
    assert (kept.status, kept.rule, kept.supporters, kept.version) == ("accepted", "", (), 3)
    still = left[shared.learning_id]  # bo still supports it: in bo's words now, still rejected
    assert (still.status, still.rule, [s.user for s in still.supporters]) == (
        "rejected",
        "Always answer in french!",
        ["bo"],
    )
    rows = memory.store.unchecked_sql(
        "SELECT count(*) AS n FROM learnings_queue WHERE rule IN ('Always answer in French.', 'Never use emojis.', "
        "'Always cite your sources.')"
    )
    assert rows == [{"n": 0}]  # no version keeps her words
    assert memory.store.unchecked_sql("SELECT count(*) AS n FROM learnings_supporters WHERE user_id = 'ana'") == [
        {"n": 0}
    ]
    # The rule said again finds its decision: it never comes back as pending.
    say(run(memory, "cy", session="s3"), "Always cite your sources.")
    back = admin.learnings(status="all")
    assert admin.learnings() == [] and by_rule(back, "always cite your sources").status == "accepted"
    assert by_rule(back, "always cite your sources").rule == "Always cite your sources."  # its words are back
    assert memory.erase("acme", user="cy").status.value == "verified"
    assert admin.learning_decide(decided.learning_id, accept=False).status == "rejected"
    with pytest.raises(WrongState):  # a blanked rule can be rejected, never accepted
        admin.learning_decide(decided.learning_id, accept=True)


def test_an_agents_erasure_takes_its_candidates_and_their_supporters(memory):
    say(run(memory, "ana"), "Always answer in French.")
    say(run(memory, "ana", agent="writer"), "Never use emojis.")
    request = memory.erase("acme", agent="helper")
    assert request.status.value == "verified" and request.residue_count == 0, request.error
    [left] = memory.for_run(ADMIN).learnings()
    assert (left.owner_id, [s.agent for s in left.supporters]) == ("writer", ["writer"])
    assert memory.store.unchecked_sql("SELECT count(*) AS n FROM learnings_supporters WHERE agent = 'helper'") == [
        {"n": 0}
    ]
