"""``LineageStore`` over the home's DuckDB file: ``belief_sources`` (each fact's evidence links,
the rows consolidation's and reflect's lineage share) and ``session_summaries`` (one digest per
conversation session)."""

from __future__ import annotations

import json
from typing import Any, Sequence

from ...extraction.lineage import BeliefSource
from ...extraction.summaries import SessionSummary
from ...identity import Namespace, Scope
from .connection import DuckDBConnection
from .schema import utc

_SOURCE = "tenant, scope, owner_id, fact_id, key, source_fact, source_key, support_type, run_id, recorded_at"
_SUMMARY = (
    "tenant, scope, owner_id, session, digest, turns, turns_digest, fact_ids, summarizer, first_at, last_at, built_at"
)


def _summary(r: tuple[Any, ...]) -> SessionSummary:
    return SessionSummary(
        r[0], r[1], r[2], r[3], r[4], int(r[5]), r[6], tuple(json.loads(r[7])), r[8],
        utc(r[9]) if r[9] is not None else None, utc(r[10]) if r[10] is not None else None, utc(r[11]),
    )  # fmt: skip


class DuckDBLineage:
    _in = "list_contains(?, {})"  # a column is one of a list parameter (PostgreSQL says it its way)

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db

    def record_sources(self, links: Sequence[BeliefSource]) -> None:
        if not links:
            return
        with self._db.tx() as con:
            for s in links:
                con.execute(
                    f"INSERT INTO belief_sources ({_SOURCE}) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS "
                    "(SELECT 1 FROM belief_sources WHERE run_id = ? AND fact_id = ? AND source_fact = ? "
                    "AND support_type = ?)",
                    [s.tenant, s.scope, s.owner_id, s.fact_id, s.key, s.source_fact, s.source_key, s.support_type]
                    + [s.run_id, s.recorded_at, s.run_id, s.fact_id, s.source_fact, s.support_type],
                )

    def sources(self, namespace: Namespace, fact_ids: Sequence[str]) -> list[BeliefSource]:
        if not fact_ids:
            return []
        rows = self._db.rows(
            f"SELECT {_SOURCE} FROM belief_sources WHERE tenant = ? AND scope = ? AND owner_id = ? "
            f"AND {self._in.format('fact_id')} ORDER BY recorded_at, support_type, source_key, source_fact",
            [namespace.tenant, namespace.scope.value, namespace.owner_id, list(fact_ids)],
        )
        return [BeliefSource(*r[:9], utc(r[9])) for r in rows]

    def summaries(self, namespace: Namespace, session: str | None = None) -> list[SessionSummary]:
        where, params = "", [namespace.tenant, namespace.scope.value, namespace.owner_id]
        if session is not None:
            where, params = " AND session = ?", [*params, session]
        rows = self._db.rows(
            f"SELECT {_SUMMARY} FROM session_summaries WHERE tenant = ? AND scope = ? AND owner_id = ?{where} "
            "ORDER BY session",
            params,
        )
        return [_summary(r) for r in rows]

    def summarized(self) -> list[tuple[Namespace, str]]:
        rows = self._db.rows("SELECT tenant, scope, owner_id, session FROM session_summaries ORDER BY 1, 2, 3, 4")
        return [(Namespace(r[0], Scope(r[1]), r[2]), r[3]) for r in rows]

    def drop_summary(self, namespace: Namespace, session: str) -> None:
        with self._db.tx() as con:
            con.execute(
                "DELETE FROM session_summaries WHERE tenant = ? AND scope = ? AND owner_id = ? AND session = ?",
                [namespace.tenant, namespace.scope.value, namespace.owner_id, session],
            )

    def put_summary(self, summary: SessionSummary) -> None:
        s = summary
        ns = [s.tenant, s.scope, s.owner_id, s.session]
        with self._db.tx() as con:
            con.execute(
                "DELETE FROM session_summaries WHERE tenant = ? AND scope = ? AND owner_id = ? AND session = ?", ns
            )
            con.execute(
                f"INSERT INTO session_summaries ({_SUMMARY}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [*ns, s.digest, s.turns, s.turns_digest, json.dumps(list(s.fact_ids)), s.summarizer]
                + [s.first_at, s.last_at, s.built_at],
            )
