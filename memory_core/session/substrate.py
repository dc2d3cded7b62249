"""What every remember service reads the same way: the lenses a call wears, the scopes it reads,
the substrate as items, a frame the caller owns, and the receipt and interaction record of an
answer. (Services never call one another; they share these.)"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Iterable, Sequence

from ..audit import audit_entry
from ..errors import (
    CapabilityMissing,
    FrameNotFound,
    FrameNotOwned,
    IdentityIncomplete,
    InvalidInput,
    LensExpired,
    LensNotFound,
    LensNotWorn,
    ScopeForbidden,
)
from ..identity import Identity, Namespace, Scope
from ..inputs import texts
from ..ports import SubstrateRecord
from ..substrate.decisions import DECISION_TYPE, DecisionTrace, Interaction
from ..substrate.events import NO_CONTEXT, EventContext, record_event
from ..substrate.frames import Frame
from ..substrate.items import Item, item_of_decision, item_of_fact, item_of_relation, with_task
from ..substrate.lenses import SCOPE_ORDER, Capability, Worn
from ..substrate.receipts import Disclosed, Receipt, message
from ..values import content_sha256
from .core import Commit
from .holds import refuse_held
from .reads import live_keys

if TYPE_CHECKING:
    from .core import Session


def consumer_of(identity: Identity) -> str:
    """Who a call is, as lenses and frames name consumers: ``agent:<id>``, else ``user:<id>``."""
    return identity.actor


def own_namespace(identity: Identity) -> Namespace:
    """Where a consumer's own records live: its agent's scope, else its user's, else the tenant's."""
    for scope in (Scope.AGENT, Scope.USER, Scope.TENANT):
        try:
            return identity.namespace(scope)
        except (IdentityIncomplete, ScopeForbidden):
            continue
    raise ScopeForbidden("this run may read none of its own scopes (agent, user, tenant)")


def wear(session: Session, identity: Identity, lens_ids: Sequence[str] | None, need: Capability | None) -> Worn:
    """The lenses a call wears: those it names (each defined, unexpired, and assigned to the caller
    unless the caller is a principal, an admin), or every lens assigned to it; refused when none
    of them grants ``need``, and otherwise only those that grant it (a capture-only lens worn
    beside a reading one admits nothing to a read)."""
    substrate, tenant, now = session.store.substrate, identity.tenant, session.clock.now()
    consumer = consumer_of(identity)
    defined = {lens.lens_id: lens for lens in substrate.lenses(tenant)}
    assigned = {a.lens_id for a in substrate.assignments(tenant, consumer) if a.assigned}
    if lens_ids is None:
        ids = sorted(i for i in assigned if i in defined and not defined[i].expired(now))
        if not ids:
            raise LensNotWorn(f"no lens is assigned to {consumer}: name the lenses to wear", consumer=consumer)
    else:
        ids = list(dict.fromkeys(texts(lens_ids, "lenses")))
    worn = []
    for lens_id in ids:
        lens = defined.get(lens_id)
        if lens is None:
            raise LensNotFound(f"no lens {lens_id!r} in this tenant", lens_id=lens_id)
        if lens.expired(now):
            raise LensExpired(f"lens {lens_id!r} expired at {lens.expires_at.isoformat()}", lens_id=lens_id)
        if lens_id not in assigned and not identity.admin:
            raise LensNotWorn(f"lens {lens_id!r} is not assigned to {consumer}", lens_id=lens_id, consumer=consumer)
        worn.append(lens)
    found = Worn(tuple(worn), substrate.permission_groups(tenant))
    if need is None:
        return found
    if not found.holding(need):
        raise CapabilityMissing(
            f"none of the worn lenses ({', '.join(found.ids)}) grants {need.value}", capability=need.value
        )
    return found.granting(need)  # a lens that does not grant it takes no part


def read_scopes(identity: Identity, worn: Worn | None, asked: Iterable[str | Scope] | None) -> tuple[Scope, ...]:
    """The scopes a call reads, narrowest first: those asked (default every scope), within the
    worn lenses' scopes, and only those the identity may read."""
    wanted = [Scope.parse(s) for s in asked] if asked is not None else list(SCOPE_ORDER)
    if asked is not None:
        for scope in wanted:
            identity.namespace(scope)  # a scope asked for but not granted is refused, not dropped
    lensed = worn.scopes() if worn is not None else frozenset(SCOPE_ORDER)
    out = []
    for scope in SCOPE_ORDER:
        if scope not in wanted or scope not in lensed:
            continue
        try:
            identity.namespace(scope)
        except (IdentityIncomplete, ScopeForbidden):
            continue
        out.append(scope)
    return tuple(out)


def substrate_items(session: Session, identity: Identity, scopes: Sequence[Scope], as_of: datetime) -> list[Item]:
    """Everything the scopes hold now: the live facts, notes and documents, the current graph
    relations, and the decision traces."""
    out: list[Item] = []
    for scope in scopes:
        ns = identity.namespace(scope)
        out.extend(item_of_fact(state) for state in live_keys(session, ns, as_of, None))
        out.extend(item_of_relation(scope, ns.owner_id, o) for o in session.graph.current_observations(ns, as_of))
        out.extend(item_of_decision(d) for d in session.store.substrate.decisions([ns]))
    # What was captured under a frame is about that frame's task: it holds the frame's tags and
    # intent, as a decision made under it does (how a later, similar frame finds its lessons).
    made_in = {i.frame_id for i in out if i.frame_id and i.plane != "decision"}
    frames = {f.frame_id: f for f in session.store.substrate.frames_by_id(identity.tenant, sorted(made_in))}
    return [with_task(i, frames[i.frame_id]) if i.plane != "decision" and i.frame_id in frames else i for i in out]


def owned_frame(session: Session, identity: Identity, frame_id: str) -> Frame:
    """The newest version of a frame the caller opened (another tenant's frame is not found)."""
    versions = session.store.substrate.frame_versions(identity.tenant, frame_id)
    if not versions:
        raise FrameNotFound(f"no frame {frame_id!r}", frame_id=frame_id)
    frame = versions[-1]
    if frame.consumer != consumer_of(identity):
        raise FrameNotOwned(f"frame {frame_id!r} belongs to another consumer", frame_id=frame_id)
    return frame


def _writable(session: Session, kind: str) -> None:
    if session.store.read_only:  # neither the receipt nor the interaction record could be kept
        raise InvalidInput(f"a {kind} keeps its receipt and its interaction record: open the home for writing")


def ready_to_sign(session: Session) -> None:
    """Refuse now, typed, what ``sign_receipt`` would refuse later (a read-only home, a keyring
    that cannot be read or made): a capture checks before it writes."""
    _writable(session, "capture")
    session.receipts.current()
    _ = session.receipts.issuer


def sign_receipt(
    session: Session,
    identity: Identity,
    kind: str,
    lenses: Sequence[str],
    frame_id: str | None,
    disclosed: Sequence[Disclosed],
) -> Receipt:
    """A receipt of what an answer disclosed, signed with the home's current receipt key."""
    _writable(session, kind)
    keyring = session.receipts
    unsigned = Receipt(
        receipt_id=session.new_id(),
        kind=kind,
        issuer=keyring.issuer,
        tenant=identity.tenant,
        consumer=consumer_of(identity),
        lenses=tuple(lenses),
        frame_id=frame_id,
        issued_at=session.clock.now(),
        store_seq=session.versions.last_seq,
        disclosed=tuple(disclosed),
        key_id="",
    )
    key_id, signature = keyring.sign(lambda key: message(dataclasses.replace(unsigned, key_id=key)))
    return dataclasses.replace(unsigned, key_id=key_id, signature=signature)


def record_answer(
    session: Session,
    identity: Identity,
    kind: str,
    lenses: Sequence[str],
    frame_id: str | None,
    refs: Sequence[str],
    receipt: Receipt | None,
    *,
    query: str | None = None,
    feedback: str | None = None,
    detail: dict | None = None,
) -> Interaction:
    refuse_held(session.store, [own_namespace(identity)])  # the consumer's records are being erased
    interaction = Interaction(
        interaction_id=session.new_id(),
        tenant=identity.tenant,
        consumer=consumer_of(identity),
        kind=kind,
        lenses=tuple(lenses),
        frame_id=frame_id,
        query=query,
        refs=tuple(refs),
        receipt_id=receipt.receipt_id if receipt is not None else None,
        feedback=feedback,
        at=session.clock.now(),
        detail=dict(detail or {}),
    )
    session.store.substrate.record_answer(interaction, receipt)
    return interaction


@dataclass(frozen=True, slots=True)
class RecordWrite:
    """One change of the substrate's versioned records: the records it appends, the key and op
    its audit row names, and its event."""

    namespace: Namespace
    key: str
    op: str
    event_type: str
    entity_type: str
    records: tuple[SubstrateRecord, ...]
    content_sha256: str | None = None
    context: EventContext = NO_CONTEXT
    summary: dict | None = None


def commit_records(session: Session, actor: str, writes: Sequence[RecordWrite]) -> None:
    """Commit record changes in one transaction: per change, an audit row and an event."""
    now = session.clock.now()
    audits, events, records = [], [], []
    for w in writes:
        audits.append(audit_entry(w.namespace, w.key, w.op, (), w.content_sha256, actor, now))
        ns = w.namespace
        events.append(
            record_event(
                session.new_id(),
                w.event_type,
                tenant=ns.tenant,
                scope=ns.scope.value,
                owner_id=ns.owner_id,
                key=w.key,
                actor=actor,
                at=now,
                entity_type=w.entity_type,
                context=w.context,
                summary=w.summary,
            )
        )
        records.extend(w.records)
    session.commit(Commit((), tuple(audits), events=tuple(events), records=tuple(records)))


def decision_write(trace: DecisionTrace) -> RecordWrite:
    """A decision trace's version as a record change (its event: ``decision.recorded``)."""
    body = {"decision": trace.decision, "rationale": trace.rationale, "outcome": trace.outcome}
    return RecordWrite(
        Namespace(trace.tenant, Scope(trace.scope), trace.owner_id),
        f"decision:{trace.decision_id}",
        "decide",
        "decision.recorded",
        DECISION_TYPE,
        (trace,),
        content_sha256(json.dumps(body, sort_keys=True)),
        context=EventContext(trace.lens_id, trace.frame_id, (trace.actor,), trace.inputs),
        summary={"decision": trace.decision, "version": trace.version},
    )


def worker_trace(
    session: Session, namespace: Namespace, actor: str, decision: str, rationale: str, inputs: Sequence[str] = ()
) -> DecisionTrace:
    """A worker's decision, recorded (its ``no_op`` tells restraint apart from never having run)."""
    trace = DecisionTrace(
        decision_id=session.new_id(),
        version=1,
        tenant=namespace.tenant,
        scope=namespace.scope.value,
        owner_id=namespace.owner_id,
        decision=decision,
        rationale=rationale,
        inputs=tuple(inputs),
        outcome=None,
        frame_id=None,
        lens_id=None,
        intent=None,
        tags=(),
        actor=actor,
        recorded_at=session.clock.now(),
    )
    with session.locked():
        commit_records(session, actor, [decision_write(trace)])
    return trace
