"""The retrieval index's bookkeeping in a PostgreSQL authority: how far one replica's index caught
up with the log (its watermark), and the index writes that failed there, to be repaired."""

from __future__ import annotations

from datetime import datetime
from typing import Sequence

from ...identity import Namespace
from ...model import FactVersion
from ..duckdb.connection import NS_WHERE, ns_params
from ..duckdb.schema import utc
from .connection import PgConnection


def watermark_name(replica: str) -> str:
    """The ``meta`` row of a replica's index watermark."""
    return f"index_seq:{replica}"


class PgProjections:
    """``ProjectionLedger`` of one replica's retrieval index.

    Every service replica keeps a Lance index of its own, fed from the authority's log, so the
    bookkeeping is per replica: the watermark (``meta`` row ``index_seq:<replica>``) says how far
    *this* index is written, and a failed index write is recorded with the replica whose index
    missed it (``projection_failures.replica``, a column PostgreSQL's table has beyond DuckDB's).
    Failures must be per replica for correctness, not only for reports: a replica repairs its own
    index and then resolves the failures it repaired; were they shared, a replica whose index took
    a write could resolve the failure of one whose index did not, and since that one's watermark
    has moved past the fact, nothing would ever write it there again. Likewise a reindex resolves
    its own replica's failures only, and a search reports the failures of the index it searched.

    Nothing is cached across calls: the unresolved failures are read from the authority each time
    (an indexed read of the few open rows).
    """

    def __init__(self, db: PgConnection, replica: str) -> None:
        self._db = db
        self.replica = replica
        self._watermark = watermark_name(replica)

    def index_watermark(self) -> int:
        found = self._db.meta(self._watermark)
        return int(found) if found is not None else 0

    def set_index_watermark(self, seq: int) -> None:
        with self._db.tx() as tx:
            self._db.set_meta(tx, self._watermark, str(seq))

    def record_projection_failure(self, states: Sequence[FactVersion], error: str, at: datetime) -> None:
        if not states:
            return
        with self._db.tx() as tx:
            tx.executemany(
                "INSERT INTO projection_failures "
                "(fact_id, tenant, scope, owner_id, key, error, failed_at, resolved_at, replica) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                [
                    [s.fact_id, s.tenant, s.scope.value, s.owner_id, s.key, error[:500], at, self.replica]
                    for s in states
                ],
            )

    def resolve_projection_failures(self, fact_ids: Sequence[str], at: datetime) -> None:
        self._db.rows(
            "UPDATE projection_failures SET resolved_at = ? "
            "WHERE resolved_at IS NULL AND replica = ? AND fact_id = ANY(?::text[])",
            [at, self.replica, list(fact_ids)],
        )

    def pending_projection_failures(self, namespace: Namespace | None = None) -> list[str]:
        """Fact ids whose index write failed on this replica and has not been repaired yet."""
        where, params = "resolved_at IS NULL AND replica = ?", [self.replica]
        if namespace is not None:
            where, params = f"{where} AND {NS_WHERE}", [*params, *ns_params(namespace)]
        return [
            r[0]
            for r in self._db.rows(f"SELECT DISTINCT fact_id FROM projection_failures WHERE {where} ORDER BY 1", params)
        ]

    def failure_attempts(self) -> dict[str, tuple[int, datetime]]:
        rows = self._db.rows(
            "SELECT fact_id, count(*), max(failed_at) FROM projection_failures "
            "WHERE resolved_at IS NULL AND replica = ? GROUP BY fact_id",
            [self.replica],
        )
        return {fact_id: (int(n), utc(last)) for fact_id, n, last in rows}
