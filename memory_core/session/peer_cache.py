"""The peer cache's two edges with the session: what a namespace's cache loads the first time it
is asked for, and what a commit puts into it afterwards."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ..identity import Namespace
from ..model import FactVersion, Kind
from ..ports import NewRows
from ..texts import value_text
from ..vectors import stack_rows
from ..write.peers import PeerVectors

if TYPE_CHECKING:
    from .core import Session


def peer_vectors_of(session: Session, ns: Namespace) -> dict[str, tuple[str, Any]]:
    """The value vectors of a namespace's facts that can be peers, embedded once per process
    (later writes keep them current). Values only: a peer lives under another key."""
    facts = [
        s
        for states in session.versions.namespace_states(ns).values()
        for s in states
        if s.kind is Kind.FACT and session.indexable(s)
    ]
    out: dict[str, tuple[str, Any]] = {}
    for start in range(0, len(facts), 4096):
        chunk = facts[start : start + 4096]
        vectors = session.embedder.embed([value_text(s.value) for s in chunk])
        out.update({s.fact_id: (s.key, v) for s, v in zip(chunk, vectors)})
    return out


def keep_peers(
    peers: PeerVectors | None,
    rows: tuple[FactVersion, ...],
    vectors: Mapping[str, np.ndarray],
    new_rows: NewRows | None,
) -> None:
    """Put a commit's value vectors (and a batch's staged ones) into the peer cache."""
    if peers is None:
        return
    if vectors:
        by_fact = {r.fact_id: r for r in rows}
        by_ns: dict[tuple[str, str, str], list[str]] = {}
        for fact_id in vectors:
            row = by_fact[fact_id]
            by_ns.setdefault((row.tenant, row.scope, row.owner_id), []).append(fact_id)
        for ns, fact_ids in by_ns.items():
            keys = [by_fact[f].key for f in fact_ids]
            peers.put_rows(Namespace(*ns), fact_ids, keys, stack_rows(vectors, fact_ids, peers.dim))
    if new_rows is not None and new_rows.peers is not None:
        ns, fact_ids, keys, matrix = new_rows.peers()
        peers.put_rows(ns, fact_ids, keys, matrix)
