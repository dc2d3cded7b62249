"""Consolidation (``MemoryTool.consolidate``): similar live facts of one namespace clustered,
each cluster merged into one summary, the merged rows retired behind it, all undoable.

Reading and merging happen outside the store's lock (a merger may be a model call); each
cluster's plan is decided under the lock from its rows as they are then (``consolidation.plan``),
so a row a user changed since the read is never retired by a merge that did not read the
change. Each merged cluster is one audited commit; its lineage and every cluster's outcome are
kept beside the log (``ConsolidationStore``). The retirements record the summary in
``superseded_by``, so the log alone says what each summary replaced.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np

from ..audit import audit_entry
from ..consolidation import (
    ClusterOutcome,
    ConsolidationRun,
    ConsolidationSettings,
    Merger,
    MergeRequest,
    MergeSource,
)
from ..consolidation.clusters import clusters, excluded
from ..consolidation.model import MERGE_FAILED, MERGED
from ..consolidation.plan import ClusterPlan, plan_merge, plan_undo
from ..errors import InvalidInput, NotFound
from ..identity import Namespace, Scope
from ..llm import LLMMalformed, LLMRefused, LLMUnavailable
from ..model import FactVersion
from ..session import Commit, RunService
from ..session.core import key_changes
from ..session.holds import refuse_held
from ..temporal import iso
from ..texts import value_text


class ConsolidationService(RunService):
    def consolidate(
        self, *, scope: str | Scope, merger: Merger, settings: ConsolidationSettings, dry_run: bool
    ) -> ConsolidationRun:
        session, ns = self.session, self.identity.namespace(scope)
        if session.embedder is None:
            raise InvalidInput("consolidation compares vectors: open the memory with an embedder")
        if not dry_run:
            session.refuse_read_only("consolidate")
            refuse_held(session.store, [ns])
        started = session.clock.now()
        run_id = "cr-" + session.new_id()[:16]
        embedded = session.write_config(ns.tenant).embedded
        live = self._live(ns, started)
        candidates = sorted(
            (s for s in live if excluded(s, started, embedded) is None),
            key=lambda s: (s.valid_at, s.created_at, s.fact_id),
        )
        if len(candidates) > settings.max_rows:
            raise InvalidInput(
                f"the namespace holds {len(candidates)} mergeable rows, more than max_rows ({settings.max_rows})",
                field="max_rows",
            )
        texts = [value_text(s.value) for s in candidates]
        vectors = session.embedder.embed(texts) if texts else np.zeros((0, 1), dtype=np.float32)
        outcomes: list[ClusterOutcome] = []
        taken: set[str] = set()
        for number, members in enumerate(clusters(candidates, vectors, settings)):
            read = [candidates[i] for i in members]
            ids = tuple(r.fact_id for r in read)
            try:
                answer = merger.merge(MergeRequest(tuple(_source(r) for r in read)))
            except (LLMRefused, LLMMalformed, LLMUnavailable) as exc:
                outcomes.append(ClusterOutcome(number, MERGE_FAILED, ids, detail=f"{exc.code}: {exc.message}"[:300]))
                if isinstance(exc, LLMUnavailable):
                    break  # the next clusters would wait on the same outage
                continue
            plan = self._apply(ns, read, answer, taken, run_id, merger.name, embedded, dry_run)
            if plan.key is not None and plan.outcome == MERGED:
                taken.add(plan.key)
            summary = plan.summary.fact_id if plan.summary is not None and not dry_run else None
            outcomes.append(ClusterOutcome(number, plan.outcome, ids, plan.key, summary, plan.left_live, plan.detail))
        run = ConsolidationRun(
            run_id=run_id,
            tenant=ns.tenant,
            scope=ns.scope.value,
            owner_id=ns.owner_id,
            actor=self.identity.actor,
            merger=merger.name,
            started_at=started,
            finished_at=session.clock.now(),
            live_before=len(live),
            live_after=len(self._live(ns, session.clock.now())),
            clusters=tuple(outcomes),
            dry_run=dry_run,
        )
        if not dry_run:
            session.store.consolidation.record_run(run)
        return run

    def _live(self, ns: Namespace, now: datetime) -> list[FactVersion]:
        states = self.session.versions.namespace_states(ns)
        return [s for group in states.values() for s in group if s.live and not s.expired(now)]

    def _apply(self, ns, read, answer, taken, run_id, merger, embedded, dry_run) -> ClusterPlan:
        session, versions = self.session, self.session.versions
        with session.locked():
            now = session.clock.now()

            def holders(key: str) -> set[str]:
                return {s.fact_id for s in versions.fact_states(ns, key) if s.live and not s.expired(now)}

            plan = plan_merge(
                answer,
                read,
                {r.fact_id: versions.fact_state(ns, r.key, r.fact_id) for r in read},
                holders=holders,
                taken=taken,
                mergeable=lambda s: excluded(s, now, embedded) is None,
                head_version=lambda key: session.head_version(ns, key),
                now=now,
                new_id=session.new_id,
                actor=self.identity.actor,
                run_id=run_id,
                merger=merger,
            )
            if plan.outcome != MERGED or dry_run:
                return plan
            summary = plan.summary
            audit = audit_entry(ns, "*", "consolidate", plan.rows, summary.content_sha256, self.identity.actor, now)
            session.commit(Commit(key_changes(ns, plan.rows), (audit,)))
            merged = [r for r in read if r.fact_id not in plan.left_live]
            session.store.consolidation.record_lineage(summary, merged, run_id, now)
        return plan

    def undo(self, run_id: str, *, scope: str | Scope) -> dict[str, Any]:
        """Retire each summary of a run and bring its merged rows back as they were before it."""
        session, ns = self.session, self.identity.namespace(scope)
        run = session.store.consolidation.run(run_id)
        if run is None or (run.tenant, run.scope, run.owner_id) != (ns.tenant, ns.scope.value, ns.owner_id):
            raise NotFound(f"no consolidation run {run_id!r} in scope {ns.scope.value}", key=run_id)
        if run.undone_at is not None:
            return {"run_id": run_id, "undone_at": iso(run.undone_at), "restored": 0, "not_restored": []}
        session.refuse_read_only("consolidation_undo")
        versions, restored, not_restored = session.versions, 0, []
        for cluster in run.clusters:
            if cluster.outcome != MERGED or cluster.summary_fact is None or cluster.summary_key is None:
                continue
            sources = [
                (row["source_fact"], row["source_key"])
                for row in session.store.consolidation.lineage(ns, cluster.summary_fact)
                if row["fact_id"] == cluster.summary_fact
            ]
            with session.locked():
                now = session.clock.now()
                plan = plan_undo(
                    cluster.summary_fact,
                    versions.fact_state(ns, cluster.summary_key, cluster.summary_fact),
                    [
                        (
                            versions.fact_state(ns, key, fact),
                            [r for r in versions.history(ns, key) if r.fact_id == fact],
                        )
                        for fact, key in sources
                    ],
                    head_version=lambda key: session.head_version(ns, key),
                    now=now,
                    new_id=session.new_id,
                    actor=self.identity.actor,
                )
                if plan.rows:
                    audit = audit_entry(ns, "*", "consolidate_undo", plan.rows, None, self.identity.actor, now)
                    session.commit(Commit(key_changes(ns, plan.rows), (audit,)))
            restored += len(plan.restored)
            not_restored.extend(plan.not_restored)
        at = session.clock.now()
        session.store.consolidation.mark_undone(run_id, at)
        return {"run_id": run_id, "undone_at": iso(at), "restored": restored, "not_restored": not_restored}

    def runs(self, *, scope: str | Scope) -> list[ConsolidationRun]:
        return self.session.store.consolidation.runs(self.identity.namespace(scope))

    def lineage(self, key: str, *, scope: str | Scope) -> list[dict[str, Any]]:
        """Where the facts of ``key`` came from (derived_from) and what was derived from them."""
        ns = self.identity.namespace(scope)
        facts = dict.fromkeys(r.fact_id for r in self.session.versions.history(ns, key))
        if not facts:
            raise NotFound(f"no key {key!r} in scope {ns.scope.value}", key=key)
        out = [row for fact in facts for row in self.session.store.consolidation.lineage(ns, fact)]
        return [{**row, "recorded_at": iso(row["recorded_at"])} for row in out]


def _source(row: FactVersion) -> MergeSource:
    return MergeSource(row.fact_id, row.key, value_text(row.value), iso(row.valid_at) or "", row.subject)
