"""The authority's change feed: how far its audit chain has grown, and what its rows after a
position touched. Every write that changes what a read answers appends an audit row under the
authority's write lock, so the chain's seq orders the writes of every process in commit order."""

from __future__ import annotations

from .connection import PgConnection


class PgFeed:
    """``ChangeFeed`` over the ``audit_log`` table."""

    def __init__(self, db: PgConnection) -> None:
        self._db = db

    def position(self) -> int:
        return int(self._db.one("SELECT coalesce(max(seq), 0) FROM audit_log"))

    def changed_since(self, position: int) -> list[tuple[str, str, str, str]]:
        rows = self._db.rows(
            "SELECT DISTINCT tenant, scope, owner_id, op FROM audit_log WHERE seq > ? ORDER BY 1, 2, 3, 4", [position]
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]
