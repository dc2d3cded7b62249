"""The deferred extraction queue in a PostgreSQL authority: pending -> running -> done / failed,
with leases, retries and backoff (the DuckDB adapter's ``DuckDBQueue``, whose statements it
shares but for the words PostgreSQL says its own way).

Workers of several processes claim from one table, so a claim locks the rows it takes with
``FOR UPDATE SKIP LOCKED``: two claims running together take disjoint jobs, and neither waits on
the other. Completing and failing lock the leased row before checking the lease (``FOR
UPDATE``), so a worker whose lease was taken over meanwhile writes nothing. A capacity check
and its insert hold a transaction advisory lock on (namespace, kind), so two replicas enqueueing
at once cannot both take the last place. Nothing is cached: every count is read from the
authority (another replica may have changed it).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Sequence

from ...identity import Namespace
from ...ports import QueueRow
from ..duckdb.connection import NS_WHERE, ns_params
from ..duckdb.queue import _COLS, DuckDBQueue, _row
from .connection import PgConnection, Tx

_RETURNING = ", ".join(f"q.{c}" for c in _COLS)
# Due: pending and its time has come, or running with a lease that ran out (its worker died).
_DUE = (
    "((status = 'pending' AND next_attempt_at <= ?) OR (status = 'running' AND lease_expires_at <= ?)) "
    "AND kind = ANY(?::text[])"
)


class PgQueue(DuckDBQueue):
    """``WorkQueue`` over the authority's pool."""

    _in = "{} = ANY(?::text[])"
    _for_update = " FOR UPDATE"
    _generation = (
        "(CASE WHEN jsonb_typeof(payload::jsonb -> 'generation') = 'number' "
        "THEN (payload::jsonb ->> 'generation')::numeric::bigint END)"
    )
    _session = "(payload::jsonb ->> 'session')"

    def __init__(self, db: PgConnection) -> None:
        self._db = db  # type: ignore[assignment]  # the same statements; no counts are kept

    def _write(self) -> Any:
        return self._db.tx()

    def _forget_cache(self) -> None:
        pass  # nothing kept

    def unfinished_jobs(self, namespace: Namespace) -> int:
        """Pending and running jobs of a namespace (what ``search`` reports as pending_extraction)."""
        sql = f"SELECT count(*) FROM extraction_queue WHERE {NS_WHERE} AND status IN ('pending', 'running')"
        return int(self._db.one(sql, ns_params(namespace)))

    def _hold_capacity(self, con: Tx, namespace: Namespace, kind: str) -> None:
        # One-bigint advisory keys are a space apart from the two-int4 keys of the write lock.
        place = "|".join((self._db.schema, "queue", *ns_params(namespace), kind))
        con.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", [place])

    def claim(
        self, worker: str, now: datetime, *, lease_s: float, limit: int, kinds: Sequence[str] = ("extract", "harvest")
    ) -> list[QueueRow]:
        """Lease up to ``limit`` due jobs (oldest first) to ``worker``; each claim counts an attempt.
        Rows another claim holds are skipped, never waited for."""
        kinds = list(kinds)
        with self._db.tx() as tx:
            # A job whose lease ran out once too often fails instead of being taken again.
            tx.execute(
                "UPDATE extraction_queue SET status = 'failed', lease_owner = NULL, updated_at = ?, "
                "last_error = 'its worker stopped before finishing ' || attempts || ' time(s)' "
                "WHERE queue_id IN (SELECT queue_id FROM extraction_queue "
                f"WHERE {_DUE} AND status = 'running' AND attempts >= max_attempts FOR UPDATE SKIP LOCKED)",
                [now, now, now, kinds],
            )
            # The exhausted ones the statement above skipped (another claim holds them) stay out.
            rows = tx.execute(
                "WITH picked AS (SELECT queue_id FROM extraction_queue "
                f"WHERE {_DUE} AND NOT (status = 'running' AND attempts >= max_attempts) "
                "ORDER BY created_at, queue_id LIMIT ? FOR UPDATE SKIP LOCKED) "
                "UPDATE extraction_queue q SET status = 'running', attempts = q.attempts + 1, "
                "lease_owner = ?, lease_expires_at = ?, updated_at = ? "
                f"FROM picked WHERE q.queue_id = picked.queue_id RETURNING {_RETURNING}",
                [now, now, kinds, limit, worker, now + timedelta(seconds=lease_s), now],
            ).fetchall()
        return sorted(map(_row, rows), key=lambda r: (r.created_at, r.queue_id))
