"""What the learnings queue keeps beside memory: candidates (rules said about an agent, one row
per version) and their supporters (who stated each, in which words)."""

from __future__ import annotations

from typing import Protocol, Sequence

from ..extraction.learnings import Learning, Supporter


class LearningsStore(Protocol):
    def find(self, tenant: str, scope: str, owner_id: str, rule_sha256: str) -> Learning | None:
        """The newest version of the namespace's candidate with that digest, whatever its status."""
        ...

    def learning(self, tenant: str, learning_id: str) -> Learning | None:
        """The newest version of one candidate of the tenant, with all its supporters."""
        ...

    def record(self, learning: Learning) -> None:
        """Keep a new version of a candidate (a new candidate is its version 1). A version another
        writer appended meanwhile refuses it (``WrongState``)."""
        ...

    def add_supporter(self, supporter: Supporter) -> bool:
        """Add a supporter unless the same turn of the same run's session already supports the
        candidate (a transcript extracted again); True when added."""
        ...

    def learnings(self, tenant: str, status: str | None, supporter: tuple[str, str] | None = None) -> list[Learning]:
        """The newest version of each candidate of the tenant (of that status), oldest first, with
        its supporters; with ``supporter`` (scope, owner), only the candidates it supports, and
        only its own supporter rows."""
        ...

    def unsupported(self, tenant: str) -> list[Learning]:
        """The newest version of each candidate of the tenant no supporter holds up any more,
        whose rule is still there (what an erasure has to settle)."""
        ...

    def settle(self, tenant: str, deleted: Sequence[Learning], rewritten: Sequence[Learning]) -> int:
        """In one transaction: delete each of ``deleted`` (every version) if it is still the
        version read and still unsupported; append each of ``rewritten`` (a candidate's next
        version with other words: blank, or a remaining supporter's) if its previous version is
        still the newest, its earlier versions' rule rewritten in place the same; and delete
        supporter rows whose candidate is gone (an agent's erasure took it). Answers how many
        candidates changed."""
        ...
