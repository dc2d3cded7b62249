"""The point write: runs the phases over one request state, then applies the result in one
transaction. Only ``run_set`` touches the store; every decision before it is pure."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ..audit import AuditEntry
from ..clock import Clock
from ..embed import Embedder, EmbedderUnavailable, stack_rows
from ..identity import Namespace
from ..indexing import IndexProjector
from ..model import FactVersion, Kind, Op, Status, WriteResult
from ..projection import index_text, value_text
from ..store.port import KeyChange, VersionStore, WriteBatch
from . import phases
from .config import WriteConfig, resolve_threshold
from .peers import PeerVectors
from .phases import IdFactory
from .request import SetRequest, SetState
from .verdicts import Peer

PEER_READ_LIMIT = 16


@dataclass
class WriteContext:
    """The ports a write needs. ``embedder``/``projector``/``peers`` are None for a home opened
    without an embedder: such a home stores, but neither indexes nor judges peers."""

    store: VersionStore
    clock: Clock
    new_id: IdFactory
    config: Callable[[str], WriteConfig]
    embedder: Embedder | None = None
    projector: IndexProjector | None = None
    peers: PeerVectors | None = None
    calibration: Callable[[], float | None] = lambda: None


def audit_entry(
    namespace: Namespace, key: str, op: str, rows: Sequence[FactVersion], sha: str | None, actor: str, at
) -> AuditEntry:
    return AuditEntry(
        at=at,
        tenant=namespace.tenant,
        scope=namespace.scope.value,
        owner_id=namespace.owner_id,
        key=key,
        op=op,
        version_ids=",".join(r.id for r in rows),
        content_sha256=sha,
        actor=actor,
    )


FactLookup = Callable[[str, str], FactVersion]  # (key, fact_id) -> the fact's latest state
HeadVersion = Callable[[str], int]  # key -> the key's newest version number (0: none)


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


def _store_lookups(ctx: WriteContext, ns: Namespace) -> tuple[FactLookup, HeadVersion]:
    def head_version(key: str) -> int:
        head = ctx.store.head(ns, key)
        return head.version if head else 0

    return (lambda key, fact_id: ctx.store.fact_state(ns, key, fact_id)), head_version


def gather_peers(ctx: WriteContext, state: SetState, vector: np.ndarray, floor: float) -> list[Peer]:
    r = state.request
    out = []
    for fact_id, key, cosine in ctx.peers.nearest(r.namespace, vector[None, :], floor, PEER_READ_LIMIT)[0]:
        fact = ctx.store.fact_state(r.namespace, key, fact_id)
        if fact is not None and phases.eligible_peer(fact, r.key, state.memory_type, r.now):
            out.append(
                Peer(fact.fact_id, fact.key, value_text(fact.value), cosine, fact.valid_at, fact.pinned, fact.locked)
            )
    return out


def result_verdict(state: SetState) -> str:
    names = {"merge": "merged", "duplicate": "duplicate", "refines": "refines", "conflict": "conflict"}
    if state.verdict is not None and state.verdict.kind in names:
        return names[state.verdict.kind]
    if state.restatement:
        return "restated"
    return "superseded" if state.plan.closes else "created"


def _details(state: SetState, peer_check: str) -> dict:
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


def embed_texts(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """The write embeds before it inserts: an embedder failure fails the call and writes nothing."""
    return _embedding(lambda: np.asarray(embedder.embed(list(texts)), dtype=np.float32))


def _embedding(call):
    try:
        return call()
    except EmbedderUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - any adapter failure is the same answer to the caller
        raise EmbedderUnavailable(f"the embedder failed ({type(exc).__name__}: {exc}); nothing was written") from exc


def texts_to_embed(key: str, value) -> tuple[str, str]:
    """What the index embeds (the key's words and the value) and what a peer check compares (the
    value alone: peers live under other keys by definition, so key words only add noise)."""
    return index_text(key, value), value_text(value)


def embed_pairs(embedder: Embedder, pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    """Index and peer vectors for (index text, value text) pairs, in one embedder call; a pair
    whose two texts are the same (a key without words) is embedded once."""
    if hasattr(embedder, "embed_pairs"):  # the static embedder shares the value's sums with its index text
        return _embedding(lambda: embedder.embed_pairs(list(pairs)))
    texts: list[str] = []
    index_rows, value_rows = [], []
    for index_text_, value_text_ in pairs:
        index_rows.append(len(texts))
        texts.append(index_text_)
        if value_text_ != index_text_:
            texts.append(value_text_)
        value_rows.append(len(texts) - 1)
    matrix = embed_texts(embedder, texts)
    return matrix[index_rows], matrix[value_rows]


def run_set(ctx: WriteContext, request: SetRequest) -> WriteResult:
    state = phases.resolve_type(SetState(request, ctx.config(request.namespace.tenant)))
    with ctx.store.locked():
        state = phases.fetch_live(state, ctx.store.fact_states(request.namespace, request.key))
        state = phases.guard(state)
        state = phases.expiry(state)
        state = phases.prepare(state)
        state = phases.preconditions(state)
        state = phases.build_rows(state, ctx.new_id)
        vector = peer_vector = None
        peer_check = "not_embedded"
        if phases.embedded(state) and ctx.embedder is not None:
            index_vectors, peer_vectors = embed_pairs(ctx.embedder, [texts_to_embed(request.key, request.value)])
            vector, peer_vector = index_vectors[0], peer_vectors[0]
            peer_check = "skipped"
            if phases.needs_peer_check(state) and ctx.peers is not None:
                floor = resolve_threshold(state.type_config, state.config.tenant, ctx.calibration()).value
                state = phases.peer_verdict(state, gather_peers(ctx, state, peer_vector, floor), ctx.calibration())
                state = verdict_rows(state, *_store_lookups(ctx, request.namespace), ctx.new_id)
                peer_check = "checked"
        elif phases.embedded(state):
            peer_check = "no_embedder"
        details = _details(state, peer_check)
        if request.dry_run:
            return WriteResult(result_verdict(state), request.key, (), {**details, "dry_run": True})
        changes = [KeyChange(request.namespace, request.key, state.rows)] if state.rows else []
        by_key: dict[str, list[FactVersion]] = {}
        for row in state.peer_rows:
            by_key.setdefault(row.key, []).append(row)
        changes += [KeyChange(request.namespace, key, tuple(rows)) for key, rows in by_key.items()]
        written = (*state.rows, *state.peer_rows)
        op = "set" if state.rows else f"set:{state.verdict.kind}"
        audit = audit_entry(
            request.namespace,
            request.key,
            op,
            written,
            state.content_sha256,
            request.provenance.actor,
            state.created_at,
        )
        if written:
            ctx.store.apply(WriteBatch(tuple(changes), (audit,)))
    # The key's last row holds the request's value (a new fact or a restatement): its vectors are known.
    known = vector is not None and bool(state.rows)
    after_write(
        ctx,
        request.namespace,
        written,
        {state.rows[-1].fact_id: vector} if known else {},
        {state.rows[-1].fact_id: peer_vector} if known and state.rows[-1].kind is Kind.FACT else {},
    )
    return WriteResult(result_verdict(state), request.key, tuple(written), details)


def after_write(
    ctx: WriteContext,
    namespace: Namespace,
    rows: Sequence[FactVersion],
    index_vectors: Mapping[str, np.ndarray],
    peer_vectors: Mapping[str, np.ndarray] | None = None,
    *,
    hold: bool = False,
) -> None:
    """Queue the changed states for the index and keep the peer vectors current (``hold``: the
    caller flushes the queue itself)."""
    if ctx.projector is not None:
        ctx.projector.enqueue(rows, index_vectors, hold=hold)
    if ctx.peers is not None and peer_vectors:
        keys = {r.fact_id: r.key for r in rows}
        fact_ids = list(peer_vectors)
        ctx.peers.put_rows(
            namespace, fact_ids, [keys[f] for f in fact_ids], stack_rows(peer_vectors, fact_ids, ctx.peers.dim)
        )
