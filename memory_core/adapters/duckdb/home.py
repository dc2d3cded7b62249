"""The embedded authoritative store: one DuckDB file in the memory home, and its ports.

``DuckDBHome.open`` connects (creating and migrating the schema when writable) and builds one
class per port over the one connection, lock and audit chain: ``versions``, ``graph``,
``queue``, ``ledger``, ``settings``, ``projections`` and ``inspection``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import duckdb

from ...errors import HomeNotFound, SchemaOutdated, StoreCorrupted
from .audit_chain import AuditChain
from .connection import DuckDBConnection
from .graph import DuckDBGraph
from .inspection import DuckDBInspection
from .ledger import DuckDBLedger
from .projections import DuckDBProjections
from .queue import DuckDBQueue
from .schema import SCHEMA_VERSION, migrate, stored_schema_version
from .settings import DuckDBSettings
from .versions import DuckDBVersions

DB_FILE = "memory.duckdb"


class DuckDBHome:
    """``Store`` over one DuckDB file."""

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db
        self.home = db.path.parent
        self.read_only = db.read_only
        audit = AuditChain(db)
        self.graph = DuckDBGraph(db)
        self.versions = DuckDBVersions(db, audit, self.graph)
        self.queue = DuckDBQueue(db)
        self.ledger = DuckDBLedger(db)
        self.settings = DuckDBSettings(db, audit)
        self.projections = DuckDBProjections(db)
        self.inspection = DuckDBInspection(db)

    @classmethod
    def open(cls, home: Path, *, create: bool = True, read_only: bool = False) -> "DuckDBHome":
        home = Path(home)
        db_path = home / DB_FILE
        if not db_path.exists():
            if not create or read_only:
                raise HomeNotFound(
                    f"no memory store at {db_path}; write something first or point --home / MEMCORE_HOME "
                    "at an existing memory home",
                    home=str(home),
                )
            home.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(db_path), read_only=read_only)
        con.execute("SET TimeZone = 'UTC'")
        db = DuckDBConnection(con, db_path, read_only)
        if not read_only:
            with db.tx() as tx:
                migrate(tx)
        found = stored_schema_version(con)
        if found != SCHEMA_VERSION:
            con.close()
            if read_only and found is not None and found.isdigit() and int(found) < int(SCHEMA_VERSION):
                raise SchemaOutdated(
                    f"{db_path} has schema version {found}; this build reads {SCHEMA_VERSION}. Open it once "
                    "for writing (any memcore command does) to migrate it",
                    found=found,
                )
            raise StoreCorrupted(f"{db_path} has schema version {found or 'none'}, this build reads {SCHEMA_VERSION}")
        return cls(db)

    def unchecked_sql(self, statement: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run any statement on the home's connection, past every rule of the store: for tests that
        tamper with a home on purpose, and for an operator's one-off repair. Nothing in
        ``memory_core`` calls it. The caches are dropped, since the rows under them may change."""
        rows = self._db.dicts(statement, params)
        for cached in (self.versions, self.graph, self.queue):
            cached._forget_cache()
        return rows

    def close(self) -> None:
        self._db.close()
