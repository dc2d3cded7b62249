"""Index upkeep on a thread of its own: the index's queue written, settled and folded between
requests (``Memory.tend_index``), so that a search seldom has any of that to do before it can
read. ``memcore serve`` runs one; so may any process that shares one ``Memory`` among threads
(docs/retrieval.md, "Index upkeep"). A failed round is logged and counted: searches still write
the queue themselves, so nothing waits on this thread to be served."""

from __future__ import annotations

from .memory import Memory
from .periodic import Periodic


class IndexUpkeep(Periodic):
    """Tends ``memory``'s index every ``interval_s`` seconds from ``start`` until ``stop`` (the
    home's close writes what is still queued)."""

    name = "memcore-index-upkeep"

    def __init__(self, memory: Memory, interval_s: float) -> None:
        super().__init__(interval_s)
        self.memory = memory
        self.tended = 0  # rounds that found work

    def round(self) -> None:
        if self.memory.tend_index():
            self.tended += 1
