"""What lineage and session summaries keep beside the version log: each fact's evidence links
(``belief_sources``, the table consolidation's ``derived_from`` rows share) and one digest per
conversation session (``session_summaries``)."""

from __future__ import annotations

from typing import Protocol, Sequence

from ..extraction.lineage import BeliefSource
from ..extraction.summaries import SessionSummary
from ..identity import Namespace


class LineageStore(Protocol):
    def record_sources(self, links: Sequence[BeliefSource]) -> None:
        """Keep evidence links; a link already kept (same run, fact, source and support) is not
        kept twice."""
        ...

    def sources(self, namespace: Namespace, fact_ids: Sequence[str]) -> list[BeliefSource]:
        """The links from these facts of the namespace to what supports them, oldest first."""
        ...

    def summaries(self, namespace: Namespace, session: str | None = None) -> list[SessionSummary]:
        """The namespace's session summaries (of one session), by session."""
        ...

    def put_summary(self, summary: SessionSummary) -> None:
        """Keep a session's summary in place of the one it had."""
        ...

    def summarized(self) -> list[tuple[Namespace, str]]:
        """Every (namespace, session) that has a summary."""
        ...

    def drop_summary(self, namespace: Namespace, session: str) -> None:
        """Forget a session's summary (its turns are gone)."""
        ...
