"""``ConsolidationStore`` over the home's DuckDB file: ``consolidation_runs`` (one row a run),
``consolidation_clusters`` (one row a cluster) and ``belief_sources`` (a summary's lineage)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Sequence

from ...consolidation import ClusterOutcome, ConsolidationRun
from ...extraction.lineage import DERIVED_FROM  # the support type every lineage reader names
from ...identity import Namespace
from ...model import FactVersion
from .connection import DuckDBConnection
from .schema import utc

_RUN = (
    "run_id, tenant, scope, owner_id, actor, merger, started_at, finished_at, live_before, live_after, "
    "clusters, merged, failed, undone_at"
)
_CLUSTER = "cluster, outcome, summary_key, summary_fact, source_facts, left_live, detail"


class DuckDBConsolidation:
    _in = "list_contains(?, {})"  # a column is one of a list parameter (PostgreSQL says it its way)

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db

    def record_run(self, run: ConsolidationRun) -> None:
        ns = [run.tenant, run.scope, run.owner_id]
        with self._db.tx() as con:
            con.execute(
                f"INSERT INTO consolidation_runs ({_RUN}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                [run.run_id, *ns, run.actor, run.merger, run.started_at, run.finished_at, run.live_before]
                + [run.live_after, len(run.clusters), run.merged, run.failed],
            )
            for c in run.clusters:
                con.execute(
                    f"INSERT INTO consolidation_clusters (run_id, tenant, scope, owner_id, {_CLUSTER}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [run.run_id, *ns, c.cluster, c.outcome, c.summary_key, c.summary_fact]
                    + [json.dumps(list(c.source_facts)), json.dumps(list(c.left_live)), c.detail],
                )

    def record_lineage(self, summary: FactVersion, sources: Sequence[FactVersion], run_id: str, at: datetime) -> None:
        ns = [summary.tenant, summary.scope.value, summary.owner_id]
        with self._db.tx() as con:
            for source in sources:
                con.execute(
                    "INSERT INTO belief_sources VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [*ns, summary.fact_id, summary.key, source.fact_id, source.key, DERIVED_FROM, run_id, at],
                )

    def _runs(self, where: str, params: list[Any]) -> list[ConsolidationRun]:
        runs = self._db.rows(f"SELECT {_RUN} FROM consolidation_runs WHERE {where} ORDER BY started_at, run_id", params)
        if not runs:
            return []
        clusters: dict[str, list[ClusterOutcome]] = {}
        ids = [r[0] for r in runs]
        for row in self._db.rows(
            f"SELECT run_id, {_CLUSTER} FROM consolidation_clusters WHERE {self._in.format('run_id')} "
            "ORDER BY run_id, cluster",
            [ids],
        ):
            run_id, cluster, outcome, key, fact, sources, left, detail = row
            clusters.setdefault(run_id, []).append(
                ClusterOutcome(cluster, outcome, tuple(json.loads(sources)), key, fact, tuple(json.loads(left)), detail)
            )
        return [
            ConsolidationRun(
                run_id=r[0],
                tenant=r[1],
                scope=r[2],
                owner_id=r[3],
                actor=r[4],
                merger=r[5],
                started_at=utc(r[6]),
                finished_at=utc(r[7]),
                live_before=int(r[8]),
                live_after=int(r[9]),
                clusters=tuple(clusters.get(r[0], ())),
                undone_at=utc(r[13]) if r[13] is not None else None,
            )
            for r in runs
        ]

    def runs(self, namespace: Namespace | None = None) -> list[ConsolidationRun]:
        if namespace is None:
            return self._runs("TRUE", [])
        return self._runs(
            "tenant = ? AND scope = ? AND owner_id = ?",
            [namespace.tenant, namespace.scope.value, namespace.owner_id],
        )

    def run(self, run_id: str) -> ConsolidationRun | None:
        found = self._runs("run_id = ?", [run_id])
        return found[0] if found else None

    def mark_undone(self, run_id: str, at: datetime) -> None:
        with self._db.tx() as con:
            con.execute("UPDATE consolidation_runs SET undone_at = ? WHERE run_id = ?", [at, run_id])

    def lineage(self, namespace: Namespace, fact_id: str) -> list[dict[str, Any]]:
        return self._db.dicts(
            "SELECT fact_id, key, source_fact, source_key, support_type, run_id, recorded_at FROM belief_sources "
            "WHERE tenant = ? AND scope = ? AND owner_id = ? AND (fact_id = ? OR source_fact = ?) "
            "ORDER BY recorded_at, fact_id, source_key",
            [namespace.tenant, namespace.scope.value, namespace.owner_id, fact_id, fact_id],
        )
