"""Lineage and session summaries on the Memory tool (``MemoryTool`` lists each op in its class
body) and the worker that writes the summaries (``Memory.summarize_sessions``): docs/retrieval.md,
"Belief sources" and "Session summaries"."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..adapters.llm.summarizer import LLMSummarizer
from ..extraction.summaries import RuleSummarizer, Summarizer
from ..identity import Scope
from ..ports import LLM
from ..services.lineage import LineageService, SessionSummaries

if TYPE_CHECKING:
    from .memory import Memory


def belief_sources(self, key: str, *, scope: str | Scope = Scope.USER) -> list[dict[str, Any]]:
    """The evidence links of the facts of ``key``: each row that supports one, with its support
    type (``extracted_from``: the turn it was read from; ``quoted_in``: the verbatim window
    holding that turn; ``derived_from``: a row a consolidation summary merged; ``reflected_from``;
    ``promoted_from``), and of a source row of the scope its turn, session and status."""
    return self._bound(LineageService).belief_sources(key, scope=scope)


def session_summaries(self, *, scope: str | Scope = Scope.USER, session_id: str | None = None) -> list[dict[str, Any]]:
    """The scope's session summaries (one digest per conversation session, written by
    ``Memory.summarize_sessions``), by session; ``session_id``: that session's alone."""
    return self._bound(LineageService).session_summaries(scope=scope, session_id=session_id)


def summarize_sessions(
    self: Memory, *, apply: bool = True, llm: LLM | None = None, summarizer: Summarizer | None = None
) -> dict[str, Any]:
    """Summarize every conversation session whose kept turns (extraction's evidence rows)
    changed since its summary, or that has none: offline rules by default, the model when
    ``llm`` is given. A current summary is left as it is (a second run builds nothing); the
    summary of a session whose turns are all gone is dropped. Counts (sessions, current, built,
    failed, dropped), and the sessions that were behind. ``apply=False`` writes nothing."""
    chosen = summarizer or (LLMSummarizer(llm) if llm is not None else RuleSummarizer())
    return SessionSummaries(self.session).run(chosen, apply=apply)
