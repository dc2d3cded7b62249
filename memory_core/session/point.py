"""The point write: runs the phases over one request state, then commits the result. Only
``run_set`` reads the store and commits; every decision in between is pure (``write.phases``,
``write.verdicts``)."""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..audit import audit_entry
from ..errors import EmbedderUnavailable
from ..identity import Identity, Namespace, Scope
from ..model import HeadVersion, Kind, Provenance, WriteResult
from ..ports import Embedder
from ..substrate.events import context_of
from ..texts import texts_to_embed
from ..write import phases
from ..write.conversation import wants_context
from ..write.options import SetOptions
from ..write.outcome import FactLookup, result_verdict, verdict_rows, write_details
from ..write.request import SetRequest, SetState
from ..write.settle import request_of, restamped
from ..write.tenant_config import resolve_threshold
from ..write.verdicts import Peer
from .core import Commit, key_changes
from .reads import place_fact

if TYPE_CHECKING:
    from .core import Session

PEER_READ_LIMIT = 16


def _store_lookups(session: Session, ns: Namespace) -> tuple[FactLookup, HeadVersion]:
    return (lambda key, fact_id: session.versions.fact_state(ns, key, fact_id)), partial(session.head_version, ns)


def gather_peers(session: Session, state: SetState, vector: np.ndarray, floor: float) -> list[Peer]:
    ns = state.request.namespace
    found = session.peers.nearest(ns, vector[None, :], floor, PEER_READ_LIMIT)[0]
    peers = (
        phases.peer_of(session.versions.fact_state(ns, key, fact_id), state, cosine) for fact_id, key, cosine in found
    )
    return [p for p in peers if p is not None]


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


def run_set(session: Session, request: SetRequest) -> WriteResult:
    state = phases.resolve_type(SetState(request, session.write_config(request.namespace.tenant)))
    embedder = session.embedder
    if embedder is not None and session.peers is not None and phases.needs_peer_check(state):
        session.peers.warm(request.namespace)  # a first load embeds outside the store's lock
    with session.locked():
        if wants_context(request.kind, request.context, request.provenance.session):
            # Under the lock that holds until the commit: the session's tail cannot move in between.
            spoken = session.conversation_context(request.namespace, request.provenance.session)
            state = dataclasses.replace(state, request=dataclasses.replace(request, context=spoken))
        request = restamped(state.request, session.clock.now())  # as of now, under the lock
        state = dataclasses.replace(state, request=request)
        state = phases.check_live(state, session.versions.fact_states(request.namespace, request.key))
        state = phases.build_rows(state, session.new_id)
        vector = peer_vector = None
        peer_check = "not_embedded"
        if phases.embedded(state) and embedder is not None:
            index_vectors, peer_vectors = embed_pairs(embedder, [texts_to_embed(request.key, request.value)])
            vector, peer_vector = index_vectors[0], peer_vectors[0]
            peer_check = "skipped"
            if phases.needs_peer_check(state) and session.peers is not None:
                calibration = session.calibration(request.namespace.tenant)
                floor = resolve_threshold(state.type_config, state.config.tenant, calibration).value
                state = phases.peer_verdict(state, gather_peers(session, state, peer_vector, floor), calibration)
                state = verdict_rows(state, *_store_lookups(session, request.namespace), session.new_id)
                peer_check = "checked"
        elif phases.embedded(state):
            peer_check = "no_embedder"
        details = write_details(state, peer_check)
        if request.dry_run:
            return WriteResult(result_verdict(state), request.key, (), {**details, "dry_run": True})
        written = (*state.rows, *state.peer_rows)
        if written:
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
            # The key's last row holds the request's value (a new fact or a restatement): its vectors are known.
            fact_id = state.rows[-1].fact_id if vector is not None and state.rows else None
            session.commit(
                Commit(
                    key_changes(request.namespace, written),
                    (audit,),
                    index_vectors={fact_id: vector} if fact_id else {},
                    peer_vectors={fact_id: peer_vector} if fact_id and state.rows[-1].kind is Kind.FACT else {},
                    context=context_of(request.provenance),
                )
            )
    return WriteResult(result_verdict(state), request.key, tuple(written), details)


def set_value(
    session: Session,
    identity: Identity,
    origin: str,
    key: Any,
    value: Any,
    *,
    scope: str | Scope,
    dry_run: bool,
    **options: Any,
) -> WriteResult:
    """``set`` as a run states it: ``scope="auto"`` places the fact by the tenant's ontology (the
    row and its graph facts go to the decided scope in one transaction, and
    ``details["placement"]`` says where and why)."""
    chosen = SetOptions.parse(options)  # an unknown option is refused before the store is read
    placed = None
    if isinstance(scope, str) and scope == "auto":
        placed = place_fact(session, identity, chosen.subject, chosen.subject_type)
        scope = placed.scope
    namespace = identity.namespace(scope)
    provenance = Provenance.of(identity, origin)
    request = request_of(namespace, key, value, provenance, session.clock.now(), chosen, dry_run)
    result = run_set(session, request)
    if placed is not None:
        result = dataclasses.replace(result, details={**result.details, "placement": placed.to_dict()})
    return result
