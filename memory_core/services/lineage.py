"""Lineage and session summaries: a fact's belief sources (``belief_sources``: the links
extraction records through ``session.lineage``, consolidation's and reflect's), and the worker
that keeps one digest per conversation session (``session_summaries``), rebuilt only when the
session's kept turns change. A summary is a row of its own table, never a memory.
"""

from __future__ import annotations

from typing import Any

from ..errors import NotFound
from ..extraction.summaries import EVIDENCE_TYPE, RuleSummarizer, SessionTurn, Summarizer, plan_summary
from ..identity import Namespace, Scope
from ..inputs import text
from ..llm import LLMMalformed, LLMRefused, LLMUnavailable
from ..model import VISIBLE_STATUSES, FactVersion
from ..session import RunService, Session
from ..session.lineage import DERIVED_TYPES


class LineageService(RunService):
    def belief_sources(self, key: str, *, scope: str | Scope) -> list[dict[str, Any]]:
        """The evidence links of every fact of ``key``: what supports it, with the support type,
        and of a source row of the namespace its turn, session and status."""
        ns = self.identity.namespace(scope)
        facts = dict.fromkeys(r.fact_id for r in self.session.versions.history(ns, key))
        if not facts:
            raise NotFound(f"no key {key!r} in scope {ns.scope.value}", key=key)
        links = self.session.store.lineage.sources(ns, list(facts))
        rows = {
            r.fact_id: r
            for r in self.session.versions.latest_states(sorted({link.source_fact for link in links}))
            if (r.tenant, r.scope, r.owner_id) == (ns.tenant, ns.scope, ns.owner_id)
        }
        out = []
        for link in links:
            source = rows.get(link.source_fact)
            out.append(
                {
                    **link.to_dict(),
                    "source_turn": source.provenance.source_turn if source else None,
                    "source_session": source.provenance.session if source else None,
                    "source_status": source.status.value if source else None,
                }
            )
        return out

    def session_summaries(self, *, scope: str | Scope, session_id: str | None) -> list[dict[str, Any]]:
        """The scope's session summaries (of one session), by session."""
        ns = self.identity.namespace(scope)
        session = None if session_id is None else text(session_id, "session_id", max_chars=256)
        return [s.to_dict() for s in self.session.store.lineage.summaries(ns, session)]


class SessionSummaries:
    """The summarizing worker: every namespace's sessions, each summarized when its kept turns
    changed since its summary (or it has none); a current summary is left as it is."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def run(self, summarizer: Summarizer, *, apply: bool = True, examples: int = 20) -> dict[str, Any]:
        session = self.session
        if not apply:  # counted, not built: no model is asked
            summarizer = RuleSummarizer()
        groups: dict[tuple[Namespace, str], list[FactVersion]] = {}
        facts: dict[tuple[Namespace, str], list[str]] = {}
        for row in session.versions.latest_states():
            if row.status.value not in VISIBLE_STATUSES or row.provenance.session is None:
                continue
            at = (Namespace(row.tenant, row.scope, row.owner_id), row.provenance.session)
            if row.memory_type == EVIDENCE_TYPE:
                groups.setdefault(at, []).append(row)
            elif row.memory_type not in DERIVED_TYPES:
                facts.setdefault(at, []).append(row.fact_id)
        counts = {"sessions": 0, "current": 0, "built": 0, "failed": 0, "dropped": 0}
        behind: list[str] = []
        for (ns, name), rows in sorted(groups.items(), key=lambda g: (g[0][0].tenant, g[0][0].owner_id, g[0][1])):
            counts["sessions"] += 1
            turns = [
                SessionTurn(r.key, r.fact_id, r.subject or "", str(r.value), r.content_sha256, r.observed_at)
                for r in rows
            ]
            stored = next(iter(session.store.lineage.summaries(ns, name)), None)
            try:
                planned = plan_summary(
                    ns.tenant, ns.scope.value, ns.owner_id, name, turns, sorted(facts.get((ns, name), ())),
                    stored, summarizer, session.clock.now(),
                )  # fmt: skip
            except (LLMUnavailable, LLMRefused, LLMMalformed):
                counts["failed"] += 1  # the stored summary stands; the next run tries again
                continue
            if planned is None:
                counts["current"] += 1
                continue
            behind.append(f"{ns.tenant}/{ns.scope.value}/{ns.owner_id}/{name}")
            if apply:
                session.refuse_read_only("session summaries are kept in the home")
                session.store.lineage.put_summary(planned)
                counts["built"] += 1
        for ns, name in session.store.lineage.summarized():
            if (ns, name) in groups:
                continue
            # Every turn it was built from is gone (forgotten, deleted): the digest that quotes
            # them goes too.
            behind.append(f"{ns.tenant}/{ns.scope.value}/{ns.owner_id}/{name}")
            if apply:
                session.refuse_read_only("session summaries are kept in the home")
                session.store.lineage.drop_summary(ns, name)
                counts["dropped"] += 1
        return {**counts, "behind": behind[:examples]}
