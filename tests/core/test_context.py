"""get_context: never past the token budget (a property), every item explained, berrypicking
reaching what a first pass could not, the narrowest scope first, precedent from similar frames,
and retrieval feedback recorded on what was surfaced."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core.errors import InvalidInput, NotFound
from tests.remember_setup import lensed

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service


def test_every_item_says_why_it_ranked_where_it_did(memory, clock):
    _, bob, _ = lensed(memory)
    bob.set("deploy", "Deploys are frozen on Friday", memory_type="lesson")
    clock.advance(timedelta(days=60))
    bob.set("cache", "The checkout cache is Redis", memory_type="lesson")
    bob.set("owner", "The checkout service is owned by team Atlas and has a very long description " * 6)
    frame = bob.frame_open("fix", "checkout errors", tags=["checkout"])
    found = bob.get_context(frame_id=frame.frame_id, token_budget=500)
    assert found.tokens_used <= 500 and found.token_counter
    assert [i.why["rank"] for i in found.lessons] == list(range(1, len(found.lessons) + 1))
    for item in found.lessons:
        why = item.why
        product = why["priority"] * why["recency"] * why["tag_match"] * why["value_per_token"]
        assert why["score"] == pytest.approx(product, rel=1e-6)
        assert item.lenses and why["pass"] >= 1 and item.tokens > 0
    cache = next(i for i in found.lessons if i.key == "cache")
    assert cache.why["priority"] == 2.0 and "checkout" in cache.why["matched"]  # the lens weighs lessons x2
    owner = next(i for i in found.lessons if i.key == "owner")
    assert owner.why["value_per_token"] < 1.0  # a long item is worth less per token
    assert bob.verify_receipt(found.receipt).kind == "context"


def test_a_tight_budget_takes_what_fits_and_indexes_the_rest(memory):
    _, bob, _ = lensed(memory)
    for n in range(6):
        bob.set(f"tip{n}", f"checkout tip number {n}: retry the payment call once", memory_type="lesson")
    found = bob.get_context(query="checkout", token_budget=40, include_index=True)
    assert 0 < len(found.lessons) < 6 and found.tokens_used <= 40
    assert found.left_out_total == 6 - len(found.lessons)
    assert {line.ref for line in found.left_out} <= {f"fact:{bob.get(f'tip{n}').fact_id}" for n in range(6)}


def test_berrypicking_reaches_what_the_first_pass_could_not(memory):
    _, bob, _ = lensed(memory)
    bob.capture("checkout-service", "The checkout service is owned by team Atlas", lens_id="developer")
    bob.capture("team-atlas", "Atlas is paged through rota P7", lens_id="developer")
    bob.capture("payments", "Payments retry twice", lens_id="developer")
    frame = bob.frame_open("fix", "checkout timeouts", tags=["checkout"])
    one = bob.get_context(frame_id=frame.frame_id, passes=1)
    assert [i.value for i in one.lessons] == ["The checkout service is owned by team Atlas"]
    more = bob.get_context(frame_id=frame.frame_id, passes=3)
    found = {i.value: i.why["pass"] for i in more.lessons}
    assert found == {"The checkout service is owned by team Atlas": 1, "Atlas is paged through rota P7": 2}
    assert "atlas" in more.passes[1].terms  # the second pass asked for what the first surfaced


def test_the_narrowest_scope_shadows_a_broader_item_of_the_same_key(memory):
    _, bob, _ = lensed(memory)
    bob.set("deploy_window", "Deploys on Tuesdays", scope="tenant", memory_type="lesson")
    bob.set("deploy_window", "This team deploys on Thursdays", scope="user", memory_type="lesson")
    found = bob.get_context(query="deploys")
    assert [(i.scope, i.value) for i in found.lessons] == [("user", "This team deploys on Thursdays")]
    tenant_ref = f"fact:{bob.get('deploy_window', scope='tenant').fact_id}"
    assert found.shadowed == {tenant_ref: f"fact:{bob.get('deploy_window').fact_id}"}
    assert {i.scope for i in bob.render().items} == {"user", "tenant"}  # a view shows both


def test_precedent_comes_from_similar_frames_not_from_this_one(memory):
    _, bob, _ = lensed(memory)
    first = bob.frame_open("fix", "checkout timeouts", tags=["checkout"])
    bob.decide("act", "raised the checkout timeout to 30s", lens_id="developer", frame_id=first.frame_id)
    bob.frame_close(first.frame_id)
    other = bob.frame_open("plan", "quarterly roadmap")
    bob.decide("wait", "roadmap after the offsite", lens_id="developer", frame_id=other.frame_id)
    second = bob.frame_open("fix", "checkout latency", tags=["checkout"])
    bob.decide("escalate", "paged the checkout owner", lens_id="developer", frame_id=second.frame_id)
    found = bob.get_context(frame_id=second.frame_id)
    assert [p.value["rationale"] for p in found.precedent] == ["raised the checkout timeout to 30s"]
    assert "intent:fix" in found.precedent[0].why["matched"]


def test_feedback_is_recorded_on_what_was_surfaced_only(memory):
    _, bob, eve = lensed(memory)
    bob.set("deploy", "Deploys are frozen on Friday", memory_type="lesson")
    found = bob.get_context(query="deploys")
    ref = found.lessons[0].ref
    assert bob.retrieval_feedback(found.interaction_id, ref, "useful").verdict == "useful"
    with pytest.raises(InvalidInput):
        bob.retrieval_feedback(found.interaction_id, "fact:other", "useful")
    with pytest.raises(NotFound):
        eve.retrieval_feedback(found.interaction_id, ref, "useful")
    with pytest.raises(InvalidInput):
        bob.retrieval_feedback(found.interaction_id, ref, "meh")
    frame = bob.frame_open("learn", "deploys")
    bob.get_context(frame_id=frame.frame_id, query="deploys")
    assert bob.frame_get(frame.frame_id).surfaced == (ref,)


def test_a_context_is_refused_without_a_lens_that_reads(memory):
    admin, bob, _ = lensed(memory)
    admin.lens_define("writer", capabilities=["capture"])
    admin.lens_assign("writer", "agent:bob")
    with pytest.raises(Exception) as refused:
        bob.get_context(lenses=["writer"])
    assert refused.value.code == "CAPABILITY_MISSING"
    with pytest.raises(InvalidInput):
        bob.get_context(token_budget=0)


def test_lessons_of_a_similar_frame_and_what_its_decisions_rest_on_are_reached(memory):
    _, bob, _ = lensed(memory)
    first = bob.frame_open("fix", "checkout timeouts", tags=["checkout"])
    lesson = bob.capture(
        "payment-client", "Retrying the payment call once helps", lens_id="developer", frame_id=first.frame_id
    )
    unrelated = bob.set("gateway", "the gateway keeps connections for 90 s", memory_type="lesson")
    bob.decide(
        "act",
        "kept the pool as it is",
        lens_id="developer",
        frame_id=first.frame_id,
        inputs=[f"fact:{unrelated.version.fact_id}"],
    )
    bob.frame_close(first.frame_id)
    later = bob.frame_open("fix", "checkout latency", tags=["checkout"])
    found = bob.get_context(frame_id=later.frame_id)
    passes = {i.value: i.why["pass"] for i in found.lessons}
    # The lesson was captured under a checkout frame: it holds that frame's tags and intent.
    assert passes[lesson.version.value] == 1
    # The gateway fact shares no word with the frame: the precedent's inputs lead to it.
    assert passes["the gateway keeps connections for 90 s"] == 2
