"""``NamespaceStore`` over the home's DuckDB file: ``namespace_states``, a log of deletes and
registers (who and when, no content)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...identity import Namespace
from ...lifecycle.namespaces import DELETED, REGISTERED
from .connection import NS_WHERE, DuckDBConnection, StoreCache, ns_of, ns_params

# Each namespace's newest state: a namespace is deleted while that row says so.
_NEWEST = (
    "SELECT tenant, scope, owner_id, state FROM ("
    " SELECT tenant, scope, owner_id, state,"
    "  row_number() OVER (PARTITION BY tenant, scope, owner_id ORDER BY seq DESC) AS newest"
    " FROM namespace_states) n WHERE newest = 1"
)


class DuckDBNamespaces:
    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db
        # Read on every commit: kept until this process (the home's only writer) changes it.
        self._deleted: Any = StoreCache(db, self._load)

    def _load(self) -> frozenset[Namespace]:
        return frozenset(ns_of(t, s, o) for t, s, o, state in self._db.rows(_NEWEST) if state == DELETED)

    def deleted(self) -> frozenset[Namespace]:
        return self._deleted.get()

    def set_state(self, namespace: Namespace, state: str, actor: str, at: datetime) -> bool:
        ns = ns_params(namespace)
        with self._db.tx() as con:
            found = con.execute(
                f"SELECT seq, state FROM namespace_states WHERE {NS_WHERE} ORDER BY seq DESC LIMIT 1", ns
            ).fetchall()
            current = found[0][1] if found else REGISTERED
            if current == state:
                return False
            seq = int(found[0][0]) + 1 if found else 1
            con.execute("INSERT INTO namespace_states VALUES (?, ?, ?, ?, ?, ?, ?)", [*ns, seq, state, at, actor])
        self._deleted.drop()
        return True
