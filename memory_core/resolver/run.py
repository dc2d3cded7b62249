"""A resolver pass: mark new statements, judge the owed ones, act on the verdicts.

Marking reads the statements appended since the resolver's watermark (a fact's first version:
in this store a changed value is a new fact, so a revision brings its own mark). A statement is
owed when it was flagged conflicted when written or had a live peer at the resolver floor when
it was written (a peer written after it does not count: that one is judged from its own mark); an
append_only tenant's, a high one's and an unembedded type's are not. Judging takes owed rows in
turns across namespaces, builds each row's cluster inside its own namespace (a user's rows, or
an agent's: no other user's text reaches a prompt), checks the cost cap before every call, and
acts under the store's lock after re-reading both rows: a row changed since it was read is left
to its own mark, so no user write is lost to a resolver write. Every action is one audited
write; a retirement is a supersede ``restore`` undoes, recorded in ``resolver_records``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from ..identity import Namespace
from ..llm.port import LLMMalformed, LLMRefused, LLMUnavailable
from ..model import FactVersion, Op, Status
from ..projection import value_text
from ..store.port import KeyChange, WriteBatch
from ..write.point import after_write, audit_entry
from .fold import Action, PairFacts, Thresholds, fold
from .judge import Judge, JudgeRequest, PeerView

if TYPE_CHECKING:
    from ..api import Memory

ACTOR = "worker:conflict-resolver"
_LIVE = (Status.ACTIVE, Status.CONFLICTED)


@dataclass(frozen=True)
class ResolverSettings:
    floor: float = 0.60
    max_peers: int = 8
    batch: int = 40
    outage_streak: int = 3  # the same transient failure this many rows in a row stops the pass


@dataclass
class PassReport:
    marked: dict[str, int] = field(default_factory=lambda: {"owed": 0, "none": 0})
    judged: int = 0
    errored: int = 0
    capped: int = 0  # rows left owed because their namespace reached its spend share
    left_owed: int = 0  # transient failures
    stopped: str | None = None
    actions: dict[str, int] = field(default_factory=lambda: {"retire": 0, "flag": 0, "clear": 0, "nothing": 0})

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def holds(row: FactVersion | None, now: datetime) -> bool:
    return row is not None and row.status in _LIVE and not row.expired(now) and row.sensitivity != "high"


def mark_new(memory: "Memory", settings: ResolverSettings) -> dict[str, int]:
    store, now = memory.store, memory.clock.now()
    fresh = store.new_statements(store.resolver_watermark())
    if not fresh:
        return {"owed": 0, "none": 0}
    marks, counts = [], {"owed": 0, "none": 0}
    texts = [value_text(r.value) for _, r in fresh]
    vectors = memory.embedder.embed(texts)  # unit rows: the embedder protocol's promise
    peers = memory._peer_vectors()
    # A peer counts only if it was there when the statement was written: a statement of this
    # batch sees the ones before it, and everything written before the batch.
    later = {row.fact_id: seq for seq, row in fresh}
    for (seq, row), vector in zip(fresh, vectors):
        ns = Namespace(row.tenant, row.scope, row.owner_id)
        config = memory.write_config(row.tenant)
        mark, reason = "none", "no peer at the floor"
        if config.tenant.policy.value == "append_only":
            reason = "append_only is never judged"
        elif row.sensitivity == "high" or not config.embedded(row.memory_type):
            reason = "not embedded: never judged"
        elif row.status is Status.CONFLICTED:
            mark, reason = "owed", "a conflict verdict when written"
        else:
            for fact_id, key, cosine in peers.nearest(ns, vector[None, :], settings.floor, 16)[0]:
                peer = store.fact_state(ns, key, fact_id)
                if later.get(fact_id, 0) < seq and _eligible(peer, row, now):
                    mark, reason = "owed", f"a peer at cosine {cosine:.2f}"
                    break
        counts[mark] += 1
        marks.append((row.fact_id, ns, row.key, row.content_sha256, seq, mark, reason))
    store.put_marks(marks, max(seq for seq, _ in fresh), now)
    return counts


def _eligible(peer: FactVersion | None, row: FactVersion, now: datetime) -> bool:
    return holds(peer, now) and peer.fact_id != row.fact_id and peer.memory_type == row.memory_type and not peer.pinned


def asserted(memory: "Memory", ns: Namespace, row: FactVersion) -> tuple[datetime, datetime | None]:
    """When the row's value was first asserted, and the date its writer gave it (if any): the
    fact's first version; an explicit valid_at earlier than that moves it back."""
    first = min((r for r in memory.store.history(ns, row.key) if r.fact_id == row.fact_id), key=lambda r: r.version)
    dated = first.valid_at if abs((first.valid_at - first.created_at).total_seconds()) >= 1 else None
    return (min(first.created_at, dated) if dated else first.created_at), dated


def cluster(memory: "Memory", row: FactVersion, settings: ResolverSettings) -> list[tuple[FactVersion, float]]:
    """Up to ``max_peers`` peers in the row's own namespace: its current flags first, then the
    nearest live peers of its type at the floor. Never a high or a pinned row."""
    store, now = memory.store, memory.clock.now()
    ns = Namespace(row.tenant, row.scope, row.owner_id)
    vector = memory.embedder.embed([value_text(row.value)])[0]
    states = {s.fact_id: s for group in store.namespace_states(ns).values() for s in group}
    out: list[tuple[FactVersion, float]] = []
    flags = [
        p
        for p in (states.get(f) for f in row.conflict_with)
        if holds(p, now) and p.fact_id != row.fact_id and not p.pinned
    ]  # a flag counts whatever its type
    if flags:
        cosines = memory.embedder.embed([value_text(p.value) for p in flags]) @ vector
        out.extend((peer, float(cos)) for peer, cos in zip(flags, cosines))
    seen = {p.fact_id for p, _ in out}
    for fact_id, _key, cosine in memory._peer_vectors().nearest(ns, vector[None, :], settings.floor, 32)[0]:
        peer = states.get(fact_id)
        if fact_id not in seen and _eligible(peer, row, now):
            out.append((peer, cosine))
            seen.add(fact_id)
    return out[: settings.max_peers]


def _origin(row: FactVersion, peer: FactVersion) -> str:
    if peer.provenance.session and peer.provenance.session == row.provenance.session:
        return "same session"
    if peer.provenance.agent and peer.provenance.agent == row.provenance.agent:
        return "another session of the agent"
    return "another agent"


def run_pass(memory: "Memory", judge: Judge, settings: ResolverSettings | None = None) -> PassReport:
    settings = settings or ResolverSettings()
    store = memory.store
    report = PassReport()
    report.marked = mark_new(memory, settings)
    streak: tuple[str, int] = ("", 0)
    for mark in store.owed_marks(settings.batch, skip_tenants=store.tenants_under_erasure()):
        now = memory.clock.now()
        ns = mark.namespace
        row = store.fact_state(ns, mark.key, mark.fact_id)
        config = memory.write_config(ns.tenant).tenant
        if (
            not holds(row, now)
            or row.content_sha256 != mark.content_sha256
            or row.pinned
            or config.policy.value == "append_only"
        ):
            store.stamp(mark.fact_id, "judged", now)  # gone, revised, pinned or never judged: nothing to do
            report.judged += 1
            continue
        peers = cluster(memory, row, settings)
        if not peers:
            store.stamp(mark.fact_id, "judged", now)
            report.judged += 1
            continue
        cap = config.daily_cost_cap_usd
        if (
            store.spend(ns, now.date(), "resolver") >= cap * config.resolver_cap_share
            or store.spend(ns, now.date()) >= cap
        ):
            report.capped += 1  # stays owed, judged another day
            continue
        request = _request(memory, ns, row, peers)
        try:
            answer = judge.judge(request)
        except LLMUnavailable as exc:
            kind = exc.message.split("(")[-1][:40]
            streak = (kind, streak[1] + 1 if streak[0] == kind else 1)
            report.left_owed += 1
            if streak[1] >= settings.outage_streak:
                report.stopped = f"the same transient failure {streak[1]} rows in a row: {exc.message}"
                break
            continue
        except LLMRefused:
            store.stamp(mark.fact_id, "errored", now, errored=True)
            report.errored += 1
            continue
        except LLMMalformed:
            store.stamp(mark.fact_id, "errored", now, errored=True, attempt=True)
            report.errored += 1
            continue
        streak = ("", 0)
        if answer.usage is not None:
            store.add_spend(ns, now.date(), "resolver", answer.usage.cost_usd)
        judged_by_peer = {j.peer: j for j in answer.judgements}
        thresholds = Thresholds(
            config.resolver_retire_confidence, config.resolver_flag_confidence, config.resolver_clear_confidence
        )
        for peer, _ in peers:
            judgement = judged_by_peer.get(peer.fact_id)
            if judgement is None:
                continue  # a peer the answer leaves out changes nothing
            action = act(
                memory,
                ns,
                row.fact_id,
                row.key,
                mark.content_sha256,
                peer.fact_id,
                peer.key,
                judgement,
                config.policy.value,
                thresholds,
                judge.name,
            )
            report.actions[action.kind] += 1
        if not store.erasure_under_way(ns.tenant):
            store.stamp(mark.fact_id, "judged", memory.clock.now())
            report.judged += 1
    return report


def _request(memory: "Memory", ns: Namespace, row: FactVersion, peers) -> JudgeRequest:
    views = []
    for i, (peer, cosine) in enumerate(peers, start=1):
        when, _ = asserted(memory, ns, peer)
        views.append(
            PeerView(
                f"p{i}",
                peer.fact_id,
                peer.key,
                value_text(peer.value),
                cosine,
                when.date().isoformat(),
                _origin(row, peer),
            )
        )
    when, _ = asserted(memory, ns, row)
    return JudgeRequest(row.key, value_text(row.value), when.date().isoformat(), tuple(views))


def act(
    memory: "Memory",
    ns: Namespace,
    fact_id: str,
    key: str,
    sha: str,
    peer_id: str,
    peer_key: str,
    judgement,
    policy: str,
    thresholds: Thresholds,
    judge_name: str,
) -> Action:
    """Re-read both rows under the store's lock and apply the fold's action in one write."""
    store = memory.store
    with store.locked():
        now = memory.clock.now()
        row, peer = store.fact_state(ns, key, fact_id), store.fact_state(ns, peer_key, peer_id)
        if store.erasure_under_way(ns.tenant):
            return Action("nothing", "an erasure is under way in the tenant")
        if not (holds(row, now) and holds(peer, now)) or row.content_sha256 != sha or row.pinned or peer.pinned:
            return Action("nothing", "a row changed, retired or was pinned since it was read")
        row_at, row_dated = asserted(memory, ns, row)
        peer_at, peer_dated = asserted(memory, ns, peer)
        flagged = peer.fact_id in row.conflict_with or row.fact_id in peer.conflict_with
        action = fold(judgement, PairFacts(row_at, peer_at, row_dated, peer_dated, flagged), policy, thresholds)
        if action.kind == "retire" and peer.locked:
            action = Action("flag", "update, but the peer is locked: a lock refuses retirement")
        rows = apply_pair(
            memory,
            ns,
            row,
            peer,
            action,
            ACTOR,
            judgement.verdict,
            judgement.confidence,
            judge_name,
            now,
            judgement.reason,
        )
    if rows:
        after_write(memory.write_context(), ns, rows, {})
    return action


def apply_pair(
    memory: "Memory",
    ns: Namespace,
    row: FactVersion,
    peer: FactVersion,
    action: Action,
    actor: str,
    verdict: str,
    confidence: float,
    judge: str,
    now: datetime,
    reason: str = "",
) -> list[FactVersion]:
    """Write one action on a pair (the caller holds the store's lock and has re-read both rows):
    the rows, one hash-only audit row, one resolver record."""
    store = memory.store
    rows = _rows(store, ns, row, peer, action, now, memory._new_id(), actor)
    if not rows:
        return []
    audit = audit_entry(ns, row.key, "conflict_resolver", rows, None, actor, now)
    by_key: dict[str, list[FactVersion]] = {}
    for r in rows:
        by_key.setdefault(r.key, []).append(r)
    store.apply(WriteBatch(tuple(KeyChange(ns, k, tuple(v)) for k, v in by_key.items()), (audit,)))
    store.record_resolution(
        {
            "record_id": memory._new_id(),
            "tenant": ns.tenant,
            "scope": ns.scope.value,
            "owner_id": ns.owner_id,
            "action": action.kind,
            "judged_fact": row.fact_id,
            "peer_fact": peer.fact_id,
            "peer_key": peer.key,
            "verdict": verdict,
            "confidence": confidence,
            "judge": judge,
            "recorded_at": now,
            "reason": reason[:300],
        }
    )
    return rows


def _rows(
    store,
    ns: Namespace,
    row: FactVersion,
    peer: FactVersion,
    action: Action,
    now: datetime,
    change_id: str,
    actor: str = ACTOR,
) -> list[FactVersion]:
    versions: dict[str, int] = {}

    def next_version(key: str) -> int:
        head = store.head(ns, key)
        versions[key] = versions.get(key, head.version if head else 0) + 1
        return versions[key]

    def changed(state: FactVersion, **changes) -> FactVersion:
        return dataclasses.replace(
            state,
            id=f"{change_id[:16]}{state.fact_id[:16]}",
            version=next_version(state.key),
            change_id=change_id,
            created_at=max(now, state.created_at + timedelta(microseconds=1)),
            changed_by=actor,
            **changes,
        )

    def without(state: FactVersion, other: str) -> FactVersion:
        left = tuple(f for f in state.conflict_with if f != other)
        return changed(state, op=Op.FLAG, conflict_with=left, status=Status.CONFLICTED if left else Status.ACTIVE)

    if action.kind == "retire":
        end = max(row.valid_at, peer.valid_at)
        if peer.invalid_at is not None:
            end = min(end, peer.invalid_at)
        out = [
            changed(
                peer,
                op=Op.SUPERSEDE,
                status=Status.SUPERSEDED,
                superseded_by=row.id,
                invalid_at=end,
                conflict_with=tuple(f for f in peer.conflict_with if f != row.fact_id),
            )
        ]
        if peer.fact_id in row.conflict_with:  # the winner does not stay flagged against a retired row
            out.append(without(row, peer.fact_id))
        return out
    if action.kind == "flag":
        if peer.fact_id in row.conflict_with and row.fact_id in peer.conflict_with:
            return []  # already flagged: acting twice changes nothing
        return [
            changed(
                s, op=Op.FLAG, status=Status.CONFLICTED, conflict_with=tuple(dict.fromkeys((*s.conflict_with, other)))
            )
            for s, other in ((row, peer.fact_id), (peer, row.fact_id))
        ]
    if action.kind == "clear":
        return [
            without(s, other) for s, other in ((row, peer.fact_id), (peer, row.fact_id)) if other in s.conflict_with
        ]
    return []
