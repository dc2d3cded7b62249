"""Fixtures the index tests share."""

from __future__ import annotations

import pytest

from memory_core import Identity, Memory

RUN = Identity(tenant="acme", user="ana", agent="helper")


@pytest.fixture
def seeded(home, clock):
    """A home with three facts of ``RUN``, flushed: the index holds one row per fact."""
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        for key, value in (("city", "lives in Lisbon"), ("pet", "has a cat named Miso"), ("food", "likes ramen")):
            tool.set(key, value)
        memory.flush()
        assert memory.projector.consistency().ok
        assert memory.projector.index.unsettled == (0, 0)
        yield memory, tool
