"""A small home with a key's history and a flagged pair for the review queue: what the notebook
tests, the URL-mode notebook tests and the admin read routes' tests all look at."""

from __future__ import annotations

from datetime import timedelta

from memory_core import FixedClock, Identity, Memory, MemoryTool


def fill_review_home(memory: Memory, clock: FixedClock) -> MemoryTool:
    """ana's city (Berlin, then Paris), two close statements about her office, one resolver pass
    (manual review: the pair is flagged). Answers ana's tool."""
    memory.for_run(Identity(tenant="acme", user="ops", admin=True)).configure(
        policy="manual_review", conflict_threshold=0.99
    )
    tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session="s1"))
    tool.set("city", "Berlin", valid_at="2021-01-01T00:00:00Z")
    clock.advance(timedelta(days=2))
    tool.set("city", "Paris", valid_at="2023-03-01T00:00:00Z")
    tool.set("office", "Ana's office is on the third floor of the Lisbon building")
    clock.advance(timedelta(days=1))
    tool.set("office-now", "Ana's office is on the fourth floor of the Lisbon building")
    clock.advance(timedelta(seconds=1))
    memory.resolve()
    return tool
