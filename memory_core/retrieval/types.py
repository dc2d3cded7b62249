"""Requests and answers of recall/search."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..identity import Scope
from ..model import Kind
from ..temporal import iso


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    scope: Scope
    k: int
    recipe: str
    sources: frozenset[Kind]
    as_of: datetime
    observed_from: datetime | None = None
    observed_to: datetime | None = None
    token_budget: int | None = None
    participants: tuple[str, ...] = ()  # people in the conversation the query is about


@dataclass(frozen=True, slots=True)
class LegScore:
    rank: int
    score: float  # the leg's own score: cosine similarity, or BM25


@dataclass(frozen=True, slots=True)
class Hit:
    kind: Kind
    key: str
    value: Any
    fact_id: str
    version_id: str
    memory_type: str
    status: str
    score: float  # fused (a rank statistic)
    legs: dict[str, LegScore]
    valid_at: datetime | None
    invalid_at: datetime | None
    observed_at: datetime | None
    created_at: datetime | None
    provenance: dict[str, Any]
    text: str
    terms: dict[str, float] = field(default_factory=dict)  # what each leg and prior added to score
    p_relevant: float | None = None  # calibrated chance it answers the query (None: no calibration)
    subject: str | None = None  # who or what the row is about (a conversation turn's speaker)
    # A document's chunk answers for its document (``retrieval.chunks``): the document's key, and
    # how many of its chunks the search matched, this best one included
    document: str | None = None
    document_chunks: int = 0
    why: dict[str, Any] = field(default_factory=dict)  # per leg that names its facts, why it brought this row

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "key": self.key,
            "value": self.value,
            "fact_id": self.fact_id,
            "version_id": self.version_id,
            "memory_type": self.memory_type,
            "status": self.status,
            "score": round(self.score, 6),
            "legs": {leg: {"rank": s.rank, "score": round(s.score, 6)} for leg, s in self.legs.items()},
            "valid_at": iso(self.valid_at),
            "invalid_at": iso(self.invalid_at),
            "observed_at": iso(self.observed_at),
            "created_at": iso(self.created_at),
            "provenance": self.provenance,
            "terms": {name: round(value, 6) for name, value in self.terms.items()},
            "p_relevant": None if self.p_relevant is None else round(self.p_relevant, 6),
            "subject": self.subject,
            "document": self.document,
            "document_chunks": self.document_chunks,
            "why": self.why,
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: tuple[Hit, ...]
    verdict: str  # ok | no_match | below_threshold | low_calibrated_confidence | identifier_absent
    sources: tuple[str, ...]
    sources_applied: bool  # False unless every requested source was honoured by the legs that ran
    recipe: dict[str, Any]
    as_of: datetime
    notes: tuple[str, ...] = ()
    truncated: int = 0  # hits cut by the token budget
    timings_ms: dict[str, float] = field(default_factory=dict)
    pending_extraction: int = 0  # queued extraction jobs of the scope: what they hold is not findable yet
    participants: tuple[str, ...] = ()  # the people the search took the conversation to be between
    trace_id: str | None = None  # search_trace(trace_id) explains it while it is kept
    next_cursor: str | None = None  # pass as cursor= for the next page (None: no more candidates)

    @property
    def abstain(self) -> bool:
        return self.verdict != "ok"

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "abstain": self.abstain,
            "count": len(self.hits),
            "hits": [h.to_dict() for h in self.hits],
            "sources": list(self.sources),
            "sources_applied": self.sources_applied,
            "recipe": self.recipe,
            "as_of": iso(self.as_of),
            "notes": list(self.notes),
            "truncated": self.truncated,
            "pending_extraction": self.pending_extraction,
            "participants": list(self.participants),
            "trace_id": self.trace_id,
            "next_cursor": self.next_cursor,
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)
