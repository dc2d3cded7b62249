from __future__ import annotations

from typing import Iterator

import pytest

from memory_core.adapters.postgres.connection import PgConnection
from memory_core.adapters.postgres.opening import StoreUrl
from memory_core.adapters.postgres.schema import migrate
from tests.pg import fresh_store_url


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A store URL on a fresh schema of the test server (dropped after the test)."""
    yield from fresh_store_url()


def connect(url: str) -> PgConnection:
    """A migrated connection to the schema ``url`` names (another "process" of the same store)."""
    where = StoreUrl.parse(url)
    db = PgConnection(where.conninfo, where.schema)
    migrate(db)
    db.keyed()
    return db


@pytest.fixture
def pg_db(pg_url: str) -> Iterator[PgConnection]:
    """A migrated ``PgConnection`` on a fresh schema."""
    db = connect(pg_url)
    try:
        yield db
    finally:
        db.close()
