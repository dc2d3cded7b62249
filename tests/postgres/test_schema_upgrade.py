"""An authority made by the previous schema (v1) is brought to the current one when a process
opens it: the seed-surface tables of v2 appear, and what v1 held stays, its commit floor included
(resetting it would make audit rows written since hash their keys as plain text again)."""

from __future__ import annotations

from memory_core.adapters.duckdb.schema_surface import SURFACE_DDLS
from memory_core.adapters.postgres.connection import PgConnection
from memory_core.adapters.postgres.schema import COMMIT_FLOOR, PG_SCHEMA_VERSION, translated
from tests.postgres.conftest import connect


def _surface_tables() -> list[str]:
    return [s.split("EXISTS", 1)[1].split("(", 1)[0].strip() for d in SURFACE_DDLS for s in translated(d)]


def _tables(db: PgConnection) -> set[str]:
    return {r[0] for r in db.rows("SELECT tablename FROM pg_tables WHERE schemaname = ?", [db.schema])}


def test_a_v1_authority_gains_the_surface_tables_and_keeps_its_floor(pg_url: str, pg_db: PgConnection) -> None:
    surface = _surface_tables()
    assert surface and set(surface) <= _tables(pg_db)
    with pg_db.tx() as tx:  # the authority as v1 left it: no surface table, a floor moved on
        for table in surface:
            tx.execute(f'DROP TABLE "{pg_db.schema}"."{table}"')
        PgConnection.set_meta(tx, "schema_version", "1")
        PgConnection.set_meta(tx, COMMIT_FLOOR, "42")
    assert not set(surface) & _tables(pg_db)

    again = connect(pg_url)  # another process opens it
    try:
        assert set(surface) <= _tables(again)
        assert again.meta("schema_version") == PG_SCHEMA_VERSION
        assert again.meta(COMMIT_FLOOR) == "42"
    finally:
        again.close()
