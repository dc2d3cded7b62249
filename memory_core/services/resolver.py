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

from datetime import datetime

from ..identity import Namespace
from ..llm import LLMMalformed, LLMRefused, LLMUnavailable
from ..model import FactVersion, Status
from ..resolver.actions import ACTOR, PassReport, ResolverSettings, holds
from ..resolver.fold import Action, PairFacts, Thresholds, fold
from ..resolver.judge import Judge, JudgeRequest, PeerView
from ..session import Session
from ..session.holds import held
from ..session.resolution import apply_pair
from ..session.substrate import worker_trace
from ..substrate.refs import ref
from ..texts import value_text
from .resolver_failures import FailureBook


def mark_new(session: Session, settings: ResolverSettings) -> dict[str, int]:
    versions, now = session.versions, session.clock.now()
    fresh = versions.new_statements(session.ledger.resolver_watermark())
    if not fresh:
        return {"owed": 0, "none": 0}
    marks, counts = [], {"owed": 0, "none": 0}
    texts = [value_text(r.value) for _, r in fresh]
    vectors = session.embedder.embed(texts)  # unit rows: the embedder protocol's promise
    peers = session.peers
    # A peer counts only if it was there when the statement was written: a statement of this
    # batch sees the ones before it, and everything written before the batch.
    later = {row.fact_id: seq for seq, row in fresh}
    for (seq, row), vector in zip(fresh, vectors):
        ns = Namespace(row.tenant, row.scope, row.owner_id)
        config = session.write_config(row.tenant)
        mark, reason = "none", "no peer at the floor"
        if config.tenant.policy.value == "append_only":
            reason = "append_only is never judged"
        elif row.sensitivity == "high" or not config.embedded(row.memory_type):
            reason = "not embedded: never judged"
        elif row.status is Status.CONFLICTED:
            mark, reason = "owed", "a conflict verdict when written"
        else:
            for fact_id, key, cosine in peers.nearest(ns, vector[None, :], settings.floor, 16)[0]:
                peer = versions.fact_state(ns, key, fact_id)
                if later.get(fact_id, 0) < seq and _eligible(peer, row, now):
                    mark, reason = "owed", f"a peer at cosine {cosine:.2f}"
                    break
        counts[mark] += 1
        marks.append((row.fact_id, ns, row.key, row.content_sha256, seq, mark, reason))
    session.ledger.put_marks(marks, max(seq for seq, _ in fresh), now)
    return counts


def _eligible(peer: FactVersion | None, row: FactVersion, now: datetime) -> bool:
    return holds(peer, now) and peer.fact_id != row.fact_id and peer.memory_type == row.memory_type and not peer.pinned


def asserted(session: Session, ns: Namespace, row: FactVersion) -> tuple[datetime, datetime | None]:
    """When the row's value was first asserted, and the date its writer gave it (if any): the
    fact's first version; an explicit valid_at earlier than that moves it back."""
    first = min((r for r in session.versions.history(ns, row.key) if r.fact_id == row.fact_id), key=lambda r: r.version)
    dated = first.valid_at if abs((first.valid_at - first.created_at).total_seconds()) >= 1 else None
    return (min(first.created_at, dated) if dated else first.created_at), dated


def cluster(session: Session, row: FactVersion, settings: ResolverSettings) -> list[tuple[FactVersion, float]]:
    """Up to ``max_peers`` peers in the row's own namespace: its current flags first, then the
    nearest live peers of its type at the floor. Never a high or a pinned row."""
    versions, now = session.versions, session.clock.now()
    ns = Namespace(row.tenant, row.scope, row.owner_id)
    vector = session.embedder.embed([value_text(row.value)])[0]
    states = {s.fact_id: s for group in versions.namespace_states(ns).values() for s in group}
    out: list[tuple[FactVersion, float]] = []
    flags = [
        p
        for p in (states.get(f) for f in row.conflict_with)
        if holds(p, now) and p.fact_id != row.fact_id and not p.pinned
    ]  # a flag counts whatever its type
    if flags:
        cosines = session.embedder.embed([value_text(p.value) for p in flags]) @ vector
        out.extend((peer, float(cos)) for peer, cos in zip(flags, cosines))
    seen = {p.fact_id for p, _ in out}
    for fact_id, _key, cosine in session.peers.nearest(ns, vector[None, :], settings.floor, 32)[0]:
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


def run_pass(session: Session, judge: Judge, settings: ResolverSettings | None = None) -> PassReport:
    settings = settings or ResolverSettings()
    versions, ledger = session.versions, session.ledger
    report = PassReport()
    report.marked = mark_new(session, settings)
    book = FailureBook(session, settings, report)
    erasing = ledger.tenants_under_erasure()
    book.drop_stale(erasing)
    for mark in ledger.owed_marks(settings.batch, skip_tenants=erasing, paused_at=session.clock.now()):
        now = session.clock.now()
        ns = mark.namespace
        if ns in book.paused:
            continue  # paused by this pass: the namespace's rows stay owed
        row = versions.fact_state(ns, mark.key, mark.fact_id)
        config = session.write_config(ns.tenant).tenant
        if (
            not holds(row, now)
            or row.content_sha256 != mark.content_sha256
            or row.pinned
            or config.policy.value == "append_only"
        ):
            ledger.stamp(mark.fact_id, "judged", now)  # gone, revised, pinned or never judged: nothing to do
            report.judged += 1
            continue
        peers = cluster(session, row, settings)
        if not peers:
            ledger.stamp(mark.fact_id, "judged", now)
            report.judged += 1
            continue
        cap = config.daily_cost_cap_usd
        if (
            ledger.spend(ns, now.date(), "resolver") >= cap * config.resolver_cap_share
            or ledger.spend(ns, now.date()) >= cap
        ):
            report.capped += 1  # stays owed, judged another day
            continue
        request = _request(session, ns, row, peers)
        try:
            answer = judge.judge(request)
        except (LLMUnavailable, LLMRefused, LLMMalformed) as exc:
            if book.failed(mark, exc):
                break
            continue
        book.answered(ns)
        if answer.usage is not None:
            ledger.add_spend(ns, now.date(), "resolver", answer.usage.cost_usd)
        judged_by_peer = {j.peer: j for j in answer.judgements}
        thresholds = Thresholds(
            config.resolver_retire_confidence, config.resolver_flag_confidence, config.resolver_clear_confidence
        )
        for peer, _ in peers:
            judgement = judged_by_peer.get(peer.fact_id)
            if judgement is None:
                continue  # a peer the answer leaves out changes nothing
            action = act(
                session,
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
        if ledger.erasure_under_way(ns.tenant) or held(session.store, ns):
            continue  # nothing may be written there: the row stays owed
        if any(_flagged(row, p) and p.fact_id not in judged_by_peer for p, _ in peers):
            book.unjudged_flag(mark)  # the flag must be judged some day: the row stays owed
            continue
        ledger.stamp(mark.fact_id, "judged", session.clock.now())
        report.judged += 1
    book.close()
    return report


def _flagged(row: FactVersion, peer: FactVersion) -> bool:
    return peer.fact_id in row.conflict_with or row.fact_id in peer.conflict_with


def _request(session: Session, ns: Namespace, row: FactVersion, peers) -> JudgeRequest:
    views = []
    for i, (peer, cosine) in enumerate(peers, start=1):
        when, _ = asserted(session, ns, peer)
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
    when, _ = asserted(session, ns, row)
    return JudgeRequest(row.key, value_text(row.value), when.date().isoformat(), tuple(views))


def act(
    session: Session,
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
    """Re-read both rows under the session's lock and commit the fold's action in one write."""
    versions = session.versions
    with session.locked():
        now = session.clock.now()
        row, peer = versions.fact_state(ns, key, fact_id), versions.fact_state(ns, peer_key, peer_id)
        if session.ledger.erasure_under_way(ns.tenant) or held(session.store, ns):
            return Action("nothing", "an erasure is under way in the scope")  # nothing may be written there
        if not (holds(row, now) and holds(peer, now)) or row.content_sha256 != sha or row.pinned or peer.pinned:
            return Action("nothing", "a row changed, retired or was pinned since it was read")
        row_at, row_dated = asserted(session, ns, row)
        peer_at, peer_dated = asserted(session, ns, peer)
        flagged = peer.fact_id in row.conflict_with or row.fact_id in peer.conflict_with
        action = fold(judgement, PairFacts(row_at, peer_at, row_dated, peer_dated, flagged), policy, thresholds)
        if action.kind == "retire" and peer.locked:
            action = Action("flag", "update, but the peer is locked: a lock refuses retirement")
        reason = judgement.reason
        written = apply_pair(
            session, ns, row, peer, action, ACTOR, judgement.verdict, judgement.confidence, judge_name, now, reason
        )
    if not written:
        # Judged and left as it was: a trace, so restraint reads apart from a resolver that never ran.
        judged = f"judged {judgement.verdict} ({judgement.confidence:.2f})"
        why = f"{judged}: {action.kind}, nothing to change; {action.why}"
        worker_trace(session, ns, ACTOR, "no_op", why, (ref("fact", fact_id), ref("fact", peer_id)))
    return action


class ResolverService:
    """One conflict-resolver pass over the home (``Memory.resolve``)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def run_pass(self, judge: Judge, settings: ResolverSettings | None = None) -> PassReport:
        return run_pass(self.session, judge, settings)
