"""Frames (open, update, close, history, footprint, what was surfaced; a consumer's own) and the
writes made under them: captures through the normal write path, decision traces and outcomes.
Bad input is typed and writes nothing."""

from __future__ import annotations

import pytest

from memory_core import Identity
from memory_core.errors import (
    CapabilityMissing,
    FrameClosed,
    FrameNotFound,
    FrameNotOwned,
    InvalidInput,
    LensNotWorn,
    NotFound,
)
from tests.conftest import store_snapshot
from tests.remember_setup import lensed

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service


def test_a_frame_opens_changes_and_closes_with_its_history(memory):
    _, bob, _ = lensed(memory)
    frame = bob.frame_open("fix", "checkout times out", tags=["Checkout"], next_steps=["find the owner"])
    assert frame.status == "open" and frame.tags == ("checkout",) and frame.next_steps[0].status == "open"
    steps = [{"step": "find the owner", "assignee": "agent:bob", "status": "done"}, "raise the timeout"]
    changed = bob.frame_update(frame.frame_id, next_steps=steps, suppress=["fact:abc"])
    assert changed.version == 2 and changed.suppressed == ("fact:abc",) and changed.next_steps[0].status == "done"
    assert bob.frame_update(frame.frame_id).version == 2  # nothing changed, nothing recorded
    done = bob.frame_close(frame.frame_id, summary="timeout raised")
    assert done.status == "closed" and done.closed_at is not None
    assert [f.version for f in bob.frame_history(frame.frame_id)] == [1, 2, 3]
    assert [f.frame_id for f in bob.frames(status="closed")] == [frame.frame_id]
    with pytest.raises(FrameClosed):
        bob.frame_update(frame.frame_id, tags=["x"])


def test_a_frame_is_its_consumers_alone(memory):
    _, bob, eve = lensed(memory)
    frame = bob.frame_open("plan", "next quarter")
    with pytest.raises(FrameNotOwned):
        eve.frame_get(frame.frame_id)
    with pytest.raises(FrameNotOwned):
        eve.capture("x", "y", lens_id="analyst", frame_id=frame.frame_id)
    stranger = memory.for_run(Identity(tenant="globex", user="zed", agent="z"))
    with pytest.raises(FrameNotFound):  # another tenant's frame is not there at all
        stranger.frame_get(frame.frame_id)
    assert eve.frames() == []


def test_a_capture_is_a_normal_write_with_its_envelope_and_a_receipt(memory):
    _, bob, _ = lensed(memory)
    frame = bob.frame_open("fix", "checkout timeout")
    result = bob.capture(
        "checkout-service",
        "The checkout service is owned by team Atlas",
        lens_id="developer",
        frame_id=frame.frame_id,
        source="incident-42",
        confidence=0.8,
        timestamp="2024-05-01T10:00:00Z",
        author="ops-bot",
        actor_chain=["subsystem:watchdog"],
    )
    row = result.version
    assert result.verdict == "created" and row.subject == "checkout-service" and row.memory_type == "lesson"
    assert row.confidence == 0.8 and row.observed_at.isoformat().startswith("2024-05-01T10:00")
    p = row.provenance
    assert (p.lens_id, p.frame_id, p.author, p.source) == ("developer", frame.frame_id, "ops-bot", "incident-42")
    assert p.actor_chain == ("subsystem:watchdog", "agent:bob")  # the caller is the last, verified link
    assert p.actor == "agent:bob"  # who wrote it is the key's identity, never the envelope's author
    assert [d.content_sha256 for d in result.receipt.disclosed] == [row.content_sha256]
    assert bob.verify_receipt(result.receipt).receipt_id == result.receipt.receipt_id
    again = bob.capture("checkout-service", "The checkout service is owned by team Atlas", lens_id="developer")
    assert again.verdict == "restated"  # the same claim reinforces
    assert bob.frame_get(frame.frame_id).footprint == (f"fact:{row.fact_id}",)


def test_a_capture_with_its_own_key_supersedes_the_earlier_claim(memory):
    _, bob, _ = lensed(memory)
    bob.capture("oncall", "Ana is on call", lens_id="developer", key="oncall:now")
    later = bob.capture("oncall", "Bea is on call", lens_id="developer", key="oncall:now")
    assert later.verdict == "superseded" and bob.get("oncall:now").value == "Bea is on call"


def test_bad_captures_and_decisions_are_refused_and_write_nothing(memory):
    _, bob, eve = lensed(memory)
    frame = bob.frame_open("fix", "x")
    bob.frame_close(frame.frame_id)
    before = store_snapshot(memory)
    with pytest.raises(InvalidInput):
        bob.capture("", "a claim", lens_id="developer")
    with pytest.raises(InvalidInput):
        bob.capture("entity", "   ", lens_id="developer")
    with pytest.raises(LensNotWorn):
        eve.capture("entity", "claim", lens_id="developer")
    with pytest.raises(CapabilityMissing):
        memory.for_run(Identity(tenant="acme", user="root", admin=True)).capture("e", "c", lens_id="auditor")
    with pytest.raises(FrameClosed):
        bob.capture("entity", "claim", lens_id="developer", frame_id=frame.frame_id)
    with pytest.raises(InvalidInput):
        bob.capture("entity", "claim", lens_id="developer", confidence=2)
    with pytest.raises(InvalidInput):
        bob.decide("maybe", "unsure", lens_id="developer")
    with pytest.raises(InvalidInput):
        bob.decide("act", "why", lens_id="developer", inputs=["not a ref"])
    with pytest.raises(InvalidInput):
        bob.frame_open("daydream", "nothing")
    assert store_snapshot(memory) == before


def test_a_decision_trace_and_its_outcome(memory):
    _, bob, _ = lensed(memory)
    frame = bob.frame_open("decide", "which cache", tags=["cache"])
    trace = bob.decide("wait", "benchmarks first", lens_id="developer", frame_id=frame.frame_id, inputs=["fact:f1"])
    assert (trace.intent, trace.tags, trace.inputs, trace.version) == ("decide", ("cache",), ("fact:f1",), 1)
    done = bob.decision_outcome(trace.decision_id, "benchmarks showed redis wins")
    assert done.version == 2 and done.outcome == "benchmarks showed redis wins"
    with pytest.raises(NotFound):
        bob.decision_outcome(trace.decision_id, "x", scope="tenant")  # it lives in bob's user scope
    assert f"decision:{trace.decision_id}" in bob.frame_get(frame.frame_id).footprint


def test_only_the_decisions_maker_adds_its_outcome(memory):
    _, bob, eve = lensed(memory)
    trace = bob.decide("act", "ship it", lens_id="developer", scope="tenant")
    with pytest.raises(NotFound):
        eve.decision_outcome(trace.decision_id, "it broke", scope="tenant")
    assert bob.decision_outcome(trace.decision_id, "it held", scope="tenant").version == 2


def test_a_change_to_a_captured_row_is_shown_only_through_lenses_that_read_its_captures(memory):
    admin, bob, eve = lensed(memory)
    admin.lens_define("metrics-too", entity_types=["metric", "lesson"])
    admin.lens_assign("metrics-too", "agent:eve")
    found = bob.capture("checkout", "p95 is 420 ms", lens_id="analyst", entity_type="metric", key="p95")
    bob.capture("deploys", "Fridays are frozen", lens_id="developer", key="friday")
    bob.lock("friday")
    seen = {e.key for e in eve.events(lenses=["metrics-too"], scopes=["user"]).events}
    assert seen == set()  # a capture is its lens's: neither the capture nor the lock shows through another
    seen = {(e.event_type, e.key) for e in eve.events(lenses=["analyst"], scopes=["user"]).events}
    assert seen == {("fact.created", found.key)}
