"""The embedded authoritative store: one DuckDB file in the memory home.

``memory_versions`` is append-only: every change appends rows, nothing is updated in place
except by ``redact``. The head of a key is its newest row (the ``memory_heads`` view).

DuckDB admits one writer process per file, so this adapter is the only writer while it is open.
That lets it keep a write-through cache of the latest fact states of each namespace it touched:
a point write reads the key from memory (a DuckDB point query costs milliseconds) and appends
in one transaction. The cache is updated only after a commit, and dropped by ``redact``.
"""

from __future__ import annotations

import dataclasses
import threading
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import duckdb

from ..audit import GENESIS_HASH, AuditEntry, AuditReport, AuditRow, chain, verify
from ..errors import HomeNotFound, StoreCorrupted
from ..identity import Namespace, Scope
from ..model import VISIBLE_STATUSES, FactVersion
from .graph_tables import GraphTables
from .invariants import InvariantChecks
from .port import Head, StagedRows, WriteBatch
from .queue_tables import QueueTables
from .resolver_tables import ResolverTables
from .schema import (
    COLS,
    SCHEMA_VERSION,
    STAGED_INSERT,
    VERSION_COLUMNS,
    arrow_versions,
    attrs_json,
    migrate,
    row_to_version,
    stored_schema_version,
    utc,
    version_params,
)
from .settings import SettingsTables

DB_FILE = "memory.duckdb"
_ARROW_INSERT_ABOVE = 32  # rows; below this one multi-row VALUES insert is faster

# The latest state of every fact, optionally as the store held it at a transaction time.
_LATEST = """
SELECT {cols} FROM memory_versions
WHERE {where}
QUALIFY row_number() OVER (PARTITION BY fact_id ORDER BY version DESC) = 1
"""
_NS = "tenant = ? AND scope = ? AND owner_id = ?"

KeyFacts = dict[str, FactVersion]  # fact_id -> latest state


def _ns_params(ns: Namespace) -> list[Any]:
    return [ns.tenant, ns.scope.value, ns.owner_id]


class DuckDBStore(SettingsTables, GraphTables, QueueTables, ResolverTables, InvariantChecks):
    """``VersionStore`` over one DuckDB file."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> None:
        self._con = con
        self.path = path
        self.read_only = read_only
        self._lock = threading.RLock()
        self._cache: dict[Namespace, dict[str, KeyFacts]] = {}
        self._seq = 0
        self._audit_head: tuple[int, str] = (0, GENESIS_HASH)

    @classmethod
    def open(cls, home: Path, *, create: bool = True, read_only: bool = False) -> "DuckDBStore":
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
        store = cls(con, db_path, read_only)
        if not read_only:
            with store._tx() as tx:
                migrate(tx)
        found = stored_schema_version(con)
        if found != SCHEMA_VERSION:
            con.close()
            raise StoreCorrupted(f"{db_path} has schema version {found or 'none'}, this build reads {SCHEMA_VERSION}")
        store._seq = int(con.execute("SELECT coalesce(max(seq), 0) FROM memory_versions").fetchall()[0][0])
        store._audit_head = store._stored_audit_head()
        return store

    @contextmanager
    def _tx(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._lock:
            self._con.execute("BEGIN TRANSACTION")
            try:
                yield self._con
            except BaseException:
                self._con.execute("ROLLBACK")
                raise
            self._con.execute("COMMIT")

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store for a read-decide-apply sequence so no other thread writes between."""
        with self._lock:
            yield

    def close(self) -> None:
        self._con.close()

    # -- reads ---------------------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._con.execute(sql, list(params)).fetchall()

    def _namespace(self, ns: Namespace) -> dict[str, KeyFacts]:
        """The cached latest states of a namespace, loaded in one query on first touch."""
        found = self._cache.get(ns)
        if found is None:
            found = {}
            for row in self._rows(_LATEST.format(cols=COLS, where=_NS), _ns_params(ns)):
                state = row_to_version(row)
                found.setdefault(state.key, {})[state.fact_id] = state
            self._cache[ns] = found
        return found

    def namespace_states(self, ns: Namespace) -> dict[str, list[FactVersion]]:
        """Every key of ``ns`` with the latest state of each of its facts, oldest version first."""
        with self._lock:
            return {k: sorted(v.values(), key=lambda s: s.version) for k, v in self._namespace(ns).items()}

    def has_key(self, namespace: Namespace, key: str) -> bool:
        with self._lock:
            return key in self._namespace(namespace)

    def fact_state(self, namespace: Namespace, key: str, fact_id: str) -> FactVersion | None:
        """The latest state of one fact, from the namespace cache."""
        with self._lock:
            return self._namespace(namespace).get(key, {}).get(fact_id)

    def head(self, namespace: Namespace, key: str) -> Head | None:
        with self._lock:
            facts = self._namespace(namespace).get(key)
        if not facts:
            return None
        newest = max(facts.values(), key=lambda s: s.version)
        return Head(namespace, key, newest.version, newest.status.value, newest.id, newest.created_at)

    def fact_states(self, namespace: Namespace, key: str, known_at: datetime | None = None) -> list[FactVersion]:
        if known_at is None:
            with self._lock:
                return sorted(self._namespace(namespace).get(key, {}).values(), key=lambda s: s.version)
        sql = _LATEST.format(cols=COLS, where=f"{_NS} AND key = ? AND created_at <= ?") + " ORDER BY version"
        return [row_to_version(r) for r in self._rows(sql, [*_ns_params(namespace), key, known_at])]

    def history(self, namespace: Namespace, key: str) -> list[FactVersion]:
        rows = self._rows(
            f"SELECT {COLS} FROM memory_versions WHERE {_NS} AND key = ? ORDER BY version",
            [*_ns_params(namespace), key],
        )
        return [row_to_version(r) for r in rows]

    def states_known_at(self, namespace: Namespace, known_at: datetime) -> dict[str, list[FactVersion]]:
        """What the store held for every key of ``namespace`` at transaction time ``known_at``."""
        sql = _LATEST.format(cols=COLS, where=f"{_NS} AND created_at <= ?") + " ORDER BY key, version"
        out: dict[str, list[FactVersion]] = {}
        for row in self._rows(sql, [*_ns_params(namespace), known_at]):
            state = row_to_version(row)
            out.setdefault(state.key, []).append(state)
        return out

    def live_facts(self, namespace: Namespace, as_of: datetime, known_at: datetime | None = None) -> list[FactVersion]:
        where, params = _NS, _ns_params(namespace)
        if known_at is not None:
            where += " AND created_at <= ?"
            params = [*params, known_at]
        sql = (
            f"WITH latest AS ({_LATEST.format(cols=COLS, where=where)}) SELECT {COLS} FROM latest "
            f"WHERE status IN {VISIBLE_STATUSES!r} AND valid_at <= ? AND (invalid_at IS NULL OR ? < invalid_at) "
            "ORDER BY key, version"
        )
        return [row_to_version(r) for r in self._rows(sql, [*params, as_of, as_of])]

    def catalog(self) -> list[tuple[str, str, str, str]]:
        """Every (tenant, scope, owner_id, key) the store holds, sorted: what a reviewer picks from."""
        return [
            tuple(r)
            for r in self._rows("SELECT tenant, scope, owner_id, key FROM memory_heads ORDER BY 1, 2, 3, 4", [])
        ]

    def keys(self, namespace: Namespace) -> list[str]:
        """Every key of ``namespace``, from the cache."""
        with self._lock:
            return list(self._namespace(namespace))

    def expired_keys(self, now: datetime) -> dict[Namespace, list[str]]:
        """The keys holding a served fact whose expires_at has passed, by namespace."""
        sql = (
            "WITH latest AS ("
            + _LATEST.format(cols="tenant, scope, owner_id, key, status, expires_at", where="expires_at IS NOT NULL")
            + ") "
            f"SELECT DISTINCT tenant, scope, owner_id, key FROM latest WHERE status IN {VISIBLE_STATUSES!r} "
            "AND expires_at <= ? ORDER BY 1, 2, 3, 4"
        )
        out: dict[Namespace, list[str]] = {}
        for tenant, scope, owner_id, key in self._rows(sql, [now]):
            out.setdefault(Namespace(tenant, Scope(scope), owner_id), []).append(key)
        return out

    def rows_since(self, seq: int, until: int | None = None) -> list[str]:
        """Fact ids with a version row appended after global sequence number ``seq`` (and at or
        before ``until``)."""
        if until is not None and until <= seq:
            return []
        sql, params = "SELECT DISTINCT fact_id FROM memory_versions WHERE seq > ?", [seq]
        if until is not None:
            sql, params = sql + " AND seq <= ?", [seq, until]
        return [r[0] for r in self._rows(sql, params)]

    @property
    def last_seq(self) -> int:
        return self._seq

    def overlapping_intervals(self) -> list[dict[str, Any]]:
        """Every pair of visible facts of one key whose valid intervals overlap (should be none)."""
        latest = _LATEST.format(cols="*", where="TRUE")
        sql = f"""
        WITH latest AS ({latest}),
        vis AS (SELECT * FROM latest WHERE status IN {VISIBLE_STATUSES!r}
                AND (invalid_at IS NULL OR invalid_at > valid_at))
        SELECT a.tenant, a.scope, a.owner_id, a.key, a.fact_id, b.fact_id
        FROM vis a JOIN vis b ON a.tenant = b.tenant AND a.scope = b.scope AND a.owner_id = b.owner_id
            AND a.key = b.key AND a.fact_id < b.fact_id
        WHERE a.valid_at < coalesce(b.invalid_at, 'infinity'::TIMESTAMPTZ)
          AND b.valid_at < coalesce(a.invalid_at, 'infinity'::TIMESTAMPTZ)
        ORDER BY 1, 2, 3, 4
        """
        cols = ("tenant", "scope", "owner_id", "key", "fact_id", "other_fact_id")
        return [dict(zip(cols, r)) for r in self._rows(sql, [])]

    def table_counts(self) -> dict[str, int]:
        return {
            table: int(self._rows(f"SELECT count(*) FROM {table}", [])[0][0])
            for table in ("memory_versions", "memory_heads", "audit_log", "projection_failures")
        }

    def summary(self) -> dict[str, Any]:
        """Counts a report or an asset prints: tables, namespaces, ops, current states."""
        one = lambda sql: int(self._rows(sql, [])[0][0])  # noqa: E731
        latest = _LATEST.format(cols="status", where="TRUE")
        return {
            "tables": self.table_counts(),
            "tenants": one("SELECT count(DISTINCT tenant) FROM memory_heads"),
            "owners": one("SELECT count(DISTINCT (tenant, scope, owner_id)) FROM memory_heads"),
            "keys": one("SELECT count(*) FROM memory_heads"),
            "tombstoned_keys": one("SELECT count(*) FROM memory_heads WHERE status = 'tombstoned'"),
            "versions_by_op": dict(self._rows("SELECT op, count(*) FROM memory_versions GROUP BY op ORDER BY op", [])),
            "facts_by_status": dict(
                self._rows(f"SELECT status, count(*) FROM ({latest}) GROUP BY status ORDER BY status", [])
            ),
        }

    def latest_states(self, fact_ids: Sequence[str] | None = None) -> list[FactVersion]:
        """The latest row of each named fact (of every fact when ``fact_ids`` is None)."""
        if fact_ids is not None and not fact_ids:
            return []
        where, params = ("TRUE", []) if fact_ids is None else ("list_contains(?, fact_id)", [list(fact_ids)])
        return [
            row_to_version(r) for r in self._rows(_LATEST.format(cols=COLS, where=where) + " ORDER BY fact_id", params)
        ]

    def pending_projection_failures(self, namespace: Namespace | None = None) -> list[str]:
        """Fact ids whose index write failed and has not been repaired yet."""
        sql = "SELECT DISTINCT fact_id FROM projection_failures WHERE resolved_at IS NULL"
        params: list[Any] = []
        if namespace is not None:
            sql += f" AND {_NS}"
            params = _ns_params(namespace)
        return [r[0] for r in self._rows(sql + " ORDER BY fact_id", params)]

    def marker(self, name: str) -> str | None:
        """A named note the platform keeps about the store (a corpus loaded, ...)."""
        found = self._rows("SELECT value FROM meta WHERE name = ?", [f"marker:{name}"])
        return found[0][0] if found else None

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Read-only helper for reports and checks: rows as dicts."""
        with self._lock:
            cursor = self._con.execute(sql, list(params))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, r)) for r in cursor.fetchall()]

    # -- writes --------------------------------------------------------------------------------

    def record_projection_failure(self, states: Sequence[FactVersion], error: str, at: datetime) -> None:
        with self._tx() as con:
            con.executemany(
                "INSERT INTO projection_failures VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                [[s.fact_id, s.tenant, s.scope.value, s.owner_id, s.key, error[:500], at] for s in states],
            )

    def resolve_projection_failures(self, fact_ids: Sequence[str], at: datetime) -> None:
        with self._tx() as con:
            con.execute(
                "UPDATE projection_failures SET resolved_at = ? "
                "WHERE resolved_at IS NULL AND list_contains(?, fact_id)",
                [at, list(fact_ids)],
            )

    def set_marker(self, name: str, value: str) -> None:
        with self._tx() as con:
            con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [f"marker:{name}", value])

    def apply(
        self,
        batch: WriteBatch,
        *,
        snapshot: tuple[str, int] | None = None,
        before_commit: Callable[[], None] | None = None,
        staged: StagedRows | None = None,
    ) -> None:
        """Append the batch's rows and audit rows in one transaction; then update the cache.

        ``snapshot`` (id, keys) records a snapshot restore in the same transaction, so a restore
        is idempotent per snapshot id. ``before_commit`` runs last inside the transaction: if it
        raises, nothing is written (a batch waits there for work it started beside the insert).
        ``staged``: more new rows, given as columns, appended after the batch's rows; the caller
        puts them in the cache (``remember``) once it has them as rows."""
        rows = batch.rows
        extra = staged.count if staged is not None else 0
        with self._lock:
            first = self._seq + 1
            # Each row names the audit row that records it: a chain missing its newest rows is caught.
            audit_seq = self._audit_head[0] + len(batch.audits) if batch.audits else None
            with self._tx() as con:
                if len(rows) > _ARROW_INSERT_ABOVE:
                    self._insert_staged(con, arrow_versions(first, rows, audit_seq))
                elif rows:
                    marks = "(" + ", ".join("?" * len(VERSION_COLUMNS)) + ")"
                    con.execute(
                        f"INSERT INTO memory_versions ({COLS}) VALUES " + ", ".join([marks] * len(rows)),
                        [p for i, r in enumerate(rows) for p in version_params(first + i, r, audit_seq)],
                    )
                if extra:
                    self._insert_staged(con, staged.table(first + len(rows), audit_seq))
                self.follow_graph(con, rows)
                if snapshot is not None:
                    audit = batch.audits[0]
                    con.execute(
                        "INSERT INTO snapshots_restored VALUES (?, ?, ?, ?, ?, ?)",
                        [snapshot[0], audit.tenant, audit.scope, audit.owner_id, audit.at, snapshot[1]],
                    )
                audit_head = self._chain_audit(con, batch.audits, recorded_by_rows=bool(rows) or extra > 0)
                if before_commit is not None:
                    before_commit()
            self._seq += len(rows) + extra
            self._audit_head = audit_head
            self.remember(rows)

    @staticmethod
    def _insert_staged(con: duckdb.DuckDBPyConnection, table: Any) -> None:
        con.register("incoming_versions", table)
        try:
            con.execute(STAGED_INSERT.format(source="incoming_versions"))
        finally:
            con.unregister("incoming_versions")

    def remember(self, rows: Sequence[FactVersion]) -> None:
        """Put committed rows in the namespace cache (for namespaces it holds)."""
        with self._lock:
            owner, cached = None, None
            for row in rows:
                if (row.tenant, row.scope, row.owner_id) != owner:  # a batch is mostly one namespace
                    owner = (row.tenant, row.scope, row.owner_id)
                    cached = self._cache.get(Namespace(*owner))
                if cached is not None:
                    facts = cached.setdefault(row.key, {})
                    known = facts.get(row.fact_id)
                    if known is None or known.version < row.version:
                        facts[row.fact_id] = row

    def redact(self, rows: Sequence[FactVersion], value_json: str, content_sha256: str, audit: AuditEntry) -> None:
        """Overwrite the value (and the words kept beside it) of the given version rows in place:
        the one edit the log allows."""
        with self._lock:
            with self._tx() as con:
                for row in rows:
                    scrubbed = dataclasses.replace(
                        row,
                        index_context=None,
                        relations=(),
                        provenance=dataclasses.replace(row.provenance, source_quote=None),
                    )
                    con.execute(
                        "UPDATE memory_versions SET value_json = ?, content_sha256 = ?, attrs = ? WHERE id = ?",
                        [value_json, content_sha256, attrs_json(scrubbed), row.id],
                    )
                self.forget_graph_of(con, sorted({r.fact_id for r in rows}))
                self._audit_head = self._chain_audit(con, [audit])
            self._cache.clear()
            self._con.execute("CHECKPOINT")  # fold the WAL, which still holds the old bytes

    def _chain_audit(
        self, con: duckdb.DuckDBPyConnection, entries: Sequence[AuditEntry], *, recorded_by_rows: bool = False
    ) -> tuple[int, str]:
        """Append the entries to the chain. The chain's head is known from the version rows'
        ``audit_seq`` when the write appended rows; otherwise it is kept in ``audit_head``."""
        seq, prev = self._audit_head
        for entry in entries:
            seq += 1
            row = chain(seq, entry, prev)
            e = row.entry
            con.execute(
                "INSERT INTO audit_log VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    row.seq,
                    e.at,
                    e.tenant,
                    e.scope,
                    e.owner_id,
                    e.key,
                    e.op,
                    e.version_ids,
                    e.content_sha256,
                    e.actor,
                    row.prev_hash,
                    row.row_hash,
                ],
            )
            prev = row.row_hash
        if entries and not recorded_by_rows:
            con.execute("DELETE FROM audit_head")
            con.execute("INSERT INTO audit_head VALUES (?, ?)", [seq, prev])
        return seq, prev

    def _stored_audit_head(self) -> tuple[int, str]:
        found = self._rows("SELECT seq, row_hash FROM audit_log ORDER BY seq DESC LIMIT 1", [])
        return (int(found[0][0]), found[0][1]) if found else (0, GENESIS_HASH)

    def index_watermark(self) -> int:
        found = self._rows("SELECT value FROM meta WHERE name = 'index_seq'", [])
        return int(found[0][0]) if found else 0

    def set_index_watermark(self, seq: int) -> None:
        with self._tx() as con:
            con.execute("INSERT OR REPLACE INTO meta VALUES ('index_seq', ?)", [str(seq)])

    def audit_rows(self) -> list[AuditRow]:
        rows = self._rows(
            "SELECT seq, written_at, tenant, scope, owner_id, key, op, version_ids, content_sha256, actor, prev_hash, "
            "row_hash FROM audit_log ORDER BY rowid",
            [],
        )
        return [
            AuditRow(
                seq=int(r[0]),
                entry=AuditEntry(
                    at=utc(r[1]),
                    tenant=r[2],
                    scope=r[3],
                    owner_id=r[4],
                    key=r[5],
                    op=r[6],
                    version_ids=r[7],
                    content_sha256=r[8],
                    actor=r[9],
                ),
                prev_hash=r[10],
                row_hash=r[11],
            )
            for r in rows
        ]

    def verify_audit(self) -> AuditReport:
        found = self._rows("SELECT seq, row_hash FROM audit_head", [])
        floor = self._rows("SELECT coalesce(max(audit_seq), 0) FROM memory_versions", [])[0][0]
        return verify(self.audit_rows(), (int(found[0][0]), found[0][1]) if found else None, int(floor))
