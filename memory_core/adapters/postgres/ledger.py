"""The conflict resolver's tables in a PostgreSQL authority: marks, the marking watermark,
records, LLM spend, pauses and erasure flags (the DuckDB adapter's ``DuckDBLedger``, whose reads
and single-statement writes it shares).

Resolver passes, spend and erasures may run in several processes at once, so every write that
read before it wrote is one statement or holds a lock here: spend is an upsert that adds (``ON
CONFLICT DO UPDATE``), a pause and an erasure flag are upserts on their unique keys, dropping
stale marks counts what its update returned, and marking takes a transaction advisory lock and
skips the marks another pass already put past the watermark.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Sequence

from ...identity import Namespace
from ..duckdb.connection import ns_params
from ..duckdb.ledger import DuckDBLedger
from .connection import PgConnection


class PgLedger(DuckDBLedger):
    """``ResolverLedger`` over the authority's pool."""

    _in = "{} = ANY(?::text[])"

    def __init__(self, db: PgConnection) -> None:
        super().__init__(db)  # type: ignore[arg-type]  # the same reads

    def put_marks(self, marks: Sequence[tuple], watermark: int, at: datetime) -> None:
        """Record marks (fact_id, namespace, key, sha, seq, mark, reason) and move the watermark.
        A pass that read the watermark before another pass moved it marks only what lies past it
        now (marks come from ``new_statements(watermark)``: each seq is past the watermark its
        pass read), so every statement is marked once."""
        with self._db.tx() as tx:
            tx.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", [f"{self._db.schema}|resolver_seq"])
            found = tx.execute("SELECT value FROM meta WHERE name = 'resolver_seq'").fetchone()
            marked = int(found[0]) if found is not None else 0
            rows = [
                [fact_id, *ns_params(ns), key, sha, seq, mark, reason, at]
                for fact_id, ns, key, sha, seq, mark, reason in marks
                if seq > marked
            ]
            if rows:
                tx.executemany("INSERT INTO resolver_marks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, NULL, false)", rows)
            self._db.set_meta(tx, "resolver_seq", str(max(marked, watermark)))

    def drop_stale(self, before: datetime, at: datetime, reason: str, skip_tenants: Sequence[str] = ()) -> int:
        """Stamp ``dropped`` every row owed since before ``before``; its reason keeps why it was owed."""
        found = self._db.rows(
            "WITH dropped AS (UPDATE resolver_marks SET mark = 'dropped', judged_at = ?, "
            "reason = ? || coalesce(reason, '') "
            "WHERE mark = 'owed' AND marked_at < ? AND NOT tenant = ANY(?::text[]) RETURNING 1) "
            "SELECT count(*) FROM dropped",
            [at, reason, before, list(skip_tenants)],
        )
        return int(found[0][0])

    def pause_namespace(self, namespace: Namespace, until: datetime, reason: str, at: datetime) -> None:
        self._db.rows(
            "INSERT INTO resolver_pauses VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, scope, owner_id) "
            "DO UPDATE SET paused_at = excluded.paused_at, until = excluded.until, reason = excluded.reason",
            [*ns_params(namespace), at, until, reason],
        )

    def add_spend(self, ns: Namespace, day: date, purpose: str, cost_usd: float) -> None:
        self._db.rows(
            "INSERT INTO llm_spend AS s VALUES (?, ?, ?, ?, ?, 1, ?) "
            "ON CONFLICT (tenant, scope, owner_id, day, purpose) "
            "DO UPDATE SET calls = s.calls + 1, cost_usd = s.cost_usd + excluded.cost_usd",
            [*ns_params(ns), day, purpose, cost_usd],
        )

    def set_erasure(self, tenant: str, status: str, at: datetime) -> None:
        """Record the state of a tenant's erasure (queued, running, failed, done, abandoned)."""
        self._db.rows(
            "INSERT INTO erasures VALUES (?, ?, ?, ?) ON CONFLICT (tenant) DO UPDATE SET "
            "status = excluded.status, requested_at = excluded.requested_at, updated_at = excluded.updated_at",
            [tenant, status, at, at],
        )
