"""The conflict resolver's tables: queue marks, records of what it did, LLM spend, erasures.

A mark belongs to one written statement (a fact id: in this store a
changed value is a new fact, so a revision carries its own mark): ``owed`` / ``none`` /
``judged`` (``errored`` when judging failed for good, ``dropped`` when owed too long).
A namespace the provider kept refusing waits in ``resolver_pauses`` until its pause ends.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Sequence

from ...identity import Namespace
from ...ports import Mark
from .connection import NS_WHERE, DuckDBConnection, ns_of, ns_params

ERASURE_ACTIVE = ("queued", "running", "failed")  # an abandoned or finished erasure does not hold writes


class DuckDBLedger:
    """``ResolverLedger`` over the home's connection.

    The PostgreSQL ledger (``postgres.ledger``) shares these statements but for list membership
    (``_in``) and the writes several processes may make at once."""

    _in = "list_contains(?, {})"  # a column is one of a list parameter

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db

    def resolver_watermark(self) -> int:
        found = self._db.meta("resolver_seq")
        return int(found) if found is not None else 0

    def put_marks(self, marks: Sequence[tuple], watermark: int, at: datetime) -> None:
        """Record marks (fact_id, namespace, key, sha, seq, mark, reason) and move the watermark."""
        with self._db.tx() as con:
            for fact_id, ns, key, sha, seq, mark, reason in marks:
                con.execute(
                    "INSERT INTO resolver_marks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, NULL, false)",
                    [fact_id, *ns_params(ns), key, sha, seq, mark, reason, at],
                )
            self._db.set_meta(con, "resolver_seq", str(watermark))

    def owed_marks(self, limit: int, skip_tenants: Sequence[str] = (), paused_at: datetime | None = None) -> list[Mark]:
        """Owed statements, taken in turns across namespaces (each namespace's newest first),
        leaving out a namespace paused at ``paused_at``: its rows take no place in the batch."""
        paused, params = "", [list(skip_tenants)]
        if paused_at is not None:
            paused = (
                " AND NOT EXISTS (SELECT 1 FROM resolver_pauses p WHERE p.tenant = m.tenant"
                " AND p.scope = m.scope AND p.owner_id = m.owner_id AND p.until > ?)"
            )
            params.append(paused_at)
        rows = self._db.rows(
            "SELECT fact_id, tenant, scope, owner_id, key, content_sha256, seq, mark, reason, attempts FROM ("
            " SELECT *, row_number() OVER (PARTITION BY tenant, scope, owner_id ORDER BY seq DESC) AS turn"
            f" FROM resolver_marks m WHERE mark = 'owed' AND NOT {self._in.format('tenant')}{paused}) AS owed"
            " ORDER BY turn, tenant, scope, owner_id LIMIT ?",
            [*params, limit],
        )
        return [Mark(r[0], ns_of(r[1], r[2], r[3]), r[4], r[5], int(r[6]), r[7], r[8], int(r[9])) for r in rows]

    def stamp(self, fact_id: str, mark: str, at: datetime, *, errored: bool = False, attempt: bool = False) -> None:
        with self._db.tx() as con:
            con.execute(
                "UPDATE resolver_marks SET mark = ?, judged_at = ?, errored = ?, "
                "attempts = attempts + ? WHERE fact_id = ?",
                [mark, at, errored, int(attempt), fact_id],
            )

    def count_attempt(self, fact_id: str) -> None:
        """One more paid attempt on a row that stays owed."""
        with self._db.tx() as con:
            con.execute("UPDATE resolver_marks SET attempts = attempts + 1 WHERE fact_id = ?", [fact_id])

    def drop_stale(self, before: datetime, at: datetime, reason: str, skip_tenants: Sequence[str] = ()) -> int:
        """Stamp ``dropped`` every row owed since before ``before``; its reason keeps why it was owed."""
        where = f"mark = 'owed' AND marked_at < ? AND NOT {self._in.format('tenant')}"
        params = [before, list(skip_tenants)]
        with self._db.tx() as con:
            count = con.execute(f"SELECT count(*) FROM resolver_marks WHERE {where}", params).fetchall()[0][0]
            con.execute(
                "UPDATE resolver_marks SET mark = 'dropped', judged_at = ?, "
                f"reason = ? || coalesce(reason, '') WHERE {where}",
                [at, reason, *params],
            )
        return int(count)

    def pause_namespace(self, namespace: Namespace, until: datetime, reason: str, at: datetime) -> None:
        with self._db.tx() as con:
            con.execute(f"DELETE FROM resolver_pauses WHERE {NS_WHERE}", ns_params(namespace))
            con.execute(
                "INSERT INTO resolver_pauses VALUES (?, ?, ?, ?, ?, ?)", [*ns_params(namespace), at, until, reason]
            )

    def paused_namespaces(self, at: datetime) -> list[Namespace]:
        rows = self._db.rows(
            "SELECT tenant, scope, owner_id FROM resolver_pauses WHERE until > ? ORDER BY 1, 2, 3", [at]
        )
        return [ns_of(*r) for r in rows]

    def resolver_stop(self) -> str:
        """Why the last pass that reached the provider stopped ('' when it did not)."""
        return self._db.meta("resolver_stop") or ""

    def set_resolver_stop(self, cause: str) -> None:
        with self._db.tx() as con:
            self._db.set_meta(con, "resolver_stop", cause)

    def record_resolution(self, record: dict[str, Any]) -> None:
        cols = (
            "record_id",
            "tenant",
            "scope",
            "owner_id",
            "action",
            "judged_fact",
            "peer_fact",
            "peer_key",
            "verdict",
            "confidence",
            "judge",
            "recorded_at",
            "reason",
        )
        with self._db.tx() as con:
            con.execute(
                f"INSERT INTO resolver_records VALUES ({', '.join('?' * len(cols))})", [record[c] for c in cols]
            )

    def resolver_records(self, namespace: Namespace | None = None) -> list[dict[str, Any]]:
        where, params = ("TRUE", []) if namespace is None else (NS_WHERE, ns_params(namespace))
        return self._db.dicts(f"SELECT * FROM resolver_records WHERE {where} ORDER BY recorded_at, record_id", params)

    def mark_counts(self) -> dict[str, int]:
        return {m: int(n) for m, n in self._db.rows("SELECT mark, count(*) FROM resolver_marks GROUP BY mark", [])}

    # -- spend and erasures ----------------------------------------------------------------------

    def add_spend(self, ns: Namespace, day: date, purpose: str, cost_usd: float) -> None:
        with self._db.tx() as con:
            where, params = f"{NS_WHERE} AND day = ? AND purpose = ?", [*ns_params(ns), day, purpose]
            found = con.execute(f"SELECT 1 FROM llm_spend WHERE {where}", params).fetchall()
            if found:
                con.execute(
                    f"UPDATE llm_spend SET calls = calls + 1, cost_usd = cost_usd + ? WHERE {where}",
                    [cost_usd, *params],
                )
            else:
                con.execute("INSERT INTO llm_spend VALUES (?, ?, ?, ?, ?, 1, ?)", [*params, cost_usd])

    def spend(self, ns: Namespace, day: date, purpose: str | None = None) -> float:
        sql = f"SELECT coalesce(sum(cost_usd), 0) FROM llm_spend WHERE {NS_WHERE} AND day = ?"
        params: list[Any] = [*ns_params(ns), day]
        if purpose is not None:
            sql, params = sql + " AND purpose = ?", [*params, purpose]
        return float(self._db.rows(sql, params)[0][0])

    def set_erasure(self, tenant: str, status: str, at: datetime) -> None:
        """Record the state of a tenant's erasure (queued, running, failed, done, abandoned)."""
        with self._db.tx() as con:
            con.execute("DELETE FROM erasures WHERE tenant = ?", [tenant])
            con.execute("INSERT INTO erasures VALUES (?, ?, ?, ?)", [tenant, status, at, at])

    def erasure_under_way(self, tenant: str) -> bool:
        return bool(
            self._db.rows(
                f"SELECT 1 FROM erasures WHERE tenant = ? AND {self._in.format('status')}",
                [tenant, list(ERASURE_ACTIVE)],
            )
        )

    def tenants_under_erasure(self) -> list[str]:
        return [
            r[0]
            for r in self._db.rows(
                f"SELECT tenant FROM erasures WHERE {self._in.format('status')}", [list(ERASURE_ACTIVE)]
            )
        ]
