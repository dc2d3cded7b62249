"""The named phases of a point write. Each is a pure function of the state (and what the
orchestrator fetched for it); each refusal is a typed error raised before anything is written.

resolve_type -> fetch_live -> guard -> expiry -> prepare -> preconditions -> build_rows ->
[non-embedded rows stop] -> embed -> peer_verdict -> verdict_rows -> (dry run) -> write -> after-write
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Sequence

from ..clock import IdFactory
from ..errors import (
    Blacklisted,
    CharLimitExceeded,
    KeyHoldsFact,
    Locked,
    PinnedConflict,
    PreconditionFailed,
    SourceClassRefused,
)
from ..model import CALLER_SOURCE_CLASSES, VISIBLE_STATUSES, FactVersion, Kind, Op, Status, sensitivity_rank
from ..temporal import live_at
from ..texts import value_text
from ..timeline import FactState, plan_statement
from ..values import content_sha256
from . import sensitivity as sensitivity_rules
from .request import SetRequest, SetState
from .tenant_config import Policy, TenantConfig, TypeConfig, resolve_threshold
from .verdicts import Candidate, Peer, decide


def resolve_type(state: SetState) -> SetState:
    """A tenant's type configuration may write a type as another; the answer names retyped_from."""
    asked = state.request.memory_type
    target = state.config.type(asked).retype_to
    memory_type = target or asked
    return dataclasses.replace(
        state,
        memory_type=memory_type,
        retyped_from=asked if target else None,
        type_config=state.config.type(memory_type),
    )


def fetch_live(state: SetState, states: Sequence[FactVersion]) -> SetState:
    """Take the key's facts (read by the orchestrator) and find the one live now."""
    now = state.request.now
    # The fact a reader sees now: any served status (a superseded fact whose interval still
    # covers now is the current truth until its end).
    live = [
        s
        for s in states
        if s.status.value in VISIBLE_STATUSES and live_at(s.valid_at, s.invalid_at, now) and not s.expired(now)
    ]
    head = max((s.version for s in states), default=0)
    created = max([now, *(s.created_at for s in states)])  # transaction time never runs backwards for a key
    return dataclasses.replace(
        state, states=tuple(states), head_version=head, live=live[0] if live else None, created_at=created
    )


def _visible(state: SetState) -> list[FactVersion]:
    now = state.request.now
    return [s for s in state.states if s.status.value in VISIBLE_STATUSES and not s.expired(now)]


def check_live(state: SetState, live: Sequence[FactVersion]) -> SetState:
    """The phases between reading the key's live facts and building rows, in their order."""
    return preconditions(prepare(expiry(guard(fetch_live(state, live)))))


def guard(state: SetState) -> SetState:
    """Restatement, or a change: a change meets the lock (423), then the pin (409)."""
    r = state.request
    visible = _visible(state)
    sha = content_sha256(r.value_json)
    plan = plan_statement(
        [FactState(s.fact_id, s.content_sha256, s.valid_at, s.invalid_at) for s in visible],
        sha,
        r.valid_at,
        r.invalid_at,
        r.invalid_at_given,
    )
    if plan.restates is None:
        touched = {fid for fid, _ in plan.closes}
        changed = [s for s in visible if s.fact_id in touched]
        if any(s.locked for s in changed):
            raise Locked(f"key {r.key!r} is locked; unlock it before changing its value", key=r.key)
        if any(s.pinned for s in changed) and not r.pin:
            raise PinnedConflict(
                f"key {r.key!r} is pinned; write with pin=true to change it, or unpin it first", key=r.key
            )
    return dataclasses.replace(state, plan=plan, content_sha256=sha)


def expiry_window(r: SetRequest, type_config: TypeConfig, tenant: TenantConfig) -> tuple[datetime | None, str]:
    """ttl_seconds and the type's or the tenant's retention become expires_at (the earliest wins)."""
    candidates = []
    if r.ttl_seconds is not None:
        candidates.append(r.now + timedelta(seconds=r.ttl_seconds))
    for days in (type_config.retention_days, tenant.retention_days):
        if days is not None:
            candidates.append(r.now + timedelta(days=days))
    return (min(candidates) if candidates else None), (r.on_expire or type_config.on_expire)


def expiry(state: SetState) -> SetState:
    """The expiry window; a restatement keeps the stored one unless the write sets its own, and a
    locked fact's expiry may not move (423)."""
    r = state.request
    expires_at, on_expire = expiry_window(r, state.type_config, state.config.tenant)
    if state.restatement:
        prior = next(s for s in state.states if s.fact_id == state.plan.restates)
        if r.ttl_seconds is None and expires_at is None:
            expires_at, on_expire = prior.expires_at, prior.on_expire
        if prior.locked and expires_at != prior.expires_at:
            raise Locked(f"key {r.key!r} is locked; its expiry cannot move", key=r.key, refused_action="expire")
    return dataclasses.replace(state, expires_at=expires_at, on_expire=on_expire)


@dataclass(frozen=True, slots=True)
class Prepared:
    text: str
    sensitivity: str
    expires_at: datetime | None
    source_class: str


def check_value(r: SetRequest, tenant: TenantConfig, expires_at: datetime | None) -> Prepared:
    """The char limit (422), the blacklist (422), the sensitivity tier and its retention, and the
    source class (a caller may only downgrade it)."""
    if len(r.value_json) > tenant.char_limit:
        raise CharLimitExceeded(
            f"value is {len(r.value_json)} characters as JSON; the limit is {tenant.char_limit}",
            limit=tenant.char_limit,
            length=len(r.value_json),
        )
    text = value_text(r.value)
    number = tenant.matcher.first_match(text)  # RE2: linear in the text, never backtracks
    if number is not None:
        raise Blacklisted(
            f"value matches blacklist pattern #{number} of this tenant; nothing was written", pattern_index=number
        )
    tier = sensitivity_rules.tier(r.sensitivity, text)
    if tier == "high" and tenant.sensitive_retention_days is not None:
        sensitive_end = r.now + timedelta(days=tenant.sensitive_retention_days)
        expires_at = sensitive_end if expires_at is None else min(expires_at, sensitive_end)
    source_class = "stated"
    if r.source_class is not None:
        if r.source_class not in CALLER_SOURCE_CLASSES:
            raise SourceClassRefused(
                f"source_class may only be downgraded to one of {', '.join(CALLER_SOURCE_CLASSES)}; "
                f"got {r.source_class!r}",
                field="source_class",
            )
        source_class = r.source_class
    return Prepared(text, tier, expires_at, source_class)


def prepare(state: SetState) -> SetState:
    p = check_value(state.request, state.config.tenant, state.expires_at)
    return dataclasses.replace(
        state, value_text=p.text, sensitivity=p.sensitivity, expires_at=p.expires_at, source_class=p.source_class
    )


def preconditions(state: SetState) -> SetState:
    """A proposal may not overwrite an established fact (409); if_match_sha256 must match (409)."""
    r = state.request
    if r.proposed and not state.restatement:
        touched = {fid for fid, _ in state.plan.closes}
        if any(s.fact_id in touched and s.status is not Status.PROPOSED for s in state.states):
            raise KeyHoldsFact(f"key {r.key!r} holds an established fact; a proposal may not overwrite it", key=r.key)
    if r.if_match_sha256 is not None:
        current = state.live.content_sha256 if state.live else None
        if current != r.if_match_sha256:
            raise PreconditionFailed(
                f"key {r.key!r} does not hold the value with the given sha256"
                + ("" if current else " (it holds no live value)"),
                key=r.key,
            )
    return state


def build_rows(state: SetState, new_id: IdFactory) -> SetState:
    """The key's version rows: a restatement of the live fact, or a new fact closing what it replaces."""
    r, plan, created = state.request, state.plan, state.created_at
    by_fact = {s.fact_id: s for s in state.states}
    change_id = new_id()
    version = state.head_version + 1
    actor = r.provenance.actor
    if plan.restates is not None:
        prior = by_fact[plan.restates]
        status = prior.status
        if status is Status.PROPOSED and not r.proposed:
            status = Status.ACTIVE  # an unconditional statement of a proposal establishes it
        row = dataclasses.replace(
            prior,
            id=new_id(),
            op=Op.RESTATE,
            version=version,
            change_id=change_id,
            created_at=created,
            reinforcement_count=prior.reinforcement_count + (1 if r.reinforce else 0),
            changed_by=actor,
            observed_at=r.observed_at or prior.observed_at,
            status=status,
            pinned=prior.pinned or r.pin,
            expires_at=state.expires_at,
            on_expire=state.on_expire,
            sensitivity=max(prior.sensitivity, state.sensitivity, key=sensitivity_rank),
            relations=r.relations or prior.relations,  # a restatement naming its facts names them anew
        )
        return dataclasses.replace(state, rows=(row,))
    new_row_id = new_id()
    rows: list[FactVersion] = []
    for fact_id, end in plan.closes:
        prior = by_fact[fact_id]
        rows.append(
            dataclasses.replace(
                prior,
                id=new_id(),
                status=Status.SUPERSEDED,
                op=Op.SUPERSEDE,
                version=version + len(rows),
                change_id=change_id,
                invalid_at=end,
                superseded_by=new_row_id,
                created_at=created,
                changed_by=actor,
            )
        )
    rows.append(
        new_fact_row(
            r,
            new_row_id,
            state.memory_type,
            state.content_sha256,
            version + len(rows),
            change_id,
            created,
            state.on_expire,
            Prepared(state.value_text, state.sensitivity, state.expires_at, state.source_class),
        )
    )
    return dataclasses.replace(state, rows=tuple(rows))


def new_fact_row(
    r: SetRequest,
    row_id: str,
    memory_type: str,
    sha: str,
    version: int,
    change_id: str,
    created: datetime,
    on_expire: str,
    p: Prepared,
) -> FactVersion:
    """The first row of a new fact."""
    return FactVersion(
        id=row_id,
        fact_id=row_id,
        tenant=r.namespace.tenant,
        scope=r.namespace.scope,
        owner_id=r.namespace.owner_id,
        key=r.key,
        value_json=r.value_json,
        content_sha256=sha,
        kind=r.kind,
        memory_type=memory_type,
        status=Status.PROPOSED if r.proposed else Status.ACTIVE,
        op=Op.SET,
        version=version,
        change_id=change_id,
        observed_at=r.observed_at,
        valid_at=r.valid_at,
        invalid_at=r.invalid_at,
        created_at=created,
        superseded_by=None,
        reinforcement_count=0,
        provenance=r.provenance,
        changed_by=r.provenance.actor,
        subject=r.subject,
        index_context=r.context,
        source_class=p.source_class,
        sensitivity=p.sensitivity,
        expires_at=p.expires_at,
        on_expire=on_expire,
        pinned=r.pin,
        confidence=1.0 if r.confidence is None else r.confidence,
        relations=r.relations,
    )


def embedded(state: SetState) -> bool:
    """Non-embedded types and high rows stop before the embedder: no vector, no index row."""
    return is_embedded(state.type_config, state.sensitivity)


def is_embedded(type_config: TypeConfig, sensitivity: str) -> bool:
    return type_config.embedded and sensitivity != "high"


def needs_peer_check(state: SetState) -> bool:
    """Only a new fact (not a note or document, not a restatement) is judged against peers."""
    return embedded(state) and not state.restatement and peer_checked_kind(state.request.kind, state.config.tenant)


def peer_checked_kind(kind: Kind, tenant: TenantConfig) -> bool:
    return kind is Kind.FACT and tenant.policy is not Policy.APPEND_ONLY


def peer_of(fact: FactVersion | None, state: SetState, cosine: float) -> Peer | None:
    """``fact`` as a peer of the write ``state`` is judging, if it may be one."""
    r = state.request
    if fact is None or not eligible_peer(fact, r.key, state.memory_type, r.now):
        return None
    return Peer(fact.fact_id, fact.key, value_text(fact.value), cosine, fact.valid_at, fact.pinned, fact.locked)


def eligible_peer(state: FactVersion, key: str, memory_type: str, now) -> bool:
    """A live, served, unexpired fact of the same type under another key, never a high one."""
    return (
        state.key != key
        and state.memory_type == memory_type
        and state.status in (Status.ACTIVE, Status.CONFLICTED, Status.SUPERSEDED)
        and state.sensitivity != "high"
        and live_at(state.valid_at, state.invalid_at, now)
        and not state.expired(now)
        and state.op is not Op.EXPIRE
    )


def peer_verdict(state: SetState, peers: Sequence[Peer], embedder_calibration: float | None) -> SetState:
    tenant = state.config.tenant
    threshold = resolve_threshold(state.type_config, tenant, embedder_calibration)
    candidate = Candidate(state.value_text, state.request.valid_at, state.type_config.key_identified)
    verdict = decide(
        candidate,
        peers,
        threshold=threshold.value,
        duplicate_threshold=max(threshold.value, tenant.duplicate_threshold),
        policy=tenant.policy,
    )
    if verdict.kind == "rejected":
        # The message names no peer: the writer learns only that a pinned fact stands in the way.
        raise PinnedConflict(
            "a pinned fact of this scope says something close; the write was refused", verdict="rejected"
        )
    return dataclasses.replace(state, threshold=threshold, verdict=verdict)
