"""The retrieval index's bookkeeping in the store: how far it caught up with the log (its
watermark, a global sequence number) and the index writes that failed, to be repaired."""

from __future__ import annotations

from datetime import datetime
from typing import Sequence

from ...identity import Namespace
from ...model import FactVersion
from .connection import DuckDBConnection, StoreCache, ns_of
from .schema import utc


class DuckDBProjections:
    """``ProjectionLedger`` over the home's connection.

    Every search asks for the failed index writes of its scope (to say so in its notes), so the
    unresolved ones are kept (``StoreCache``), loaded in one query when first asked and dropped by
    each ledger write."""

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db
        self._failures = StoreCache(db, self._load_failures)  # fact ids, sorted, per scope

    def _forget_cache(self) -> None:
        self._failures.drop()

    def index_watermark(self) -> int:
        found = self._db.meta("index_seq")
        return int(found) if found is not None else 0

    def set_index_watermark(self, seq: int) -> None:
        with self._db.tx() as con:
            self._db.set_meta(con, "index_seq", str(seq))

    def record_projection_failure(self, states: Sequence[FactVersion], error: str, at: datetime) -> None:
        with self._db.tx() as con:
            self._failures.drop()
            con.executemany(
                "INSERT INTO projection_failures VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                [[s.fact_id, s.tenant, s.scope.value, s.owner_id, s.key, error[:500], at] for s in states],
            )

    def resolve_projection_failures(self, fact_ids: Sequence[str], at: datetime) -> None:
        with self._db.tx() as con:
            self._failures.drop()
            con.execute(
                "UPDATE projection_failures SET resolved_at = ? "
                "WHERE resolved_at IS NULL AND list_contains(?, fact_id)",
                [at, list(fact_ids)],
            )

    def pending_projection_failures(self, namespace: Namespace | None = None) -> list[str]:
        """Fact ids whose index write failed and has not been repaired yet."""
        failures = self._failures.get()
        if namespace is not None:
            return list(failures.get(namespace, ()))
        return sorted(f for ids in failures.values() for f in ids)

    def failure_attempts(self) -> dict[str, tuple[int, datetime]]:
        rows = self._db.rows(
            "SELECT fact_id, count(*), max(failed_at) FROM projection_failures WHERE resolved_at IS NULL "
            "GROUP BY fact_id"
        )
        return {fact_id: (int(n), utc(last)) for fact_id, n, last in rows}

    def _load_failures(self) -> dict[Namespace, list[str]]:
        rows = self._db.rows(
            "SELECT DISTINCT fact_id, tenant, scope, owner_id FROM projection_failures "
            "WHERE resolved_at IS NULL ORDER BY fact_id"
        )
        found: dict[Namespace, list[str]] = {}
        for fact_id, tenant, scope, owner_id in rows:
            found.setdefault(ns_of(tenant, scope, owner_id), []).append(fact_id)
        return found
