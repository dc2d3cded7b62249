"""What the graph reads answer: a triple current at an instant with the rows that state it, and the
graph around an entity."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..temporal import iso
from .follow import Link
from .model import Observation


@dataclass(frozen=True, slots=True)
class GraphFact:
    """A triple current at the read's instant, with the rows that state it."""

    subject: str
    relation: str
    object: str
    valid_at: datetime
    dated: bool
    invalid_at: datetime | None
    ended_at: datetime | None
    end_reason: str | None
    seen_at: datetime
    origin: str
    fact_class: str | None
    rows: tuple[dict[str, str], ...]  # {key, fact_id, link}

    @classmethod
    def of(cls, obs: Observation, links: list[Link]) -> "GraphFact":
        return cls(
            obs.subject,
            obs.relation,
            obs.object,
            obs.valid_at,
            obs.dated,
            obs.invalid_at,
            obs.ended_at,
            obs.end_reason,
            obs.seen_at,
            obs.origin,
            obs.fact_class,
            tuple({"key": link.key, "fact_id": link.fact_id, "link": link.link_kind} for link in links),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "relation": self.relation,
            "object": self.object,
            "valid_at": iso(self.valid_at),
            "dated": self.dated,
            "invalid_at": iso(self.invalid_at),
            "ended_at": iso(self.ended_at),
            "end_reason": self.end_reason,
            "seen_at": iso(self.seen_at),
            "origin": self.origin,
            "fact_class": self.fact_class,
            "rows": list(self.rows),
        }


@dataclass(frozen=True, slots=True)
class GraphRecall:
    entity: str
    hops: int
    as_of: datetime
    facts: tuple[GraphFact, ...]
    entities: dict[str, dict[str, Any]]  # reached entity -> {hop, types}
    documents: tuple[dict[str, Any], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "entity": self.entity,
            "hops": self.hops,
            "as_of": iso(self.as_of),
            "entities": self.entities,
            "facts": [f.to_dict() for f in self.facts],
            "documents": list(self.documents),
        }
