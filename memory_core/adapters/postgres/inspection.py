"""What the platform reads about a PostgreSQL authority, by name: the DuckDB adapter's reads
(counts and summaries, the invariants the asset checks assert, the catalog, a tenant's report, the
platform's markers), but for what PostgreSQL says its own way (each fact's newest version, a
JSON attribute), the schema the tables live in, and ``tables()``, read in one snapshot since
other processes write meanwhile. Every table's role is the DuckDB adapter's ``TABLE_CLASSES``:
the tables are the same."""

from __future__ import annotations

from typing import Any

from psycopg.pq import TransactionStatus

from ..duckdb.erasure_rules import ERASURE_RULES
from ..duckdb.inspection import TABLE_CLASSES, DuckDBInspection
from .connection import PgConnection


class PgInspection(DuckDBInspection):
    """``Inspection`` over the authority's pool."""

    _db: PgConnection  # type: ignore[assignment]  # the base class types its DuckDB connection
    _latest = "SELECT DISTINCT ON (fact_id) {cols} FROM memory_versions WHERE {where} ORDER BY fact_id, version DESC"
    _prov_tenant = "(attrs::jsonb ->> 'prov_tenant')"

    def __init__(self, db: PgConnection) -> None:
        super().__init__(db)  # type: ignore[arg-type]  # the same reads

    def _relations(self) -> list[str]:
        """The schema's tables and views (``memory_heads``), by name, as DuckDB lists its own."""
        return [
            r[0]
            for r in self._db.rows(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY 1",
                [self._db.schema],
            )
        ]

    def unclassified_tables(self) -> list[str]:
        """Tables without a role, or without an erasure rule (``erasure_rules``): an erasure's
        census could not say it looked there."""
        return [t for t in self._relations() if t not in TABLE_CLASSES or t not in ERASURE_RULES]

    def tables(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table (and view) of the schema, ordered by every column: two equal
        answers mean nothing was written between. Read in one snapshot (a read-only repeatable-read
        transaction, or the caller's own), so a write committing meanwhile is wholly in it or not."""
        names = self._relations()
        with self._db.connection() as con:
            if con.info.transaction_status != TransactionStatus.IDLE:
                return {t: _all_rows(con, t) for t in names}
            with con.transaction():
                con.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return {t: _all_rows(con, t) for t in names}


def _all_rows(con: Any, table: str) -> list[tuple[Any, ...]]:
    width = len(con.execute(f'SELECT * FROM "{table}" LIMIT 0').description)
    order = ", ".join(str(i) for i in range(1, width + 1))
    return con.execute(f'SELECT * FROM "{table}" ORDER BY {order}').fetchall()
