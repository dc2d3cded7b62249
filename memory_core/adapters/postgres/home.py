"""A PostgreSQL authority and its ports: the ``Store`` several service replicas share.

``PgHome.open(url, home)`` connects to the schema the URL names (creating and migrating it
when writable) and builds one class per port over the one pool, write lock and audit chain.
``home`` is this process's local folder: its retrieval index (``lance/``), its signing key
(unless ``key_dir`` says elsewhere: replicas of one authority share one key), its per-scope SQL
databases, and the id that names its index's watermark in the authority (``replica``).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Sequence

from ...errors import HomeNotFound, SchemaOutdated, StoreCorrupted
from ..duckdb.home import KEY_DIR, _adoption_entry, _home_key
from ..home_key import HomeKey
from .api_keys import PgApiKeys
from .audit_chain import PgAuditChain
from .categories import PgCategories
from .communities import PgCommunities
from .connection import PgConnection
from .consolidation import PgConsolidation
from .dreams import PgDreams
from .erasure import PgErasure
from .feed import PgFeed
from .graph import PgGraph
from .inspection import PgInspection
from .learnings import PgLearnings
from .ledger import PgLedger
from .lineage import PgLineage
from .namespaces import PgNamespaces
from .observe import PgObserve
from .opening import UNREACHABLE_ERRORS, StoreUrl, unreachable
from .profiles import PgProfiles
from .projections import PgProjections
from .queue import PgQueue
from .reflect import PgReflect
from .schema import PG_SCHEMA_VERSION, migrate, stored_schema_version
from .settings import PgSettings
from .substrate import PgSubstrate
from .usage import PgUsage
from .versions import PgVersions
from .webhooks import PgWebhooks

REPLICA_FILE = "replica"


class PgHome:
    """``Store`` over one schema of a PostgreSQL database."""

    def __init__(
        self, db: PgConnection, home: Path, replica: str, key: HomeKey | None = None, *, new_key_dir: Path | None = None
    ) -> None:
        self._db = db
        self.home = home
        self.read_only = db.read_only
        self.replica = replica
        audit = PgAuditChain(db, key, new_key_dir=new_key_dir)
        self.graph = PgGraph(db)
        self.webhooks = PgWebhooks(db, audit)
        self.erasure = PgErasure(db, audit)
        self.substrate = PgSubstrate(db, self.webhooks)
        self.versions = PgVersions(db, audit, self.graph, self.substrate)
        self.queue = PgQueue(db)
        self.ledger = PgLedger(db)
        self.settings = PgSettings(db, audit)
        self.projections = PgProjections(db, replica)
        self.inspection = PgInspection(db)
        self.api_keys = PgApiKeys(db, audit)
        self.consolidation = PgConsolidation(db)
        self.dreams = PgDreams(db)
        self.communities = PgCommunities(db)
        self.profiles = PgProfiles(db, audit)
        self.learnings = PgLearnings(db)
        self.observe = PgObserve(db)
        self.categories = PgCategories(db, audit)
        self.namespaces = PgNamespaces(db)
        self.reflect = PgReflect(db)
        self.usage = PgUsage(db)
        self.lineage = PgLineage(db)
        self.feed = PgFeed(db)  # what the other replicas wrote (``session.follow``)

    @classmethod
    def open(
        cls,
        url: str,
        home: Path,
        *,
        create: bool = True,
        read_only: bool = False,
        key_dir: Path | None = None,
        pool_size: int = 16,
    ) -> "PgHome":
        """Connect to the authority at ``url`` with ``home`` as this process's local folder."""
        where = StoreUrl.parse(url)
        home = Path(home)
        try:
            db = PgConnection(where.conninfo, where.schema, read_only=read_only, max_size=pool_size)
        except UNREACHABLE_ERRORS as exc:
            raise unreachable(where, exc) from exc
        try:
            if create and not read_only:
                migrate(db)
            found = stored_schema_version(db)
            if found is None:
                raise HomeNotFound(
                    f"no memory store at {where.shown}; write something first, or point --store / MEMCORE_STORE "
                    "at an authority that holds one",
                    home=str(home),
                )
            if found != PG_SCHEMA_VERSION:
                if read_only and found.isdigit() and int(found) < int(PG_SCHEMA_VERSION):
                    raise SchemaOutdated(
                        f"{where.shown} has schema version {found}; open it once for writing", found=found
                    )
                raise StoreCorrupted(f"{where.shown} has schema version {found}, this build reads {PG_SCHEMA_VERSION}")
            db.keyed()
            if not read_only:
                home.mkdir(parents=True, exist_ok=True)
            key_dir = Path(key_dir) if key_dir is not None else home / KEY_DIR
            key = _home_key(db, key_dir)
            store = cls(db, home, _replica_id(home, read_only), key, new_key_dir=None if read_only else key_dir)
            if not read_only:
                store.versions.adopt_audit(_adoption_entry())
        except UNREACHABLE_ERRORS as exc:
            db.close()
            raise unreachable(where, exc) from exc
        except BaseException:
            db.close()
            raise
        return store

    def unchecked_sql(self, statement: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run any statement past every rule of the store (tests that tamper on purpose, an
        operator's repair). Nothing in ``memory_core`` calls it."""
        return self._db.dicts(statement, params)

    def close(self) -> None:
        self._db.close()


def _replica_id(home: Path, read_only: bool) -> str:
    """The id of this home's index in the authority: made once, kept in the home."""
    path = home / REPLICA_FILE
    if path.exists():
        return path.read_text().strip()
    replica = uuid.uuid4().hex[:16]
    if not read_only:
        path.write_text(replica + "\n")
    return replica
