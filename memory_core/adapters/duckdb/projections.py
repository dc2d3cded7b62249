"""The retrieval index's bookkeeping in the store: how far it caught up with the log (its
watermark, a global sequence number) and the index writes that failed, to be repaired."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from ...identity import Namespace
from ...model import FactVersion
from .connection import NS_WHERE, DuckDBConnection, ns_params


class DuckDBProjections:
    """``ProjectionLedger`` over the home's connection."""

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db

    def index_watermark(self) -> int:
        found = self._db.meta("index_seq")
        return int(found) if found is not None else 0

    def set_index_watermark(self, seq: int) -> None:
        with self._db.tx() as con:
            self._db.set_meta(con, "index_seq", str(seq))

    def record_projection_failure(self, states: Sequence[FactVersion], error: str, at: datetime) -> None:
        with self._db.tx() as con:
            con.executemany(
                "INSERT INTO projection_failures VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                [[s.fact_id, s.tenant, s.scope.value, s.owner_id, s.key, error[:500], at] for s in states],
            )

    def resolve_projection_failures(self, fact_ids: Sequence[str], at: datetime) -> None:
        with self._db.tx() as con:
            con.execute(
                "UPDATE projection_failures SET resolved_at = ? "
                "WHERE resolved_at IS NULL AND list_contains(?, fact_id)",
                [at, list(fact_ids)],
            )

    def pending_projection_failures(self, namespace: Namespace | None = None) -> list[str]:
        """Fact ids whose index write failed and has not been repaired yet."""
        sql = "SELECT DISTINCT fact_id FROM projection_failures WHERE resolved_at IS NULL"
        params: list[Any] = []
        if namespace is not None:
            sql += f" AND {NS_WHERE}"
            params = ns_params(namespace)
        return [r[0] for r in self._db.rows(sql + " ORDER BY fact_id", params)]
