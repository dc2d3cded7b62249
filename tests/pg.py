"""PostgreSQL for the tests: a fresh schema per test in the server ``MEMCORE_TEST_PG_URL`` names
(``tests/services.py``: the loopback server every development and CI machine runs), dropped afterwards.

Without a reachable server the tests that need one skip, saying what they need; under CI
(``CI=true``) they fail instead: a missing service there is a broken machine, not a reason.
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.services import pg_url_or_skip


def pg_server_url() -> str:
    """The server's URL, or a skip (a failure under CI) naming what is missing."""
    return pg_url_or_skip()


def drop_schema(server: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as con:
        con.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


class SchemaPool:
    """Schemas a test is done with, emptied for the next one: creating a schema's tables costs
    about 0.6 s, emptying them a tenth of that. An emptied schema holds no store (its ``meta`` is
    empty too), so the next test opens it as new. One that cannot be emptied at once (a test left
    a connection holding a lock) is dropped instead. All are dropped when the process ends."""

    def __init__(self) -> None:
        self.free: list[str] = []
        self.made: set[str] = set()

    def take(self) -> str:
        if self.free:
            return self.free.pop()
        schema = f"t_{uuid.uuid4().hex[:12]}"
        self.made.add(schema)
        return schema

    def give_back(self, server: str, schema: str) -> None:
        import psycopg

        try:
            with psycopg.connect(server, autocommit=True) as con:
                con.execute("SET lock_timeout = '2s'")
                tables = [
                    r[0]
                    for r in con.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", [schema]).fetchall()
                ]
                if tables:
                    con.execute("TRUNCATE " + ", ".join(f'"{schema}"."{t}"' for t in tables))
            self.free.append(schema)
        except psycopg.Error:
            self.made.discard(schema)
            drop_schema(server, schema)

    def drop_all(self, server: str) -> None:
        for schema in sorted(self.made):
            drop_schema(server, schema)
        self.made.clear()
        self.free.clear()


POOL = SchemaPool()


def store_url(server: str, schema: str) -> str:
    return f"{server}{'&' if '?' in server else '?'}schema={schema}"


def fresh_store_url() -> Iterator[str]:
    """A store URL naming a schema that holds no store, emptied for another test afterwards."""
    server = pg_server_url()
    schema = POOL.take()
    try:
        yield store_url(server, schema)
    finally:
        POOL.give_back(server, schema)


@contextmanager
def on_postgres() -> Iterator[None]:
    """Every ``Memory.open`` that names no store opens its home over a PostgreSQL authority: one
    fresh schema per home folder (opened again, the same one), dropped afterwards. Patched apart
    from the test's own ``monkeypatch``, which a test may undo halfway."""
    from memory_core import Memory

    server = pg_server_url()
    schemas: dict[str, str] = {}
    original = Memory.open

    def open_on_postgres(cls: type, home: Any, **options: Any) -> Any:
        if options.get("store") is None:
            folder = str(Path(home).resolve())
            if folder not in schemas:
                schemas[folder] = POOL.take()
            options["store"] = store_url(server, schemas[folder])
        return original(home, **options)

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Memory, "open", classmethod(open_on_postgres))
            yield
    finally:
        for schema in schemas.values():
            POOL.give_back(server, schema)
