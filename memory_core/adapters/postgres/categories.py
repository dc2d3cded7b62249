"""``CategoryStore`` over a PostgreSQL authority: the DuckDB adapter's statements, which PostgreSQL
runs as written, but for a column among a list of values (``= ANY``). Its audited transaction
holds the authority's write lock (``PgAuditChain.transaction``), so a name's, a pair's or an
edge's next version is taken by one writer at a time across replicas (and a unique index keeps
it so)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..duckdb.categories import DuckDBCategories
from .connection import PgConnection

if TYPE_CHECKING:
    from .audit_chain import PgAuditChain


class PgCategories(DuckDBCategories):
    """``CategoryStore`` over the authority's pool."""

    _among = "{column} = ANY(?)"

    def __init__(self, db: PgConnection, audit: PgAuditChain) -> None:
        super().__init__(db, audit)  # type: ignore[arg-type]  # the same reads and transactions
