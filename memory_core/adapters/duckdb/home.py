"""The embedded authoritative store: one DuckDB file in the memory home, and its ports.

``DuckDBHome.open`` connects (creating and migrating the schema when writable) and builds one
class per port over the one connection, lock and audit chain: ``versions``, ``graph``,
``queue``, ``ledger``, ``settings``, ``projections`` and ``inspection``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import duckdb

from ...audit import AuditEntry
from ...errors import AuditKeyMissing, HomeNotFound, SchemaOutdated, StoreCorrupted
from ..home_key import HomeKey
from .api_keys import DuckDBApiKeys
from .audit_chain import AuditChain
from .categories import DuckDBCategories
from .communities import DuckDBCommunities
from .connection import DuckDBConnection
from .consolidation import DuckDBConsolidation
from .dreams import DuckDBDreams
from .erasure import DuckDBErasure
from .graph import DuckDBGraph
from .inspection import DuckDBInspection
from .learnings import DuckDBLearnings
from .ledger import DuckDBLedger
from .lineage import DuckDBLineage
from .migrations import SCHEMA_VERSION, migrate, stored_schema_version
from .namespaces import DuckDBNamespaces
from .observe import DuckDBObserve
from .opening import connect, make_folder, open_refusal, refuse_a_file
from .profiles import DuckDBProfiles
from .projections import DuckDBProjections
from .queue import DuckDBQueue
from .reflect import DuckDBReflect
from .settings import DuckDBSettings
from .substrate import DuckDBSubstrate
from .usage import DuckDBUsage
from .versions import DuckDBVersions
from .webhooks import DuckDBWebhooks

DB_FILE = "memory.duckdb"
KEY_DIR = "keys"


class DuckDBHome:
    """``Store`` over one DuckDB file."""

    def __init__(self, db: DuckDBConnection, key: HomeKey | None = None, *, new_key_dir: Path | None = None) -> None:
        self._db = db
        self.home = db.path.parent
        self.read_only = db.read_only
        audit = AuditChain(db, key, new_key_dir=new_key_dir)
        self.graph = DuckDBGraph(db)
        self.webhooks = DuckDBWebhooks(db, audit)
        self.erasure = DuckDBErasure(db, audit, self._forget_caches)
        self.substrate = DuckDBSubstrate(db, self.webhooks)
        self.versions = DuckDBVersions(db, audit, self.graph, self.substrate)
        self.queue = DuckDBQueue(db)
        self.ledger = DuckDBLedger(db)
        self.settings = DuckDBSettings(db, audit)
        self.projections = DuckDBProjections(db)
        self.inspection = DuckDBInspection(db)
        self.api_keys = DuckDBApiKeys(db, audit)
        self.consolidation = DuckDBConsolidation(db)
        self.dreams = DuckDBDreams(db)
        self.communities = DuckDBCommunities(db)
        self.profiles = DuckDBProfiles(db, audit)
        self.learnings = DuckDBLearnings(db)
        self.observe = DuckDBObserve(db)
        self.categories = DuckDBCategories(db, audit)
        self.namespaces = DuckDBNamespaces(db)
        self.reflect = DuckDBReflect(db)
        self.usage = DuckDBUsage(db)
        self.lineage = DuckDBLineage(db)
        self.feed = None  # the home's only writer: nothing changes behind its back

    @classmethod
    def open(
        cls, home: Path, *, create: bool = True, read_only: bool = False, key_dir: Path | None = None
    ) -> "DuckDBHome":
        """Open (or create) the home's store. ``key_dir`` holds the home's signing key (default
        ``<home>/keys``; created with the home, or when a writer opens a home that has none)."""
        home = Path(home)
        db_path = home / DB_FILE
        refuse_a_file(home)
        if not db_path.exists():
            if not create or read_only:
                raise HomeNotFound(
                    f"no memory store at {db_path}; write something first or point --home / MEMCORE_HOME "
                    "at an existing memory home",
                    home=str(home),
                )
            make_folder(home)
        con = connect(db_path, read_only)  # a held, damaged or unreadable file: a typed error
        try:
            con.execute("SET TimeZone = 'UTC'")
            db = DuckDBConnection(con, db_path, read_only)
            if not read_only:
                with db.tx() as tx:
                    migrate(tx)
            found = stored_schema_version(con)
        except duckdb.Error as exc:
            con.close()
            raise open_refusal(db_path, exc, connected=True) from exc
        if found != SCHEMA_VERSION:
            con.close()
            if read_only and found is not None and found.isdigit() and int(found) < int(SCHEMA_VERSION):
                raise SchemaOutdated(
                    f"{db_path} has schema version {found}; this build reads {SCHEMA_VERSION}. Open it once "
                    "for writing (any memcore command does) to migrate it",
                    found=found,
                )
            raise StoreCorrupted(f"{db_path} has schema version {found or 'none'}, this build reads {SCHEMA_VERSION}")
        key_dir = Path(key_dir) if key_dir is not None else home / KEY_DIR
        try:
            key = _home_key(db, key_dir)
        except BaseException:
            con.close()
            raise
        store = cls(db, key, new_key_dir=None if read_only else key_dir)
        if not read_only:
            try:
                store.versions.adopt_audit(_adoption_entry())
            except BaseException:
                store.close()
                raise
        return store

    def unchecked_sql(self, statement: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run any statement on the home's connection, past every rule of the store: for tests that
        tamper with a home on purpose, and for an operator's one-off repair. Nothing in
        ``memory_core`` calls it. The caches are dropped, since the rows under them may change."""
        rows = self._db.dicts(statement, params)
        self._forget_caches()
        return rows

    def _forget_caches(self) -> None:
        """Drop what the ports keep of the store in memory: rows under them changed outside their
        own writes (a statement by hand, an erasure's deletes)."""
        for cached in (self.versions, self.graph, self.queue, self.projections, self.usage):
            cached._forget_cache()
        self.webhooks.forget()

    def close(self) -> None:
        self._db.close()


def _home_key(db: Any, key_dir: Path) -> HomeKey | None:
    """The key this process signs (a writer) or verifies (a reader) the audit chain with. A writer
    without one makes one at its first write, unless the chain is already signed by a key it cannot
    find: writing on would leave a chain no key verifies. ``db``: either engine's connection (its
    ``read_only`` and ``rows``); replicas of a PostgreSQL authority share one key folder."""
    key = HomeKey.load(key_dir, private=not db.read_only)
    if db.read_only or (key is not None and key.can_sign):
        return key
    signed = db.rows("SELECT key_id FROM audit_head WHERE signature IS NOT NULL")
    if signed:
        raise AuditKeyMissing(
            f"this home's audit chain is signed by key {signed[0][0]}, whose private half is not in {key_dir}; "
            "open the home with the key directory that holds it (memcore --signing-keys DIR, Memory.open(key_dir=...))",
            key_id=signed[0][0],
        )
    return None


def _adoption_entry() -> AuditEntry:
    """The audit entry of a home's adoption of the rows it held before its chain bound data."""
    return AuditEntry(
        at=datetime.now(timezone.utc),
        tenant="*",
        scope="*",
        owner_id="*",
        key="*",
        op="adopt",
        version_ids="",
        content_sha256=None,
        actor="system:migration",
    )
