"""``CommunityStore`` over the home's DuckDB file: ``entity_communities``, one row per namespace.
A derived table: rebuilt from the graph whenever it changes, so it is not audited."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ...graph.communities import Communities
from ...identity import Namespace
from .connection import NS_WHERE, DuckDBConnection, ns_of, ns_params
from .schema import utc

_COLS = "graph_digest, algorithm, entities, edges, modularity, communities, computed_at"


class DuckDBCommunities:
    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db

    def graph_namespaces(self) -> list[Namespace]:
        rows = self._db.rows(
            "SELECT DISTINCT tenant, scope, owner_id FROM graph_triples "
            "UNION SELECT tenant, scope, owner_id FROM entity_communities ORDER BY 1, 2, 3"
        )
        return [ns_of(*r) for r in rows]

    def stored(self, namespace: Namespace) -> dict[str, Any] | None:
        rows = self._db.rows(f"SELECT {_COLS} FROM entity_communities WHERE {NS_WHERE}", ns_params(namespace))
        if not rows:
            return None
        body = dict(zip(_COLS.split(", "), rows[0]))
        body["communities"] = json.loads(body["communities"])
        body["computed_at"] = utc(body["computed_at"])
        return body

    def put(self, namespace: Namespace, result: Communities, algorithm: str, at: datetime) -> None:
        ns = ns_params(namespace)
        with self._db.tx() as con:
            con.execute(f"DELETE FROM entity_communities WHERE {NS_WHERE}", ns)
            con.execute(
                f"INSERT INTO entity_communities (tenant, scope, owner_id, {_COLS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [*ns, result.digest, algorithm, result.entities, result.edges, result.modularity]
                + [json.dumps([list(g) for g in result.groups], ensure_ascii=False), at],
            )
