"""Reflect: a staged claim's connections to what its namespace already holds, decided from the
peers the caller found (live facts near the claim's vector) and the facts the entity graph links
to the claim's entities.

A near peer that says things the same way round supports the claim; one that says the opposite
(one side a suppression, "never", "no longer", "does not", the other not: the test consolidation
keeps apart by) contradicts it. A fact that shares an entity is linked whatever its cosine. The
claim's own source is never its own connection.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..consolidation.clusters import suppression
from ..extraction.coref import candidates
from ..model import FactVersion
from ..texts import value_text
from .model import CONTRADICTS, SHARES_ENTITY, SUPPORTS, Claim, Connection


def claim_entities(claim: Claim) -> frozenset[str]:
    """What a claim names, casefolded: its subject, its relations' ends, the names in its words."""
    found = {claim.subject} if claim.subject else set()
    for subject, _, obj in claim.relations:
        found.update((subject, obj))
    found.update(name.text for name in candidates(claim.text))
    return frozenset(e.casefold() for e in found if e and e.strip())


def same_way_round(a: str, b: str) -> bool:
    return suppression(a) == suppression(b)


def connections(
    claim: Claim,
    peers: Sequence[tuple[FactVersion, float]],
    linked: Iterable[tuple[FactVersion, str]],
    *,
    limit: int,
) -> tuple[Connection, ...]:
    """``peers``: live facts with their cosine to the claim; ``linked``: live facts with the
    entity they share with it. At most ``limit`` of each kind, nearest (then by key) first."""
    mine = {claim.source_fact}
    out: list[Connection] = []
    near = sorted(((s, c) for s, c in peers if s.fact_id not in mine and s.live), key=lambda p: (-p[1], p[0].key))
    for state, cosine in near[:limit]:
        kind = SUPPORTS if same_way_round(claim.text, value_text(state.value)) else CONTRADICTS
        out.append(Connection(kind, state.fact_id, state.key, round(float(cosine), 4)))
    seen = {c.fact_id for c in out} | mine
    shared: dict[str, Connection] = {}
    for state, entity in sorted(linked, key=lambda p: (p[0].key, p[1])):
        if state.fact_id in seen or state.fact_id in shared or not state.live:
            continue
        shared[state.fact_id] = Connection(SHARES_ENTITY, state.fact_id, state.key, entity=entity)
    return (*out, *list(shared.values())[:limit])
