"""The graph reads of the Memory tool: ``list_facts`` and ``graph_recall``.

Both read exactly one scope, at ``as_of`` (default now): an observation is current when it has
started, its stated end has not come, and the graph has not ended it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..identity import Scope
from ..temporal import iso, parse_instant
from .follow import Link
from .model import DOCUMENTED_IN, Observation, entity_id, relation_name

if TYPE_CHECKING:
    from ..api import Memory

MAX_HOPS = 3
Instant = datetime | str | None


@dataclass(frozen=True, slots=True)
class GraphFact:
    """A triple current at the read's instant, with the rows that state it."""

    subject: str
    relation: str
    object: str
    start: datetime
    dated: bool
    valid_to: datetime | None
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
            obs.start,
            obs.dated,
            obs.valid_to,
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
            "start": iso(self.start),
            "dated": self.dated,
            "valid_to": iso(self.valid_to),
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


def _entity(value: Any, field_name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field_name} must be a non-empty string", field=field_name)
    return entity_id(value)


class GraphOps:
    _memory: "Memory"

    def _current(self, namespace, entities: list[str], when: datetime, *, as_subject_only: bool = False):
        """Current observations naming the entities; one whose every stating row has expired is
        hidden at once, before the sweep records it (as ``get`` hides the row)."""
        store, now = self._memory.store, self._memory.clock.now()
        out = []
        for obs, links in store.graph_observations(namespace, entities, when, as_subject_only=as_subject_only):
            states = [store.fact_state(namespace, link.key, link.fact_id) for link in links]
            if states and all(s is not None and s.expired(now) for s in states):
                continue
            out.append((obs, links))
        return out

    def list_facts(
        self, subject: str, *, scope: str | Scope = Scope.USER, as_of: Instant = None, relation: str | None = None
    ) -> list[GraphFact]:
        """The triples about ``subject`` current at ``as_of`` (default now), by relation."""
        namespace = self.identity.namespace(scope)  # type: ignore[attr-defined]
        when = parse_instant(as_of, "as_of") or self._memory.clock.now()
        wanted = relation_name(relation) if isinstance(relation, str) and relation.strip() else None
        facts = [
            GraphFact.of(o, links)
            for o, links in self._current(namespace, [_entity(subject, "subject")], when, as_subject_only=True)
        ]
        return [f for f in facts if wanted is None or f.relation == wanted]

    def graph_recall(
        self, entity: str, *, scope: str | Scope = Scope.USER, hops: int = 1, as_of: Instant = None
    ) -> GraphRecall:
        """What the graph holds around ``entity`` at ``as_of``: every current triple within
        ``hops`` (1 to 3) of it, the entities reached with their types, and the document chunks
        filed about them."""
        if isinstance(hops, bool) or not isinstance(hops, int) or not 1 <= hops <= MAX_HOPS:
            raise InvalidInput(f"hops must be an integer from 1 to {MAX_HOPS}", field="hops")
        namespace = self.identity.namespace(scope)  # type: ignore[attr-defined]
        when = parse_instant(as_of, "as_of") or self._memory.clock.now()
        start = _entity(entity, "entity")
        store = self._memory.store
        reached: dict[str, int] = {start: 0}
        frontier, facts, seen = [start], [], set()
        for hop in range(1, hops + 1):
            found = self._current(namespace, frontier, when)
            frontier = []
            for obs, links in found:
                if obs.triple_id in seen:
                    continue
                seen.add(obs.triple_id)
                facts.append(GraphFact.of(obs, links))
                if obs.relation == DOCUMENTED_IN:
                    continue  # a chunk is a leaf, not an entity to walk from
                for name in (obs.subject, obs.object):
                    if name not in reached:
                        reached[name] = hop
                        frontier.append(name)
            if not frontier:
                break
        documents = []
        for fact in facts:
            if fact.relation == DOCUMENTED_IN:
                for row in fact.rows:
                    state = store.fact_state(namespace, row["key"], row["fact_id"])
                    if state is not None:
                        documents.append(
                            {
                                "entity": fact.subject,
                                "key": row["key"],
                                "fact_class": fact.fact_class,
                                "context": state.index_context,
                                "text": state.value,
                            }
                        )
        entities = {name: {"hop": hop, "types": store.entity_types(namespace, name)} for name, hop in reached.items()}
        return GraphRecall(start, hops, when, tuple(facts), entities, tuple(documents))
