"""The Memory tool's extraction ops (``MemoryTool`` lists each in its class body): durable facts
from a transcript now, or queued for the extraction worker (``docs/extraction.md``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from ..extraction.model import Extractor
from ..extraction.result import ExtractionResult
from ..identity import Scope
from ..ports import QueueRow
from .boundary import own_arguments


def set_from_messages(
    self,
    messages: Sequence[dict[str, Any]],
    *,
    session: str | None = None,
    session_date: datetime | str | None = None,
    scope: str | Scope = Scope.USER,
    steps: Sequence[str] | None = None,
    extractor: Extractor | None = None,
    compaction_generation: int | None = None,
    dry_run: bool = False,
) -> ExtractionResult:
    """Extract durable facts from ``messages`` ({role, content, name?, id?, at?}) and write them
    with the turns read (evidence) and the verbatim windows, in one transaction. Keys name the
    subject and the attribute (``caroline:lives_in``), so a later statement supersedes."""
    return self._extraction.set_from_messages(**own_arguments(locals()))


def enqueue_extraction(
    self,
    messages: Sequence[dict[str, Any]],
    *,
    session: str | None = None,
    session_date: datetime | str | None = None,
    scope: str | Scope = Scope.USER,
    max_attempts: int = 5,
) -> str:
    """Queue a transcript for extraction later; returns the queue id."""
    return self._extraction.enqueue_extraction(**own_arguments(locals()))


def extraction_status(
    self, queue_ids: Sequence[str] | None = None, *, scope: str | Scope = Scope.USER
) -> list[QueueRow]:
    """The caller's own queued jobs (all, or the named ones) in the scope."""
    return self._extraction.extraction_status(queue_ids, scope=scope)


def extraction_queue_status(self, *, scope: str | Scope = Scope.USER) -> dict[str, int]:
    """How many jobs of the scope are pending, running, done and failed."""
    return self._extraction.extraction_queue_status(scope=scope)


def retry_extraction(self, queue_ids: Sequence[str] | None = None, *, scope: str | Scope = Scope.USER) -> list[str]:
    """Put the caller's own failed jobs back in line."""
    return self._extraction.retry_extraction(queue_ids, scope=scope)
