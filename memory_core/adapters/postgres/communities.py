"""``CommunityStore`` over a PostgreSQL authority: ``entity_communities``, one row per namespace.
A derived table: rebuilt from the graph whenever it changes, so it is not audited.

The DuckDB adapter's reads run as written. Its write (delete, then insert) would leave two rows
when two replicas rebuild one namespace at once; here the row is unique per namespace (an index)
and replaced by one upsert."""

from __future__ import annotations

import json
from datetime import datetime

from ...graph.communities import Communities
from ...identity import Namespace
from ..duckdb.communities import _COLS, DuckDBCommunities
from ..duckdb.connection import ns_params
from .connection import PgConnection

_REPLACED = ", ".join(f"{c} = excluded.{c}" for c in _COLS.split(", "))


class PgCommunities(DuckDBCommunities):
    """``CommunityStore`` over the authority's pool."""

    def __init__(self, db: PgConnection) -> None:
        super().__init__(db)  # type: ignore[arg-type]  # the same reads

    def put(self, namespace: Namespace, result: Communities, algorithm: str, at: datetime) -> None:
        with self._db.tx() as tx:
            tx.execute(
                f"INSERT INTO entity_communities (tenant, scope, owner_id, {_COLS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                f"ON CONFLICT (tenant, scope, owner_id) DO UPDATE SET {_REPLACED}",
                [*ns_params(namespace), result.digest, algorithm, result.entities, result.edges, result.modularity]
                + [json.dumps([list(g) for g in result.groups], ensure_ascii=False), at],
            )
