"""Dreams (``MemoryTool.dream``, ``dream_approve``, ``dream_reject``): a retrospective pass over
one namespace that proposes and never writes memory, and the reviewer's decision on each
proposal, which is where memory changes.

A pass reads the live facts (less the rows an approved proposal wrote), the window's events
(less those of approved proposals), the recalls of the window and the decision traces with their
outcomes (less the worker's own), decides with ``dreams.propose``, and queues each proposal not
made before (``DreamsStore``) beside an ``escalate`` trace by ``worker:dreams`` naming its
targets; a pass with nothing new writes a ``no_op`` trace. Approval re-reads the targets under
the store's lock: all as read, the change is committed through the write paths its kind already
has (consolidation's merge plan, the resolver's pair retirement, a delete's tombstone, ``set``)
with the proposal in every row's provenance; any changed, nothing is written and the proposal
goes stale. Each decision is also the outcome of the proposal's trace.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from functools import partial
from typing import Callable, Sequence

import numpy as np

from ..audit import audit_entry
from ..consolidation import MergeAnswer, RuleMerger
from ..consolidation.clusters import excluded
from ..consolidation.model import MERGED
from ..consolidation.plan import ClusterPlan, plan_merge
from ..dreams import model as dm
from ..dreams.apply import FACT_PLANES, age_out_row, changed_targets, stamped, with_words, without_words
from ..dreams.model import Draft, DreamPass, DreamProposal, DreamSettings, dreamt, dreamt_event, tag
from ..dreams.propose import age_out_drafts, merge_drafts, merge_request, procedure_drafts, retire_drafts
from ..errors import InvalidInput, NotFound, PreconditionFailed, WrongState
from ..identity import Namespace, Scope
from ..inputs import text
from ..model import FactVersion, Provenance
from ..resolver.actions import pair_rows, resolution_record
from ..resolver.fold import Action
from ..session import Commit, RunService
from ..session.core import key_changes
from ..session.holds import refuse_held
from ..session.point import run_set
from ..session.substrate import commit_records, decision_write, worker_trace
from ..substrate.decisions import with_outcome
from ..substrate.events import EventContext, StateChange
from ..texts import value_text
from ..write.options import SetOptions
from ..write.settle import request_of

PAGE = 1000  # events read per page of the window


class DreamsService(RunService):
    # -- the pass ----------------------------------------------------------------------------------
    def run_pass(self, *, scope: str | Scope, settings: DreamSettings) -> DreamPass:
        session, ns = self.session, self.identity.namespace(scope)
        session.refuse_read_only("a dreams pass queues its proposals and records its decisions")
        refuse_held(session.store, [ns])
        end = session.clock.now()
        start = end - timedelta(days=settings.window_days)
        live = [
            s
            for group in session.versions.namespace_states(ns).values()
            for s in group
            if s.live and not s.expired(end)
        ]
        facts = [s for s in live if not dreamt(s)]  # never a proposal from Dreams' own output
        events = self._window_events(ns, start)
        recalled = {r.split(":", 1)[1] for r in session.store.dreams.surfaced_since(ns.tenant, start)}
        traces = [t for t in session.store.substrate.decisions([ns]) if t.actor != dm.ACTOR]
        drafts = self._merges(ns, facts, end, settings)
        drafts += retire_drafts(facts, session.ledger.resolver_records(ns), end)
        named = {t.ident for d in drafts for t in d.targets}
        touched = {f.fact_id for e in events for f in e.facts}
        drafts += age_out_drafts(facts, touched | recalled, end, settings, named)
        drafts += procedure_drafts(traces, partial(self._head, ns), partial(self._noted, ns), settings, start, end)
        pass_id = "dp-" + session.new_id()[:16]
        known, queued = session.store.dreams.known(ns), []
        for draft in drafts:
            if draft.dedup not in known:
                known.add(draft.dedup)
                queued.append(self._queue(ns, draft, pass_id, start, end))
        no_op = None
        if not queued:
            why = f"nothing new to propose over {start:%Y-%m-%d} to {end:%Y-%m-%d}" + (
                f" ({len(drafts)} proposal(s) found again, made before)" if drafts else ""
            )
            no_op = worker_trace(session, ns, dm.ACTOR, "no_op", f"Dreams pass {pass_id}: {why}").decision_id
        read = {
            "facts": len(facts),
            "own_rows_skipped": len(live) - len(facts),
            "events": len(events),
            "decisions": len(traces),
            "recalled": len(recalled),
        }
        return DreamPass(
            pass_id,
            ns.tenant,
            ns.scope.value,
            ns.owner_id,
            start,
            end,
            read,
            tuple(queued),
            len(drafts) - len(queued),
            no_op,
        )

    def _window_events(self, ns: Namespace, start: datetime) -> list[StateChange]:
        substrate, out = self.session.store.substrate, []
        seq = self.session.store.dreams.first_event_seq(ns, start)
        while True:
            page = substrate.events([ns], seq, PAGE)
            out.extend(e for e in page if e.recorded_at >= start and not dreamt_event(e))
            if len(page) < PAGE:
                return out
            seq = page[-1].seq

    def _head(self, ns: Namespace, key: str) -> str | None:
        head = self.session.versions.head(ns, key)
        return head.head_version_id if head is not None else None

    def _noted(self, ns: Namespace, key: str) -> datetime | None:
        """When an approved proposal wrote the live row at ``key`` (None: no such row)."""
        own = [s for s in self.session.versions.fact_states(ns, key) if s.live and dreamt(s)]
        return max((s.created_at for s in own), default=None)

    def _merges(
        self, ns: Namespace, facts: Sequence[FactVersion], now: datetime, settings: DreamSettings
    ) -> list[Draft]:
        session = self.session
        if session.embedder is None:
            return []  # merges compare vectors: a home without an embedder gets the other kinds
        embedded = session.write_config(ns.tenant).embedded
        rows = sorted(
            (s for s in facts if excluded(s, now, embedded) is None),
            key=lambda s: (s.valid_at, s.created_at, s.fact_id),
        )
        if len(rows) < 2 or len(rows) > settings.merge.max_rows:
            return []
        vectors = np.asarray(session.embedder.embed([value_text(s.value) for s in rows]))
        taken: set[str] = set()

        def summary_key(read: Sequence[FactVersion], answer: MergeAnswer) -> str | None:
            plan = self._plan(ns, read, answer, "dry-run", taken, lambda s: True, now)
            if plan.outcome != MERGED or plan.key is None:
                return None
            taken.add(plan.key)
            return plan.key

        return merge_drafts(rows, vectors, settings, summary_key)

    def _plan(
        self,
        ns: Namespace,
        read: Sequence[FactVersion],
        answer: MergeAnswer,
        proposal_id: str,
        taken: set[str],
        mergeable: Callable[[FactVersion], bool],
        now: datetime,
    ) -> ClusterPlan:
        """Consolidation's own merge plan for the rows as read (a pass's dry run, or an approval)."""
        session = self.session

        def holders(key: str) -> set[str]:
            return {s.fact_id for s in session.versions.fact_states(ns, key) if s.live and not s.expired(now)}

        return plan_merge(
            answer,
            read,
            {r.fact_id: session.versions.fact_state(ns, r.key, r.fact_id) for r in read},
            holders=holders,
            taken=taken,
            mergeable=mergeable,
            head_version=partial(session.head_version, ns),
            now=now,
            new_id=session.new_id,
            actor=self.identity.actor,
            run_id=proposal_id,
            merger="rules",
        )

    def _queue(self, ns: Namespace, draft: Draft, pass_id: str, start: datetime, end: datetime) -> DreamProposal:
        session = self.session
        proposal_id = "dr-" + session.new_id()[:16]
        why = f"Dreams proposal {proposal_id} ({draft.kind}, confidence {draft.confidence:.2f}): {draft.rationale}"
        refs = [t.ref for t in draft.targets if t.kind != "key"]
        trace = worker_trace(session, ns, dm.ACTOR, "escalate", why[:8000], refs)
        proposal = DreamProposal(
            proposal_id=proposal_id,
            version=1,
            tenant=ns.tenant,
            scope=ns.scope.value,
            owner_id=ns.owner_id,
            kind=draft.kind,
            status=dm.PENDING,
            targets=draft.targets,
            change=dict(draft.change),
            rationale=draft.rationale,
            confidence=draft.confidence,
            dedup=draft.dedup,
            pass_id=pass_id,
            decision_id=trace.decision_id,
            window_start=start,
            window_end=end,
            recorded_at=session.clock.now(),
            actor=dm.ACTOR,
        )
        session.store.dreams.record(without_words(proposal))
        return proposal

    # -- the queue ---------------------------------------------------------------------------------
    def proposals(self, *, scope: str | Scope, status: str) -> list[DreamProposal]:
        if status not in (*dm.STATUSES, "all"):
            raise InvalidInput(f"status must be one of {', '.join(dm.STATUSES)} or all", field="status")
        ns = self.identity.namespace(scope)
        return [self._shown(p) for p in self.session.store.dreams.proposals(ns, None if status == "all" else status)]

    def _shown(self, p: DreamProposal) -> DreamProposal:
        ids = [t.version for t in p.targets if t.kind in FACT_PLANES and t.version]
        return with_words(p, {r.id: r for r in self.session.versions.version_rows(ids)})

    def reject(self, proposal_id: str, *, scope: str | Scope, note: str | None) -> DreamProposal:
        session, ns = self.session, self.identity.namespace(scope)
        why = text(note, "note", optional=True, max_chars=2000)
        session.refuse_read_only("dream_reject")
        refuse_held(session.store, [ns])
        with session.locked():
            return self._decide(ns, self._pending(ns, proposal_id), dm.REJECTED, why, ())

    def approve(self, proposal_id: str, *, scope: str | Scope) -> DreamProposal:
        """Apply a pending proposal, or refuse (PRECONDITION_FAILED) and mark it stale when a
        target changed since the pass read it."""
        session, ns = self.session, self.identity.namespace(scope)
        session.refuse_read_only("dream_approve")
        refuse_held(session.store, [ns])
        with session.locked():
            proposal = self._pending(ns, proposal_id)
            now = session.clock.now()
            substrate, versions = session.store.substrate, session.versions
            changed = changed_targets(
                proposal.targets,
                lambda t: versions.fact_state(ns, t.key or "", t.ident),
                lambda d: found.version if (found := substrate.decision(ns.tenant, d)) is not None else None,
                partial(self._head, ns),
            )
            rows: tuple[FactVersion, ...] = ()
            if not changed:
                rows, detail = self._apply(ns, proposal, now)
                changed = [] if rows else [detail]
            if changed:
                self._decide(ns, proposal, dm.STALE, "; ".join(changed), ())
                raise PreconditionFailed(
                    f"proposal {proposal_id} is stale: {'; '.join(changed)}; nothing was written",
                    proposal_id=proposal_id,
                )
            return self._decide(ns, proposal, dm.APPLIED, None, rows)

    def _pending(self, ns: Namespace, proposal_id: str) -> DreamProposal:
        proposal_id = text(proposal_id, "proposal_id", max_chars=64)
        found = self.session.store.dreams.proposal(ns.tenant, proposal_id)
        if found is None or (found.scope, found.owner_id) != (ns.scope.value, ns.owner_id):
            raise NotFound(f"no Dreams proposal {proposal_id!r} in scope {ns.scope.value}", proposal_id=proposal_id)
        if found.status != dm.PENDING:
            raise WrongState(
                f"proposal {proposal_id} is {found.status}: only a pending one is decided", key=proposal_id
            )
        return found

    def _decide(
        self, ns: Namespace, proposal: DreamProposal, status: str, note: str | None, rows: Sequence[FactVersion]
    ) -> DreamProposal:
        """The proposal's next version, and its trace's outcome (still the worker's trace: a
        later pass never reads it; who decided is in the outcome and the audit row)."""
        session, who = self.session, self.identity.actor
        at = session.clock.now()
        decided = dataclasses.replace(
            proposal,
            version=proposal.version + 1,
            status=status,
            recorded_at=at,
            actor=who,
            note=note,
            applied=tuple(r.id for r in rows),
        )
        session.store.dreams.record(decided)  # read from the queue: it holds no fact's words
        trace = session.store.substrate.decision(ns.tenant, proposal.decision_id)
        if trace is not None:
            outcome = f"{status} by {who}" + (f": {note}" if note else "")
            commit_records(session, who, [decision_write(with_outcome(trace, outcome[:4000], at, dm.ACTOR))])
        return self._shown(decided)

    def _apply(self, ns: Namespace, p: DreamProposal, now: datetime) -> tuple[tuple[FactVersion, ...], str]:
        """The rows the approval wrote (none: why it could not)."""
        session, actor, versions = self.session, self.identity.actor, self.session.versions
        read = {t.ident: versions.fact_state(ns, t.key or "", t.ident) for t in p.targets if t.key and t.kind != "key"}
        context = EventContext(actor_chain=(dm.ACTOR, actor), evidence=(tag(p.proposal_id),))
        if p.kind == dm.MERGE:
            embedded = session.write_config(ns.tenant).embedded
            answer = MergeAnswer(p.change["key"], RuleMerger().merge(merge_request(list(read.values()))).text)
            mergeable = lambda s: excluded(s, now, embedded) is None  # noqa: E731
            plan = self._plan(ns, list(read.values()), answer, p.proposal_id, set(), mergeable, now)
            if plan.outcome != MERGED:
                return (), plan.detail or plan.outcome
            rows = stamped(plan.rows, p.proposal_id)
            audit = audit_entry(ns, "*", "consolidate", rows, rows[-1].content_sha256, actor, now)
            session.commit(Commit(key_changes(ns, rows), (audit,), context=context))
            merged = [r for r in read.values() if r.fact_id not in plan.left_live]
            session.store.consolidation.record_lineage(rows[-1], merged, p.proposal_id, now)
            return rows, ""
        if p.kind == dm.RETIRE:
            older, newer = read[p.change["retire"]], read[p.change["keep"]]
            action = Action("retire", f"dreams proposal {p.proposal_id}")
            rows = stamped(
                pair_rows(partial(session.head_version, ns), newer, older, action, now, session.new_id(), actor),
                p.proposal_id,
            )
            audit = audit_entry(ns, newer.key, "conflict_resolver", rows, None, actor, now)
            session.commit(
                Commit(
                    key_changes(ns, rows), (audit,), context=dataclasses.replace(context, event_type="review.decided")
                )
            )
            judge = tag(p.proposal_id)
            record = resolution_record(
                session.new_id(), newer, older, action, "dreams", p.confidence, judge, now, p.rationale
            )
            session.ledger.record_resolution(record)
            return rows, ""
        if p.kind == dm.AGE_OUT:
            state = read[p.change["retire"]]
            row = age_out_row(
                state, session.head_version(ns, state.key) + 1, session.new_id(), session.new_id(), now, actor
            )
            rows = stamped([row], p.proposal_id)
            session.commit(
                Commit(
                    key_changes(ns, rows),
                    (audit_entry(ns, state.key, "delete", rows, None, actor, now),),
                    context=context,
                )
            )
            return rows, ""
        provenance = dataclasses.replace(Provenance.of(self.identity, dm.ORIGIN), source=tag(p.proposal_id))
        options = SetOptions.parse({"kind": "note", "memory_type": p.change["memory_type"]})
        request = request_of(ns, p.change["key"], p.change["text"], provenance, now, options)
        return tuple(run_set(session, request).rows), "the note was not written"
