"""The graph follows the rows: what one write does to the triples, decided by pure functions.

For every fact a write touched, its newest row either *holds* graph facts (live, not a proposal,
not high, not expired, not an anonymized shell) or does not:

* a holding row states each of its relations: an open observation of the same triple is linked
  (a restatement holds as stated); otherwise a new observation is stored, seen at the write's
  arrival plus one microsecond per triple before it. A row that held before and holds again (an
  Undo) stores a *restore marker* seen from the restore on, so the restored value is current.
* a row that stops holding closes each open observation it links, unless another holding row
  still links it, or the row that replaced it states nothing itself but still says the triple
  in its words (then that row is linked, as ``inferred``). When in doubt it closes: a closed
  triple comes back with the next write that states it, a wrongly open one never leaves.

The adapter reads what these functions need inside the write's transaction and applies the
result there, so a row and its triples are committed together or not at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable, Mapping, Sequence

from ..clock import IdFactory
from ..lifecycle.expiry import is_anonymized
from ..model import FactVersion, Status
from .model import DOCUMENT, RESTORE, RETIRED, STATED, Observation, Relation, entity_id

MICROSECOND = timedelta(microseconds=1)
_HOLDING = (Status.ACTIVE, Status.CONFLICTED)


def holds_graph(row: FactVersion, now: datetime) -> bool:
    """May this row's value hold graph facts? A proposal, a high row, an expired or anonymized one may not."""
    return row.status in _HOLDING and row.sensitivity != "high" and not row.expired(now) and not is_anonymized(row)


@dataclass(frozen=True, slots=True)
class Link:
    triple_id: str
    fact_id: str
    key: str
    content_sha256: str
    link_kind: str  # stated | inferred
    linked_at: datetime


@dataclass
class GraphChanges:
    observations: list[Observation] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    ends: dict[str, tuple[datetime | None, str | None]] = field(default_factory=dict)
    entities: dict[str, str | None] = field(default_factory=dict)  # entity id -> type (None: untyped)
    groups: set[tuple[str, str]] = field(default_factory=set)  # (subject, relation) touched

    def __bool__(self) -> bool:
        return bool(self.observations or self.links or self.ends)


@dataclass(frozen=True, slots=True)
class LinkedObservation:
    observation: Observation
    link: Link


def _row_start(row: FactVersion) -> datetime | None:
    """A row written with its own valid_at dates what it states (a session's day, an import)."""
    return row.valid_at if abs((row.valid_at - row.created_at).total_seconds()) >= 1 else None


def follow(
    rows: Sequence[FactVersion],
    linked: Mapping[str, Sequence[LinkedObservation]],
    open_by_triple: Mapping[tuple[str, str, str], Sequence[Observation]],
    holders: Callable[[str], set[str]],
    new_id: IdFactory,
) -> GraphChanges:
    """What a write's rows (the newest row of each fact it touched, one namespace) do to the graph.

    ``linked``: each fact's links before the write; ``open_by_triple``: the namespace's open
    observations of every triple involved; ``holders(triple_id)``: the facts whose newest row
    (this write's included) holds and links that observation."""
    out = GraphChanges()
    now = max(r.created_at for r in rows)
    holding = [r for r in rows if holds_graph(r, now)]
    by_id = {r.id: r for r in rows}
    newly_linked: dict[str, set[str]] = {}
    order = 0
    for row in holding:
        before = linked.get(row.fact_id, ())
        linked_open = {
            (lo.observation.subject, lo.observation.relation, lo.observation.object)
            for lo in before
            if lo.observation.ended_at is None
        }
        for rel in row.relations:
            out.entities.setdefault(rel.subject, rel.subject_type)
            if rel.subject_type:
                out.entities[rel.subject] = rel.subject_type
            if rel.relation != "documented_in":
                out.entities.setdefault(rel.object, rel.object_type)
            if rel.triple in linked_open:
                continue
            seen = row.created_at + order * MICROSECOND
            order += 1
            out.groups.add((rel.subject, rel.relation))
            match = _open_match(open_by_triple.get(rel.triple, ()), rel, out.ends)
            if match is not None:
                obs_id = match.triple_id
            else:
                observation = _new_observation(row, rel, before, seen, new_id)
                if observation is None:
                    continue  # an Undo of a value that ended on its own: it stays ended
                out.observations.append(observation)
                obs_id = observation.triple_id
            out.links.append(Link(obs_id, row.fact_id, row.key, row.content_sha256, "stated", row.created_at))
            newly_linked.setdefault(obs_id, set()).add(row.fact_id)
        stated = {rel.triple for rel in row.relations}
        for lo in before:  # a restatement naming other facts no longer states the ones it dropped
            obs = lo.observation
            if (
                lo.link.link_kind == "stated"
                and obs.ended_at is None
                and obs.triple_id not in out.ends
                and (obs.subject, obs.relation, obs.object) not in stated
                and not (holders(obs.triple_id) | newly_linked.get(obs.triple_id, set())) - {row.fact_id}
            ):
                out.ends[obs.triple_id] = (max(obs.valid_at, row.created_at), RETIRED)
                out.groups.add((obs.subject, obs.relation))
    for row in rows:
        if row in holding:
            continue
        winner = by_id.get(row.superseded_by or "")
        for lo in linked.get(row.fact_id, ()):
            obs = lo.observation
            if obs.ended_at is not None or obs.triple_id in out.ends:
                continue
            if (holders(obs.triple_id) | newly_linked.get(obs.triple_id, set())) - {row.fact_id}:
                continue  # another live row still states it
            if (
                winner is not None
                and holds_graph(winner, now)
                and not winner.relations
                and text_states(winner.value if isinstance(winner.value, str) else winner.value_json, obs)
            ):
                out.links.append(
                    Link(
                        obs.triple_id, winner.fact_id, winner.key, winner.content_sha256, "inferred", winner.created_at
                    )
                )
                newly_linked.setdefault(obs.triple_id, set()).add(winner.fact_id)
                continue
            replaced = row.invalid_at if row.status is Status.SUPERSEDED and row.invalid_at else row.created_at
            out.ends[obs.triple_id] = (max(obs.valid_at, replaced), RETIRED)
            out.groups.add((obs.subject, obs.relation))
    return out


def _open_match(candidates: Sequence[Observation], rel: Relation, ends: Mapping[str, object]) -> Observation | None:
    """An open observation a new statement of the same triple can join: same stated end, and the
    same start when the statement is dated (another dated start is another observation)."""
    fits = [
        o
        for o in candidates
        if o.ended_at is None
        and o.triple_id not in ends
        and o.invalid_at == rel.invalid_at
        and (rel.valid_at is None or o.valid_at == rel.valid_at)
    ]
    return max(fits, key=lambda o: o.order_key) if fits else None


def _new_observation(
    row: FactVersion, rel: Relation, before: Sequence[LinkedObservation], seen: datetime, new_id: IdFactory
) -> Observation | None:
    previous = [
        lo.observation
        for lo in before
        if lo.observation.subject == rel.subject
        and lo.observation.relation == rel.relation
        and lo.observation.object == rel.object
    ]
    origin = DOCUMENT if rel.relation == "documented_in" else STATED
    if previous:  # the row held this triple before and holds it again: an Undo's marker
        if rel.invalid_at is not None and rel.invalid_at <= row.created_at:
            return None
        latest = max(p.valid_at for p in previous)
        start = max(row.created_at, latest)
        return Observation(
            new_id(),
            *rel.triple,
            valid_at=start,
            dated=start != row.created_at,
            invalid_at=rel.invalid_at,
            seen_at=seen,
            origin=RESTORE,
            restore_id=row.change_id,
            fact_class=rel.fact_class,
        )
    start = rel.valid_at or _row_start(row)
    end = rel.invalid_at if rel.invalid_at is not None else (row.invalid_at if start is not None else None)
    # Undated, it starts at the write's instant; seen_at (+1 µs per triple) only orders it.
    return Observation(
        new_id(),
        *rel.triple,
        valid_at=start or row.created_at,
        dated=start is not None,
        invalid_at=end,
        seen_at=seen,
        origin=origin,
        fact_class=rel.fact_class,
    )


# -- does a text still say a triple? ------------------------------------------------------------

_SENTENCES = re.compile(r"(?<=[.;?!])\s+|\n+")
_CLAUSES = re.compile(r"[,:]|\band\b|\bbut\b", re.IGNORECASE)
_WORD = re.compile(r"\w+", re.UNICODE)


def _verb_forms(relation: str) -> set[str]:
    head = relation.split("_")[0].casefold()
    stem = head[:-1] if head.endswith("s") and len(head) > 3 else head
    forms = {head, stem, stem + "s", stem + "es", stem + "ing"}
    if stem.endswith("e"):
        forms.add(stem[:-1] + "ing")
    return forms


def _has_run(words: list[str], run: list[str]) -> bool:
    return any(words[i : i + len(run)] == run for i in range(len(words) - len(run) + 1)) if run else False


def text_states(text: str, obs: Observation) -> bool:
    """Does ``text`` still state ``obs`` in its words? A sentence naming the object (and the subject,
    unless it is the profile's owner) that does not ask, in a clause carrying the relation's verb
    in a present form. Detail after the object is doubt, and doubt closes."""
    forms = _verb_forms(obs.relation)
    obj = _WORD.findall(obs.object)
    subj = [] if obs.subject == entity_id("user") else _WORD.findall(obs.subject)
    for sentence in _SENTENCES.split(text.strip()):
        if not sentence or sentence.rstrip().endswith("?"):
            continue
        words = [w.casefold() for w in _WORD.findall(sentence)]
        if subj and not _has_run(words, subj):
            continue
        for clause in _CLAUSES.split(sentence):
            clause_words = [w.casefold() for w in _WORD.findall(clause)]
            if _has_run(clause_words, obj) and forms & set(clause_words):
                tail = clause_words[
                    max(i for i in range(len(clause_words)) if clause_words[i : i + len(obj)] == obj) + len(obj) :
                ]
                if not tail:
                    return True
    return False


__all__ = ["GraphChanges", "Link", "LinkedObservation", "follow", "holds_graph", "text_states", "RETIRED"]
