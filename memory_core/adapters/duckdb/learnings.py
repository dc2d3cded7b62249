"""``LearningsStore`` over the home's DuckDB file: ``learnings_queue`` (one row per version of a
candidate) and ``learnings_supporters``. The statements are plain SQL PostgreSQL runs as written
(the newest version by a correlated ``max``), so the PostgreSQL adapter only adds its refusal of a
version appended twice."""

from __future__ import annotations

from typing import Any, Sequence

from ...extraction.learnings import Learning, Supporter
from .connection import DuckDBConnection
from .schema import utc

_Q = (
    "learning_id, version, tenant, scope, owner_id, rule, rule_sha256, status, created_at, recorded_at, "
    "decided_by, decided_at"
)
_S = "learning_id, tenant, scope, owner_id, user_id, agent, session, run, turn_id, quote, stated_at"
_NEWEST = (
    "version = (SELECT max(n.version) FROM learnings_queue n WHERE n.tenant = q.tenant "
    "AND n.learning_id = q.learning_id)"
)
_SUPPORTED = "EXISTS (SELECT 1 FROM learnings_supporters s WHERE s.tenant = q.tenant AND s.learning_id = q.learning_id)"


def _learning(r: dict[str, Any], supporters: tuple[Supporter, ...] = ()) -> Learning:
    return Learning(
        r["learning_id"],
        int(r["version"]),
        r["tenant"],
        r["scope"],
        r["owner_id"],
        r["rule"],
        r["rule_sha256"],
        r["status"],
        utc(r["created_at"]),
        utc(r["recorded_at"]),
        r["decided_by"],
        utc(r["decided_at"]),
        supporters,
    )


def _supporter(r: dict[str, Any]) -> Supporter:
    return Supporter(
        r["learning_id"],
        r["tenant"],
        r["user_id"],
        r["agent"],
        r["session"],
        r["run"],
        r["turn_id"],
        r["quote"],
        utc(r["stated_at"]),
    )


def learning_params(x: Learning) -> list[Any]:
    """A candidate's row, in ``_Q`` order."""
    head = [x.learning_id, x.version, x.tenant, x.scope, x.owner_id, x.rule, x.rule_sha256, x.status]
    return [*head, x.created_at, x.recorded_at, x.decided_by, x.decided_at]


class DuckDBLearnings:
    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db

    def _with_supporters(
        self, tenant: str, rows: list[dict[str, Any]], owner: tuple[str, str] | None
    ) -> list[Learning]:
        if not rows:
            return []
        ids = [r["learning_id"] for r in rows]
        where = "tenant = ? AND learning_id IN (" + ", ".join("?" * len(ids)) + ")"
        params: list[Any] = [tenant, *ids]
        if owner is not None:
            where += " AND scope = ? AND owner_id = ?"
            params += list(owner)
        found: dict[str, list[Supporter]] = {}
        for s in self._db.dicts(
            f"SELECT {_S} FROM learnings_supporters WHERE {where} ORDER BY stated_at, turn_id", params
        ):
            found.setdefault(s["learning_id"], []).append(_supporter(s))
        return [_learning(r, tuple(found.get(r["learning_id"], ()))) for r in rows]

    def find(self, tenant: str, scope: str, owner_id: str, rule_sha256: str) -> Learning | None:
        rows = self._db.dicts(
            f"SELECT {_Q} FROM learnings_queue q WHERE tenant = ? AND scope = ? AND owner_id = ? "
            f"AND rule_sha256 = ? AND {_NEWEST} ORDER BY created_at, learning_id LIMIT 1",
            [tenant, scope, owner_id, rule_sha256],
        )
        return _learning(rows[0]) if rows else None

    def learning(self, tenant: str, learning_id: str) -> Learning | None:
        rows = self._db.dicts(
            f"SELECT {_Q} FROM learnings_queue q WHERE tenant = ? AND learning_id = ? AND {_NEWEST}",
            [tenant, learning_id],
        )
        found = self._with_supporters(tenant, rows, None)
        return found[0] if found else None

    def record(self, learning: Learning) -> None:
        with self._db.tx() as con:
            con.execute(f"INSERT INTO learnings_queue ({_Q}) VALUES ({', '.join('?' * 12)})", learning_params(learning))

    def add_supporter(self, supporter: Supporter) -> bool:
        s = supporter
        scope, owner = s.owner
        params = [s.learning_id, s.tenant, scope, owner, s.user, s.agent, s.session, s.run, s.turn_id, s.quote, s.at]
        with self._db.tx() as con:
            known = con.execute(
                "SELECT count(*) FROM learnings_supporters WHERE tenant = ? AND learning_id = ? AND scope = ? "
                "AND owner_id = ? AND coalesce(session, '') = coalesce(CAST(? AS VARCHAR), '') AND turn_id = ?",
                [s.tenant, s.learning_id, scope, owner, s.session, s.turn_id],
            ).fetchall()[0][0]
            if known:
                return False
            con.execute(f"INSERT INTO learnings_supporters ({_S}) VALUES ({', '.join('?' * 11)})", params)
        return True

    def learnings(self, tenant: str, status: str | None, supporter: tuple[str, str] | None = None) -> list[Learning]:
        where, params = "tenant = ? AND (CAST(? AS VARCHAR) IS NULL OR status = ?)", [tenant, status, status]
        if supporter is not None:
            where += (
                " AND EXISTS (SELECT 1 FROM learnings_supporters s WHERE s.tenant = q.tenant "
                "AND s.learning_id = q.learning_id AND s.scope = ? AND s.owner_id = ?)"
            )
            params += list(supporter)
        rows = self._db.dicts(
            f"SELECT {_Q}, (SELECT min(f.recorded_at) FROM learnings_queue f WHERE f.tenant = q.tenant "
            f"AND f.learning_id = q.learning_id) AS first_at FROM learnings_queue q WHERE {where} AND {_NEWEST} "
            "ORDER BY first_at, learning_id",
            params,
        )
        return self._with_supporters(tenant, rows, supporter)

    def unsupported(self, tenant: str) -> list[Learning]:
        rows = self._db.dicts(
            f"SELECT {_Q} FROM learnings_queue q WHERE tenant = ? AND rule <> '' AND {_NEWEST} AND NOT {_SUPPORTED} "
            "ORDER BY learning_id",
            [tenant],
        )
        return [_learning(r) for r in rows]

    def settle(self, tenant: str, deleted: Sequence[Learning], rewritten: Sequence[Learning]) -> int:
        changed = 0
        # Bounded to what the caller read: a candidate decided (or supported) meanwhile stays.
        newest = (
            "NOT EXISTS (SELECT 1 FROM learnings_queue n WHERE n.tenant = ? AND n.learning_id = ? AND n.version > ?)"
        )
        alone = "NOT EXISTS (SELECT 1 FROM learnings_supporters s WHERE s.tenant = ? AND s.learning_id = ?)"
        with self._db.tx() as con:
            for x in deleted:
                bound = [x.tenant, x.learning_id, x.version, x.tenant, x.learning_id]
                gone = con.execute(
                    f"DELETE FROM learnings_queue WHERE tenant = ? AND learning_id = ? AND {newest} AND {alone} "
                    "RETURNING 1",
                    [x.tenant, x.learning_id, *bound],
                ).fetchall()
                changed += bool(gone)
            for x in rewritten:  # every version takes the new words: the old ones were the erased user's
                done = con.execute(
                    f"UPDATE learnings_queue SET rule = ? WHERE tenant = ? AND learning_id = ? AND {newest} "
                    "RETURNING 1",
                    [x.rule, x.tenant, x.learning_id, x.tenant, x.learning_id, x.version - 1],
                ).fetchall()
                if done:
                    con.execute(
                        f"INSERT INTO learnings_queue ({_Q}) VALUES ({', '.join('?' * 12)})", learning_params(x)
                    )
                    changed += 1
            con.execute(
                "DELETE FROM learnings_supporters WHERE tenant = ? AND NOT EXISTS (SELECT 1 FROM learnings_queue q "
                "WHERE q.tenant = learnings_supporters.tenant AND q.learning_id = learnings_supporters.learning_id)",
                [tenant],
            )
        return changed
