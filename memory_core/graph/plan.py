"""What one write does to one namespace's graph, decided before its transaction, as data.

``plan_follow`` runs the follow (``follow.follow``) and then, for each single-valued relation it
touched, the interval repair and the one-value-current fallback (``order``), over what the store
read beforehand (``GraphInputs``) with the write's own rows laid over it. The answer
(``GraphWrite``) is what the store applies inside the write's transaction: rows and triples
commit together or not at all, and the store runs no decision of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Mapping, Sequence

from ..clock import IdFactory
from ..identity import Namespace
from ..model import FactVersion
from .follow import GraphChanges, Link, LinkedObservation, follow, holds_graph
from .model import Observation
from .order import End, changed_ends, fallback, with_ends


@dataclass(frozen=True, slots=True)
class GraphInputs:
    """What the store holds that one namespace's follow reads (see ``GraphStore.follow_inputs``)."""

    linked: Mapping[str, Sequence[LinkedObservation]]  # fact id -> its links before the write
    observations: Sequence[Observation]  # open ones of the subjects involved; all of single-valued groups
    links: Sequence[Link]  # every link of those observations
    states: Mapping[str, FactVersion]  # the latest stored state of every fact those links name
    entity_types: Mapping[str, frozenset[str | None]]  # entity -> the types it is stored with


@dataclass(frozen=True, slots=True)
class GraphWrite:
    """What the store writes to one namespace's graph in the write's transaction."""

    namespace: Namespace
    observations: tuple[Observation, ...]
    links: tuple[Link, ...]
    ends: Mapping[str, End]  # triple id -> (ended_at, end_reason), set after the inserts
    entities: tuple[tuple[str, str | None], ...]  # (entity id, type) rows to add
    at: datetime  # when the entities were first seen

    def __bool__(self) -> bool:
        return bool(self.observations or self.links or self.ends or self.entities)


@dataclass
class _Workspace:
    """The graph as the write leaves it so far: what was read, with what the plan added."""

    observations: dict[str, Observation]
    links: list[Link]
    states: dict[str, FactVersion]
    entity_types: dict[str, set[str | None]]
    added_observations: list[Observation] = field(default_factory=list)
    added_links: list[Link] = field(default_factory=list)
    ends: dict[str, End] = field(default_factory=dict)
    entities: list[tuple[str, str | None]] = field(default_factory=list)

    def holders(self, triple_ids: Sequence[str], now: datetime) -> dict[str, set[str]]:
        """For each observation, the facts whose newest row (this write's included) holds and links it."""
        wanted = set(triple_ids)
        out: dict[str, set[str]] = {}
        for link in self.links:
            if link.triple_id in wanted:
                row = self.states.get(link.fact_id)
                if row is not None and holds_graph(row, now):
                    out.setdefault(link.triple_id, set()).add(link.fact_id)
        return out

    def write(self, changes: GraphChanges) -> None:
        for observation in changes.observations:
            self.observations[observation.triple_id] = observation
            self.added_observations.append(observation)
        self.links.extend(changes.links)
        self.added_links.extend(changes.links)
        self.set_ends(changes.ends)
        for entity, entity_type in sorted(changes.entities.items(), key=lambda item: item[0]):
            known = self.entity_types.get(entity)
            if not known or (entity_type is not None and entity_type not in known):
                self.entities.append((entity, entity_type))
                self.entity_types.setdefault(entity, set()).add(entity_type)

    def set_ends(self, ends: Mapping[str, End]) -> None:
        for triple_id, end in sorted(ends.items()):
            self.ends[triple_id] = end
            found = self.observations.get(triple_id)
            if found is not None:
                self.observations[triple_id] = with_ends([found], {triple_id: end})[0]

    def group(self, subject: str, relation: str) -> list[Observation]:
        return [o for o in self.observations.values() if o.subject == subject and o.relation == relation]


def plan_follow(
    namespace: Namespace,
    rows: Sequence[FactVersion],
    inputs: GraphInputs,
    single_valued: frozenset[str],
    new_id: IdFactory,
) -> GraphWrite:
    """The graph write of ``rows`` (the newest row of each fact the write touched, all of
    ``namespace``, oldest first)."""
    states = dict(inputs.states)
    for row in rows:
        known = states.get(row.fact_id)
        if known is None or known.version <= row.version:
            states[row.fact_id] = row
    ws = _Workspace(
        {o.triple_id: o for o in inputs.observations},
        list(inputs.links),
        states,
        {entity: set(types) for entity, types in inputs.entity_types.items()},
    )
    linked = inputs.linked
    triples = {rel.triple for r in rows for rel in r.relations}
    triples |= {
        (lo.observation.subject, lo.observation.relation, lo.observation.object)
        for los in linked.values()
        for lo in los
    }
    open_by_triple: dict[tuple[str, str, str], list[Observation]] = {}
    for obs in inputs.observations:
        if obs.ended_at is None and (obs.subject, obs.relation, obs.object) in triples:
            open_by_triple.setdefault((obs.subject, obs.relation, obs.object), []).append(obs)
    now = max(r.created_at for r in rows)
    holders = ws.holders([lo.observation.triple_id for los in linked.values() for lo in los], now)
    changes = follow(rows, linked, open_by_triple, lambda t: holders.get(t, set()), new_id)
    ws.write(changes)
    for subject, relation in sorted(changes.groups):
        if relation in single_valued:
            _repair_group(ws, subject, relation, now, new_id)
    return GraphWrite(
        namespace, tuple(ws.added_observations), tuple(ws.added_links), dict(ws.ends), tuple(ws.entities), now
    )


def _repair_group(ws: _Workspace, subject: str, relation: str, now: datetime, new_id: IdFactory) -> None:
    """The interval repair of one single-valued relation, then the one-value-current fallback."""
    observations = ws.group(subject, relation)
    ends = changed_ends(observations)
    ws.set_ends(ends)
    holders = ws.holders([o.triple_id for o in observations], now)
    marker = fallback(with_ends(observations, ends), set(holders), now, new_id())
    if marker is None:
        return
    held_by = set().union(
        *(holders[o.triple_id] for o in observations if o.object == marker.object and o.triple_id in holders)
    )
    keys: dict[str, str] = {}
    for link in ws.links:
        if link.fact_id in held_by:
            keys.setdefault(link.fact_id, link.key)
    links = [Link(marker.triple_id, f, keys[f], ws.states[f].content_sha256, "stated", now) for f in sorted(held_by)]
    ws.write(GraphChanges(observations=[marker], links=links))
    ws.set_ends(changed_ends([*with_ends(observations, ends), marker]))
