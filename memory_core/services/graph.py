"""The graph reads of the Memory tool: ``list_facts`` and ``graph_recall``.

Both read exactly one scope, at ``as_of`` (default now): an observation is current when it has
started, its stated end has not come, and the graph has not ended it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..errors import InvalidInput
from ..graph.answers import GraphFact, GraphRecall
from ..graph.follow import Link
from ..graph.model import DOCUMENTED_IN, Observation, entity_id, relation_name
from ..identity import Namespace, Scope
from ..session import RunService
from ..session.holds import soft_deleted
from ..temporal import Instant, parse_instant

MAX_HOPS = 3


def _entity(value: Any, field_name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field_name} must be a non-empty string", field=field_name)
    return entity_id(value)


class GraphService(RunService):
    def _current(
        self, namespace: Namespace, entities: list[str], when: datetime, *, as_subject_only: bool = False
    ) -> list[tuple[Observation, list[Link]]]:
        """Current observations naming the entities; one whose every stating row has expired is
        hidden at once, before the sweep records it (as ``get`` hides the row)."""
        if soft_deleted(self.session.store, namespace):
            return []  # namespace_delete hid its facts, and so the graph they state
        versions, now = self.session.versions, self.session.clock.now()
        out = []
        for obs, links in self.session.graph.observations(namespace, entities, when, as_subject_only=as_subject_only):
            states = [versions.fact_state(namespace, link.key, link.fact_id) for link in links]
            if states and all(s is not None and s.expired(now) for s in states):
                continue
            out.append((obs, links))
        return out

    def list_facts(self, subject: str, *, scope: str | Scope, as_of: Instant, relation: str | None) -> list[GraphFact]:
        """The triples about ``subject`` current at ``as_of`` (default now), by relation."""
        namespace = self.identity.namespace(scope)
        when = parse_instant(as_of, "as_of") or self.session.clock.now()
        wanted = relation_name(relation) if isinstance(relation, str) and relation.strip() else None
        facts = [
            GraphFact.of(o, links)
            for o, links in self._current(namespace, [_entity(subject, "subject")], when, as_subject_only=True)
        ]
        return [f for f in facts if wanted is None or f.relation == wanted]

    def graph_recall(self, entity: str, *, scope: str | Scope, hops: int, as_of: Instant) -> GraphRecall:
        """What the graph holds around ``entity`` at ``as_of``: every current triple within
        ``hops`` (1 to 3) of it, the entities reached with their types, and the document chunks
        filed about them."""
        if isinstance(hops, bool) or not isinstance(hops, int) or not 1 <= hops <= MAX_HOPS:
            raise InvalidInput(f"hops must be an integer from 1 to {MAX_HOPS}", field="hops")
        namespace = self.identity.namespace(scope)
        when = parse_instant(as_of, "as_of") or self.session.clock.now()
        start = _entity(entity, "entity")
        versions = self.session.versions
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
                    state = versions.fact_state(namespace, row["key"], row["fact_id"])
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
        entities = {
            name: {"hop": hop, "types": self.session.graph.entity_types(namespace, name)}
            for name, hop in reached.items()
        }
        return GraphRecall(start, hops, when, tuple(facts), entities, tuple(documents))
