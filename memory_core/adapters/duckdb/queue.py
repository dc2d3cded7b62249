"""The deferred extraction queue in the store: pending → running → done / failed, with leases.

A claim takes rows that are pending and due, or running with a lease
that ran out (their worker died mid-batch): each claim counts an attempt, so a row that keeps
killing its workers fails after ``max_attempts`` instead of looping. A failure that never
reached the provider gives its attempt back. Completing or failing needs the lease: a worker
whose lease was taken over learns so, and writes nothing to the row.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, Iterator, Sequence

import duckdb

from ...identity import Namespace
from ...ports import QueueRow
from .connection import NS_WHERE, DuckDBConnection, StoreCache, ns_of, ns_params
from .schema import utc

# The table itself is created with the rest of the schema (``schema.DDL``).
_COLS = (
    "queue_id",
    "tenant",
    "scope",
    "owner_id",
    "requested_by",
    "kind",
    "payload",
    "status",
    "attempts",
    "max_attempts",
    "next_attempt_at",
    "lease_owner",
    "lease_expires_at",
    "last_error",
    "created_at",
    "updated_at",
    "result",
)
STATUSES = ("pending", "running", "done", "failed")


def _row(r: Sequence[Any]) -> QueueRow:
    d = dict(zip(_COLS, r))
    return QueueRow(
        d["queue_id"],
        ns_of(d["tenant"], d["scope"], d["owner_id"]),
        d["requested_by"],
        d["kind"],
        json.loads(d["payload"]),
        d["status"],
        int(d["attempts"]),
        int(d["max_attempts"]),
        utc(d["next_attempt_at"]),
        d["lease_owner"],
        utc(d["lease_expires_at"]),
        d["last_error"],
        utc(d["created_at"]),
        utc(d["updated_at"]),
        json.loads(d["result"]) if d["result"] else None,
    )


class DuckDBQueue:
    """``WorkQueue`` over the home's connection.

    What an engine says its own way is kept apart (the class attributes, ``_write``,
    ``_hold_capacity``, ``claim``, ``unfinished_jobs``): the PostgreSQL queue
    (``postgres.queue``) says those and shares the rest."""

    _in = "list_contains(?, {})"  # a column is one of a list parameter
    _for_update = ""  # a lease checked before it is written: this process is the home's only writer
    _generation = "TRY_CAST(json_extract(payload, '$.generation') AS BIGINT)"
    _session = "json_extract_string(payload, '$.session')"

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db
        # Unfinished jobs per namespace, for every search to read: kept here, dropped by each queue
        # write (this process is the home's only writer), reloaded in one query when next read.
        self._unfinished = StoreCache(db, self._count_unfinished)

    def unfinished_jobs(self, namespace: Namespace) -> int:
        """Pending and running jobs of a namespace (what ``search`` reports as pending_extraction)."""
        return self._unfinished.get().get(namespace, 0)

    def _count_unfinished(self) -> dict[Namespace, int]:
        rows = self._db.rows(
            "SELECT tenant, scope, owner_id, count(*) FROM extraction_queue "
            "WHERE status IN ('pending', 'running') GROUP BY 1, 2, 3",
            [],
        )
        return {ns_of(t, s, o): int(n) for t, s, o, n in rows}

    def _forget_cache(self) -> None:
        self._unfinished.drop()

    @contextmanager
    def _write(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A queue write's transaction; it drops the cached counts (``StoreCache``: a reader
        loading them waits for the transaction, so none keeps the old counts)."""
        with self._db.tx() as con:
            self._forget_cache()
            yield con

    def _hold_capacity(self, con: Any, namespace: Namespace, kind: str) -> None:
        """Held from a capacity check to its insert (one writer here: nothing to hold)."""

    def enqueue(
        self,
        queue_id: str,
        namespace: Namespace,
        requested_by: str,
        kind: str,
        payload: dict[str, Any],
        now: datetime,
        *,
        max_attempts: int = 5,
        capacity: int | None = None,
    ) -> bool:
        """Add one job; False (and nothing written) when the namespace already holds ``capacity``
        unfinished jobs of this kind."""
        with self._write() as con:
            if capacity is not None:
                self._hold_capacity(con, namespace, kind)
                waiting = con.execute(
                    f"SELECT count(*) FROM extraction_queue WHERE {NS_WHERE} AND kind = ? "
                    "AND status IN ('pending', 'running')",
                    [*ns_params(namespace), kind],
                ).fetchall()
                if waiting[0][0] >= capacity:
                    return False
            con.execute(
                f"INSERT INTO extraction_queue ({', '.join(_COLS)}) VALUES ({', '.join('?' * len(_COLS))})",
                [
                    queue_id,
                    *ns_params(namespace),
                    requested_by,
                    kind,
                    json.dumps(payload, ensure_ascii=False),
                    "pending",
                    0,
                    max_attempts,
                    now,
                    None,
                    None,
                    None,
                    now,
                    now,
                    None,
                ],
            )
        return True

    def claim(
        self, worker: str, now: datetime, *, lease_s: float, limit: int, kinds: Sequence[str] = ("extract", "harvest")
    ) -> list[QueueRow]:
        """Lease up to ``limit`` due jobs (oldest first) to ``worker``; each claim counts an attempt."""
        due = (
            "((status = 'pending' AND next_attempt_at <= $now) OR (status = 'running' AND lease_expires_at <= $now))"
            " AND list_contains($kinds, kind)"
        )
        with self._write() as con:
            # A job whose lease ran out once too often fails instead of being taken again.
            con.execute(
                f"UPDATE extraction_queue SET status = 'failed', lease_owner = NULL, updated_at = $now, "
                f"last_error = 'its worker stopped before finishing ' || attempts || ' time(s)' "
                f"WHERE {due} AND status = 'running' AND attempts >= max_attempts",
                {"now": now, "kinds": list(kinds)},
            )
            ids = [
                r[0]
                for r in con.execute(
                    f"SELECT queue_id FROM extraction_queue WHERE {due} ORDER BY created_at, queue_id LIMIT $limit",
                    {"now": now, "kinds": list(kinds), "limit": limit},
                ).fetchall()
            ]
            if not ids:
                return []
            rows = con.execute(
                f"UPDATE extraction_queue SET status = 'running', attempts = attempts + 1, "
                f"lease_owner = $worker, lease_expires_at = $until, updated_at = $now "
                f"WHERE list_contains($ids, queue_id) RETURNING {', '.join(_COLS)}",
                {"worker": worker, "until": now + timedelta(seconds=lease_s), "now": now, "ids": ids},
            ).fetchall()
        order = {q: i for i, q in enumerate(ids)}
        return sorted(map(_row, rows), key=lambda r: order[r.queue_id])

    def _leased(self, con, queue_id: str, worker: str) -> bool:
        found = con.execute(
            "SELECT 1 FROM extraction_queue WHERE queue_id = ? AND status = 'running' AND lease_owner = ?"
            f"{self._for_update}",
            [queue_id, worker],
        ).fetchall()
        return bool(found)

    def complete(self, queue_id: str, worker: str, now: datetime, result: dict[str, Any]) -> bool:
        with self._write() as con:
            if not self._leased(con, queue_id, worker):
                return False
            con.execute(
                "UPDATE extraction_queue SET status = 'done', lease_owner = NULL, lease_expires_at = NULL, "
                "updated_at = ?, result = ?, last_error = NULL WHERE queue_id = ?",
                [now, json.dumps(result, ensure_ascii=False, default=str), queue_id],
            )
        return True

    def fail(
        self,
        queue_id: str,
        worker: str,
        now: datetime,
        error: str,
        *,
        spent: bool,
        permanent: bool = False,
        backoff_s: float = 30.0,
    ) -> bool:
        """Record a failure. ``spent`` False (the provider was never reached) gives the attempt
        back; ``permanent`` (a refusal) fails the job at once; else it waits, doubling each time."""
        with self._write() as con:
            leased = con.execute(
                "SELECT attempts, max_attempts FROM extraction_queue "
                f"WHERE queue_id = ? AND status = 'running' AND lease_owner = ?{self._for_update}",
                [queue_id, worker],
            ).fetchall()
            if not leased:
                return False
            attempts, max_attempts = leased[0]
            attempts = attempts if spent else attempts - 1
            done = permanent or attempts >= max_attempts
            wait = timedelta(seconds=backoff_s * 2 ** max(attempts - 1, 0))
            con.execute(
                "UPDATE extraction_queue SET status = ?, attempts = ?, next_attempt_at = ?, lease_owner = NULL, "
                "lease_expires_at = NULL, last_error = ?, updated_at = ? WHERE queue_id = ?",
                ["failed" if done else "pending", attempts, now + wait, error[:500], now, queue_id],
            )
        return True

    def retry_failed(
        self, namespace: Namespace, requested_by: str, queue_ids: Sequence[str] | None, now: datetime
    ) -> list[str]:
        """Put the caller's own failed jobs back in line, with fresh attempts."""
        where = f"{NS_WHERE} AND requested_by = ? AND status = 'failed'"
        params: list[Any] = [*ns_params(namespace), requested_by]
        if queue_ids is not None:
            where += f" AND {self._in.format('queue_id')}"
            params.append(list(queue_ids))
        with self._write() as con:
            rows = con.execute(
                f"UPDATE extraction_queue SET status = 'pending', attempts = 0, next_attempt_at = ?, "
                f"updated_at = ? WHERE {where} RETURNING queue_id",
                [now, now, *params],
            ).fetchall()
        return sorted(r[0] for r in rows)

    def queue_counts(self, namespace: Namespace) -> dict[str, int]:
        rows = self._db.rows(
            f"SELECT status, count(*) FROM extraction_queue WHERE {NS_WHERE} GROUP BY status",
            ns_params(namespace),
        )
        counts = {s: 0 for s in STATUSES}
        counts.update({s: int(n) for s, n in rows})
        return counts

    def queue_rows(
        self, namespace: Namespace, requested_by: str, queue_ids: Sequence[str] | None = None
    ) -> list[QueueRow]:
        where = f"{NS_WHERE} AND requested_by = ?"
        params: list[Any] = [*ns_params(namespace), requested_by]
        if queue_ids is not None:
            where += f" AND {self._in.format('queue_id')}"
            params.append(list(queue_ids))
        return [
            _row(r)
            for r in self._db.rows(
                f"SELECT {', '.join(_COLS)} FROM extraction_queue WHERE {where} ORDER BY created_at, queue_id", params
            )
        ]

    def earlier_spans(
        self, namespace: Namespace, session: str, *, generation: int, banked_at: datetime, limit: int
    ) -> list[QueueRow]:
        gen = self._generation
        rows = self._db.rows(
            f"SELECT {', '.join(_COLS)} FROM extraction_queue WHERE {NS_WHERE} AND kind = 'harvest' "
            f"AND {self._session} = ? AND ({gen} < ? OR ({gen} = ? AND created_at < ?)) "
            f"ORDER BY {gen} DESC, created_at DESC, queue_id DESC LIMIT ?",
            [*ns_params(namespace), session, generation, generation, banked_at, limit],
        )
        return [_row(r) for r in reversed(rows)]

    def queue_backlog(self) -> dict[str, int]:
        """Jobs waiting across the home, by kind and status (what a sensor looks at)."""
        rows = self._db.rows("SELECT kind, status, count(*) FROM extraction_queue GROUP BY 1, 2", [])
        return {f"{k}:{s}": int(n) for k, s, n in rows}

    def queue_cursor(self) -> str:
        """The newest job's creation (a sensor's cursor): changes only when work is added."""
        found = self._db.rows("SELECT max(created_at), count(*) FROM extraction_queue", [])
        return f"{found[0][0]}|{found[0][1]}" if found and found[0][0] else ""
