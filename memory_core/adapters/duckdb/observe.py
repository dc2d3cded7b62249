"""``ObserveStore`` over the home's DuckDB file: ``observe_sessions``, one row per crystallized
session of a namespace. The statements are plain SQL that PostgreSQL runs as written
(``postgres.observe``): a claim is one conditional ``UPDATE`` per session, so of two workers
claiming together the second finds the row no longer ready and takes nothing."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Sequence

from ...identity import Namespace
from ...ports.observe import ObserveSession
from .connection import NS_WHERE, DuckDBConnection, ns_of, ns_params
from .schema import utc
from .schema_observe import OBSERVE_SESSION_COLUMNS

_COLS = ", ".join(OBSERVE_SESSION_COLUMNS)
_ONE = f"{NS_WHERE} AND session = ?"
_DUE = "(status = 'ready' OR (status = 'running' AND lease_expires_at <= ?))"


def _session(row: Sequence[Any]) -> ObserveSession:
    d = dict(zip(OBSERVE_SESSION_COLUMNS, row))
    return ObserveSession(
        ns_of(d["tenant"], d["scope"], d["owner_id"]),
        d["session"],
        d["status"],
        int(d["observations"]),
        json.loads(d["identity"]),
        utc(d["crystallized_at"]),
        d["crystallized_by"],
        int(d["attempts"]),
        utc(d["finished_at"]),
        json.loads(d["result"]) if d["result"] else None,
        d["last_error"],
    )


class DuckDBObserve:
    _on_conflict = ""  # the home's one writer: the read before the insert is enough

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db

    def crystallize(
        self,
        namespace: Namespace,
        session: str,
        *,
        observations: int,
        identity: dict[str, Any],
        actor: str,
        now: datetime,
    ) -> tuple[ObserveSession, bool]:
        key = [*ns_params(namespace), session]
        with self._db.tx() as tx:
            found = tx.execute(f"SELECT {_COLS} FROM observe_sessions WHERE {_ONE}", key).fetchall()
            if found:
                return _session(found[0]), False
            row = [*key, "ready", observations, json.dumps(identity, sort_keys=True), now, actor]
            row += [None, None, 0, None, None, None]
            written = tx.execute(
                f"INSERT INTO observe_sessions ({_COLS}) VALUES ({', '.join('?' * len(row))}){self._on_conflict} "
                "RETURNING session",
                row,
            ).fetchall()
            if not written:  # another replica crystallized it meanwhile: its row stands
                found = tx.execute(f"SELECT {_COLS} FROM observe_sessions WHERE {_ONE}", key).fetchall()
                return _session(found[0]), False
        return _session(row), True

    def session(self, namespace: Namespace, session: str) -> ObserveSession | None:
        rows = self._db.rows(f"SELECT {_COLS} FROM observe_sessions WHERE {_ONE}", [*ns_params(namespace), session])
        return _session(rows[0]) if rows else None

    def claim(self, worker: str, now: datetime, *, lease_s: float, limit: int) -> list[ObserveSession]:
        until = now + timedelta(seconds=lease_s)
        claimed = []
        with self._db.tx() as tx:
            due = tx.execute(
                f"SELECT tenant, scope, owner_id, session FROM observe_sessions WHERE {_DUE} "
                "ORDER BY crystallized_at, tenant, scope, owner_id, session LIMIT ?",
                [now, limit],
            ).fetchall()
            for key in due:
                taken = tx.execute(
                    "UPDATE observe_sessions SET status = 'running', lease_owner = ?, lease_expires_at = ?, "
                    f"attempts = attempts + 1 WHERE {_ONE} AND {_DUE} RETURNING {_COLS}",
                    [worker, until, *key, now],
                ).fetchall()
                claimed += [_session(r) for r in taken]
        return claimed

    def finish(
        self,
        session: ObserveSession,
        worker: str,
        now: datetime,
        *,
        status: str,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        spent: bool = True,
    ) -> bool:
        body = json.dumps(result, sort_keys=True) if result is not None else None
        ended = now if status in ("done", "failed") else None
        with self._db.tx() as tx:
            kept = tx.execute(
                "UPDATE observe_sessions SET status = ?, lease_owner = NULL, lease_expires_at = NULL, "
                "finished_at = ?, result = ?, last_error = ?, attempts = attempts - ? "
                f"WHERE {_ONE} AND status = 'running' AND lease_owner = ? RETURNING session",
                [status, ended, body, error, 0 if spent else 1, *ns_params(session.namespace), session.session, worker],
            ).fetchall()
        return bool(kept)
