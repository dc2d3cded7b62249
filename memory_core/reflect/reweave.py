"""Reweave: how a connected claim updates what its namespace knows, as a pure function of the
claim, the current state of each fact it is connected to, and the live facts under its key.

In order, acting only on connections at ``act_cosine`` or closer whose fact is still live:

1. contradicted by a fact stated before the claim was made: ``supersede`` it (the claim is
   stated, and the older fact retired behind it); stated after: ``stale`` (verify refuses it).
2. supported by a fact that says all the claim says: ``reinforce`` that fact (said again).
3. supported by a fact that says less than the claim: ``refine`` it (the claim is stated, and
   the vaguer fact retired behind it).
4. its key holds another live value: ``update`` (the write closes the old value).
5. otherwise ``new``; or ``held`` when the claim is its capture's whole statement.

Every plan that states the claim and every lineage it records name the claim's source.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..model import FactVersion
from ..texts import value_text
from ..write.templates import canonical_form, content_words
from .model import CONTRADICTS, HELD, NEW, REFINE, REINFORCE, STALE, SUPERSEDE, SUPPORTS, UPDATE, Claim, Plan


def _stated(claim: Claim, action: str, **more) -> Plan:
    """A plan that states the claim: its source holds it already, or it is written under its key."""
    if claim.whole:
        return Plan(action, holder=claim.source_fact, memory_type=claim.memory_type, **more)
    return Plan(action, key=claim.key, value=claim.text, memory_type=claim.memory_type, **more)


def plan(
    claim: Claim,
    states: Mapping[str, FactVersion | None],
    under_key: Sequence[FactVersion],
    act_cosine: float,
) -> Plan:
    """``states``: the current state of each connected fact (None: gone); ``under_key``: the
    live facts under the claim's key."""

    def close(kind: str) -> list[tuple[FactVersion, float]]:
        found = []
        for c in claim.connections:
            state = states.get(c.fact_id)
            if c.kind == kind and c.cosine is not None and c.cosine >= act_cosine and state is not None and state.live:
                found.append((state, c.cosine))
        return found

    against = close(CONTRADICTS)
    if against:
        older, cosine = against[0]
        target = (older.fact_id, older.key)
        if older.valid_at > claim.observed_at:
            return Plan(STALE, target=target, cosine=cosine, why="a fact stated after the claim says otherwise")
        return _stated(claim, SUPERSEDE, target=target, cosine=cosine, why="it contradicts an older fact")
    said = content_words(claim.text)
    for peer, cosine in close(SUPPORTS):
        theirs = content_words(value_text(peer.value))
        target = (peer.fact_id, peer.key)
        if said <= theirs:
            why = "a live fact says all it says"
            return Plan(REINFORCE, peer.key, peer.value, peer.memory_type, target=target, cosine=cosine, why=why)
        if theirs < said:
            return _stated(claim, REFINE, target=target, cosine=cosine, why="it says more than a live fact")
    if not claim.whole:
        form = canonical_form(claim.text)
        other = [s for s in under_key if s.live and canonical_form(value_text(s.value)) != form]
        if other:
            return _stated(claim, UPDATE, target=(other[0].fact_id, other[0].key), why="its key holds another value")
    return _stated(claim, HELD if claim.whole else NEW)
