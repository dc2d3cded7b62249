"""A home built to need every kind of Dreams proposal, in ana's user namespace of tenant acme:
a fact untouched for 120 days, two near-duplicate hiking facts, a pair the resolver flagged
(manual review), and three decisions under one intent whose outcomes say they failed. What the
Dreams tests, the asset test and the notebook test all look at."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from memory_core import FixedClock, Identity, Memory, MemoryTool

ANA = Identity(tenant="acme", user="ana", agent="helper", session="s1")
ADMIN = Identity(tenant="acme", user="ops", admin=True)
LOOSE = 0.45  # the hashing embedder's cosines run low: the hiking pair sits near 0.5
HIKES = (
    ("hike_often", "In the Alps Ana goes hiking each summer"),
    ("hike_maya", "Ana went hiking in the Alps with Maya last summer"),
)
OUTCOMES = (
    "failed: the release build broke on CI",
    "failed again: the integration tests timed out",
    "reverted after errors in production",
)


def fill_dreams_home(memory: Memory, clock: FixedClock, tenant: str = "acme") -> MemoryTool:
    """Answers ana's tool (wearing the ``dev`` lens, which may decide)."""
    admin = memory.for_run(dataclasses.replace(ADMIN, tenant=tenant))
    admin.configure(policy="manual_review", conflict_threshold=0.99)
    admin.lens_define("dev", capabilities=["read", "capture", "decide"])
    admin.lens_assign("dev", "agent:helper")
    ana = memory.for_run(dataclasses.replace(ANA, tenant=tenant))
    ana.set("gym", "Ana has a membership at the FitCo gym downtown")
    clock.advance(timedelta(days=120))  # the gym fact is now stale; the rest is recent
    for key, value in HIKES:
        clock.advance(timedelta(minutes=1))
        ana.set(key, value)
    ana.set("office", "Ana's office is on the third floor of the Lisbon building")
    clock.advance(timedelta(days=1))
    ana.set("office-now", "Ana's office is on the fourth floor of the Lisbon building")
    clock.advance(timedelta(seconds=1))
    memory.resolve()  # manual review: the office pair is flagged, not retired
    frame = ana.frame_open("build", "ship the spring release")
    for outcome in OUTCOMES:
        clock.advance(timedelta(hours=1))
        decision = ana.decide("act", "ship the release now", lens_id="dev", frame_id=frame.frame_id)
        ana.decision_outcome(decision.decision_id, outcome)
    clock.advance(timedelta(hours=1))
    return ana
