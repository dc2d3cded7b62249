"""What a point write's verdict does to rows, and how its answer reads. Pure: the peers' states
and head versions come from the caller (the store, or a batch as it stands)."""

from __future__ import annotations

import dataclasses
from typing import Callable

from ..clock import IdFactory
from ..model import FactVersion, HeadVersion, Op, Status
from .request import SetState
from .verdicts import Peer

FactLookup = Callable[[str, str], FactVersion]  # (key, fact_id) -> the fact's latest state


def verdict_rows(state: SetState, fact: FactLookup, head_version: HeadVersion, new_id: IdFactory) -> SetState:
    """Turn the peer verdict into rows: merge and duplicate insert nothing (the peer is reinforced);
    refines retires the substituted peers; conflict flags both sides. Pure: the peers' states and
    head versions come from the caller (the store, or a batch as it stands)."""
    verdict, r = state.verdict, state.request
    if verdict is None or verdict.kind == "no_peers":
        return state
    actor, created = r.provenance.actor, state.created_at
    change_id = state.rows[-1].change_id
    peer_rows: list[FactVersion] = []

    def peer_row(peer: Peer, **changes) -> None:
        prior = fact(peer.key, peer.fact_id)
        version = max([head_version(peer.key), *(p.version for p in peer_rows if p.key == peer.key)]) + 1
        peer_rows.append(
            dataclasses.replace(
                prior,
                id=new_id(),
                version=version,
                change_id=change_id,
                created_at=max(created, prior.created_at),
                changed_by=actor,
                **changes,
            )
        )

    own = state.rows
    if verdict.kind in ("merge", "duplicate"):
        own = ()
        if r.reinforce:
            for peer in verdict.peers:
                peer_row(peer, op=Op.RESTATE, reinforcement_count=fact(peer.key, peer.fact_id).reinforcement_count + 1)
    elif verdict.kind == "refines":
        new_fact = state.rows[-1]
        for peer in verdict.peers:
            prior = fact(peer.key, peer.fact_id)
            # Closed where the new statement begins; never later than the end the peer already had.
            end = max(r.valid_at, prior.valid_at)
            if prior.invalid_at is not None:
                end = min(end, prior.invalid_at)
            peer_row(peer, op=Op.SUPERSEDE, status=Status.SUPERSEDED, superseded_by=new_fact.id, invalid_at=end)
    elif verdict.kind == "conflict":
        new_fact = state.rows[-1]
        flagged = [p for p in verdict.peers if not p.pinned]  # a pinned fact is never flagged
        own = (
            *state.rows[:-1],
            dataclasses.replace(
                new_fact, status=Status.CONFLICTED, conflict_with=tuple(p.fact_id for p in verdict.peers)
            ),
        )
        for peer in flagged:
            prior = fact(peer.key, peer.fact_id)
            peer_row(
                peer,
                op=Op.FLAG,
                status=Status.CONFLICTED,
                conflict_with=tuple(dict.fromkeys((*prior.conflict_with, new_fact.fact_id))),
            )
    return dataclasses.replace(state, rows=tuple(own), peer_rows=tuple(peer_rows))


def result_verdict(state: SetState) -> str:
    names = {"merge": "merged", "duplicate": "duplicate", "refines": "refines", "conflict": "conflict"}
    if state.verdict is not None and state.verdict.kind in names:
        return names[state.verdict.kind]
    if state.restatement:
        return "restated"
    return "superseded" if state.plan.closes else "created"


def write_details(state: SetState, peer_check: str) -> dict:
    details: dict = {"peer_check": peer_check}
    if state.retyped_from:
        details["retyped_from"] = state.retyped_from
    if state.verdict is not None and state.verdict.peers:
        details["peers"] = [{"key": p.key, "cosine": round(p.cosine, 4)} for p in state.verdict.peers]
        details["reason"] = state.verdict.reason
    if state.threshold is not None:
        details["threshold"] = {"value": state.threshold.value, "source": state.threshold.source}
    if state.verdict is not None and state.verdict.kind in ("merge", "duplicate"):
        details["merged_into"] = state.verdict.peers[0].key
    return details
