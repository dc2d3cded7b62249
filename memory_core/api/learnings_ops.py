"""Learnings on the Memory tool (``MemoryTool`` lists each op in its class body): the queue of
rules users stated about the agent, and a reviewer's decision on each (``docs/extraction.md``)."""

from __future__ import annotations

from ..extraction.learnings import Learning
from ..services.learnings import LearningsService


def learnings(self, *, status: str = "pending") -> list[Learning]:
    """The learnings queue: rules users stated about an agent ("always answer in French"), which
    extraction files here instead of writing them as memories, each with its supporters (who said
    it, in which words). ``status``: pending (default), accepted, rejected or all. An admin of the
    tenant sees every candidate; anyone else the candidates they support, with only their own
    supporter rows."""
    return self._bound(LearningsService).learnings(status)


def learning_decide(self, learning_id: str, *, accept: bool) -> Learning:
    """Accept or reject a learning (an admin of the tenant): a new version with the decision, who
    and when. The same decision again writes nothing; a reviewer may change it. Another tenant's
    id answers as missing."""
    return self._bound(LearningsService).decide(learning_id, accept)
