"""The embedded authoritative store: one DuckDB file in the memory home.

``memory_versions`` is append-only: every change appends rows, nothing is updated in place
(``redact`` will be the one exception). ``memory_heads`` keeps one row per key with its last
version number and status; only its unindexed columns are ever updated.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Sequence

import duckdb

from ..audit import GENESIS_HASH, AuditEntry, AuditReport, AuditRow, chain, verify
from ..errors import HomeNotFound, StoreCorrupted
from ..identity import Namespace, Scope
from ..model import VISIBLE_STATUSES, FactVersion, Kind, Op, Provenance, Status
from .port import Head, KeyChange

SCHEMA_VERSION = "2"
DB_FILE = "memory.duckdb"

_VERSION_COLUMNS = (
    "id", "fact_id", "tenant", "scope", "owner_id", "key", "value_json", "content_sha256", "kind",
    "memory_type", "status", "op", "version", "change_id", "observed_at", "valid_at", "invalid_at",
    "created_at", "superseded_by", "reinforcement_count", "prov_tenant", "prov_session", "prov_run",
    "prov_agent", "prov_model", "prov_source_quote", "prov_origin", "prov_actor", "changed_by", "subject",
    "index_context",
)
_COLS = ", ".join(_VERSION_COLUMNS)

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (name VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS memory_versions (
    id VARCHAR NOT NULL, fact_id VARCHAR NOT NULL,
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, key VARCHAR NOT NULL,
    value_json VARCHAR NOT NULL, content_sha256 VARCHAR NOT NULL, kind VARCHAR NOT NULL,
    memory_type VARCHAR NOT NULL, status VARCHAR NOT NULL, op VARCHAR NOT NULL,
    version BIGINT NOT NULL, change_id VARCHAR NOT NULL,
    observed_at TIMESTAMPTZ, valid_at TIMESTAMPTZ NOT NULL, invalid_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL, superseded_by VARCHAR, reinforcement_count INTEGER NOT NULL,
    prov_tenant VARCHAR NOT NULL, prov_session VARCHAR, prov_run VARCHAR, prov_agent VARCHAR,
    prov_model VARCHAR, prov_source_quote VARCHAR, prov_origin VARCHAR NOT NULL, prov_actor VARCHAR NOT NULL,
    changed_by VARCHAR NOT NULL, subject VARCHAR, index_context VARCHAR
);
CREATE INDEX IF NOT EXISTS memory_versions_by_key ON memory_versions (tenant, scope, owner_id, key);
CREATE TABLE IF NOT EXISTS memory_heads (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, key VARCHAR NOT NULL,
    version BIGINT NOT NULL, status VARCHAR NOT NULL, head_version_id VARCHAR NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant, scope, owner_id, key)
);
CREATE TABLE IF NOT EXISTS projection_failures (
    fact_id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    key VARCHAR NOT NULL, error VARCHAR NOT NULL, failed_at TIMESTAMPTZ NOT NULL, resolved_at TIMESTAMPTZ
);
CREATE TABLE IF NOT EXISTS audit_log (
    seq BIGINT NOT NULL, written_at TIMESTAMPTZ NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL,
    owner_id VARCHAR NOT NULL, key VARCHAR NOT NULL, op VARCHAR NOT NULL, version_ids VARCHAR NOT NULL,
    content_sha256 VARCHAR, actor VARCHAR NOT NULL, prev_hash VARCHAR NOT NULL, row_hash VARCHAR NOT NULL
);
"""

# The latest state of every fact, optionally as the store held it at a transaction time.
_LATEST = """
SELECT {cols} FROM memory_versions
WHERE {where}
QUALIFY row_number() OVER (PARTITION BY fact_id ORDER BY version DESC) = 1
"""


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(timezone.utc)


def _row_to_version(row: Sequence[Any]) -> FactVersion:
    r = dict(zip(_VERSION_COLUMNS, row))
    return FactVersion(
        id=r["id"], fact_id=r["fact_id"], tenant=r["tenant"], scope=Scope(r["scope"]), owner_id=r["owner_id"],
        key=r["key"], value_json=r["value_json"], content_sha256=r["content_sha256"], kind=Kind(r["kind"]),
        memory_type=r["memory_type"], status=Status(r["status"]), op=Op(r["op"]), version=int(r["version"]),
        change_id=r["change_id"], observed_at=_utc(r["observed_at"]), valid_at=_utc(r["valid_at"]),
        invalid_at=_utc(r["invalid_at"]), created_at=_utc(r["created_at"]), superseded_by=r["superseded_by"],
        reinforcement_count=int(r["reinforcement_count"]),
        provenance=Provenance(
            tenant=r["prov_tenant"], session=r["prov_session"], run=r["prov_run"], agent=r["prov_agent"],
            model=r["prov_model"], source_quote=r["prov_source_quote"], origin=r["prov_origin"],
            actor=r["prov_actor"],
        ),
        changed_by=r["changed_by"], subject=r["subject"], index_context=r["index_context"],
    )


def _version_params(v: FactVersion) -> list[Any]:
    p = v.provenance
    return [
        v.id, v.fact_id, v.tenant, v.scope.value, v.owner_id, v.key, v.value_json, v.content_sha256,
        v.kind.value, v.memory_type, v.status.value, v.op.value, v.version, v.change_id, v.observed_at,
        v.valid_at, v.invalid_at, v.created_at, v.superseded_by, v.reinforcement_count, p.tenant, p.session,
        p.run, p.agent, p.model, p.source_quote, p.origin, p.actor, v.changed_by, v.subject, v.index_context,
    ]


class DuckDBStore:
    """``VersionStore`` over one DuckDB file. One writer process at a time (DuckDB's rule)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> None:
        self._con = con
        self.path = path
        self.read_only = read_only
        self._lock = threading.RLock()

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
            store._migrate()
        store._check_schema()
        return store

    def _migrate(self) -> None:
        with self._tx() as con:
            con.execute(_SCHEMA)
            found = con.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchall()
            if found and found[0][0] == "1":  # v2 added subject and index_context
                con.execute("ALTER TABLE memory_versions ADD COLUMN IF NOT EXISTS subject VARCHAR")
                con.execute("ALTER TABLE memory_versions ADD COLUMN IF NOT EXISTS index_context VARCHAR")
            con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])

    def _check_schema(self) -> None:
        found = self._con.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchall()
        if not found or found[0][0] != SCHEMA_VERSION:
            raise StoreCorrupted(
                f"{self.path} has schema version {found[0][0] if found else 'none'}, this build reads {SCHEMA_VERSION}"
            )

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

    def head(self, namespace: Namespace, key: str) -> Head | None:
        rows = self._rows(
            "SELECT version, status, head_version_id, updated_at FROM memory_heads "
            "WHERE tenant = ? AND scope = ? AND owner_id = ? AND key = ?",
            [namespace.tenant, namespace.scope.value, namespace.owner_id, key],
        )
        if not rows:
            return None
        version, status, head_version_id, updated_at = rows[0]
        return Head(namespace, key, int(version), status, head_version_id, _utc(updated_at))

    def fact_states(self, namespace: Namespace, key: str, known_at: datetime | None = None) -> list[FactVersion]:
        where = "tenant = ? AND scope = ? AND owner_id = ? AND key = ?"
        params: list[Any] = [namespace.tenant, namespace.scope.value, namespace.owner_id, key]
        if known_at is not None:
            where += " AND created_at <= ?"
            params.append(known_at)
        sql = _LATEST.format(cols=_COLS, where=where) + " ORDER BY version"
        return [_row_to_version(r) for r in self._rows(sql, params)]

    def history(self, namespace: Namespace, key: str) -> list[FactVersion]:
        rows = self._rows(
            f"SELECT {_COLS} FROM memory_versions WHERE tenant = ? AND scope = ? AND owner_id = ? AND key = ? "
            "ORDER BY version",
            [namespace.tenant, namespace.scope.value, namespace.owner_id, key],
        )
        return [_row_to_version(r) for r in rows]

    def live_facts(self, namespace: Namespace, as_of: datetime, known_at: datetime | None = None) -> list[FactVersion]:
        where = "tenant = ? AND scope = ? AND owner_id = ?"
        params: list[Any] = [namespace.tenant, namespace.scope.value, namespace.owner_id]
        if known_at is not None:
            where += " AND created_at <= ?"
            params.append(known_at)
        sql = (
            f"WITH latest AS ({_LATEST.format(cols=_COLS, where=where)}) SELECT {_COLS} FROM latest "
            f"WHERE status IN {VISIBLE_STATUSES!r} AND valid_at <= ? AND (invalid_at IS NULL OR ? < invalid_at) "
            "ORDER BY key, version"
        )
        return [_row_to_version(r) for r in self._rows(sql, [*params, as_of, as_of])]

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
        out = {}
        for table in ("memory_versions", "memory_heads", "audit_log", "projection_failures"):
            out[table] = int(self._rows(f"SELECT count(*) FROM {table}", [])[0][0])
        return out

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
            "facts_by_status": dict(self._rows(
                f"SELECT status, count(*) FROM ({latest}) GROUP BY status ORDER BY status", [])),
        }

    def latest_states(self, fact_ids: Sequence[str] | None = None) -> list[FactVersion]:
        """The latest row of each named fact (of every fact when ``fact_ids`` is None)."""
        if fact_ids is not None and not fact_ids:
            return []
        where, params = ("TRUE", []) if fact_ids is None else ("list_contains(?, fact_id)", [list(fact_ids)])
        return [_row_to_version(r) for r in self._rows(_LATEST.format(cols=_COLS, where=where) + " ORDER BY fact_id",
                                                        params)]

    def pending_projection_failures(self, namespace: Namespace | None = None) -> list[str]:
        """Fact ids whose index write failed and has not been repaired yet."""
        sql = "SELECT DISTINCT fact_id FROM projection_failures WHERE resolved_at IS NULL"
        params: list[Any] = []
        if namespace is not None:
            sql += " AND tenant = ? AND scope = ? AND owner_id = ?"
            params = [namespace.tenant, namespace.scope.value, namespace.owner_id]
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
            con.execute("UPDATE projection_failures SET resolved_at = ? "
                        "WHERE resolved_at IS NULL AND list_contains(?, fact_id)", [at, list(fact_ids)])

    def set_marker(self, name: str, value: str) -> None:
        with self._tx() as con:
            con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [f"marker:{name}", value])

    def apply(self, changes: Sequence[KeyChange]) -> None:
        with self._tx() as con:
            seq, prev = self._audit_head(con)
            for change in changes:
                ns = change.namespace
                if change.rows:
                    con.executemany(
                        f"INSERT INTO memory_versions ({_COLS}) VALUES ({', '.join('?' * len(_VERSION_COLUMNS))})",
                        [_version_params(r) for r in change.rows],
                    )
                    last = change.rows[-1]
                    con.execute(
                        "INSERT INTO memory_heads VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT (tenant, scope, owner_id, key) DO UPDATE SET version = excluded.version, "
                        "status = excluded.status, head_version_id = excluded.head_version_id, "
                        "updated_at = excluded.updated_at",
                        [ns.tenant, ns.scope.value, ns.owner_id, change.key, max(r.version for r in change.rows),
                         change.head_status, last.id, last.created_at],
                    )
                seq += 1
                row = chain(seq, change.audit, prev)
                self._insert_audit(con, row)
                prev = row.row_hash
            con.execute("INSERT OR REPLACE INTO meta VALUES ('audit_head', ?)", [f"{seq}:{prev}"])

    @staticmethod
    def _audit_head(con: duckdb.DuckDBPyConnection) -> tuple[int, str]:
        found = con.execute("SELECT value FROM meta WHERE name = 'audit_head'").fetchall()
        if not found:
            return 0, GENESIS_HASH
        seq, _, digest = found[0][0].partition(":")
        return int(seq), digest

    @staticmethod
    def _insert_audit(con: duckdb.DuckDBPyConnection, row: AuditRow) -> None:
        e = row.entry
        con.execute(
            "INSERT INTO audit_log VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [row.seq, e.at, e.tenant, e.scope, e.owner_id, e.key, e.op, e.version_ids, e.content_sha256,
             e.actor, row.prev_hash, row.row_hash],
        )

    def audit_rows(self) -> list[AuditRow]:
        rows = self._rows(
            "SELECT seq, written_at, tenant, scope, owner_id, key, op, version_ids, content_sha256, actor, prev_hash, "
            "row_hash FROM audit_log ORDER BY rowid", [],
        )
        return [
            AuditRow(
                seq=int(r[0]),
                entry=AuditEntry(at=_utc(r[1]), tenant=r[2], scope=r[3], owner_id=r[4], key=r[5], op=r[6],
                                 version_ids=r[7], content_sha256=r[8], actor=r[9]),
                prev_hash=r[10], row_hash=r[11],
            )
            for r in rows
        ]

    def verify_audit(self) -> AuditReport:
        with self._lock:
            found = self._con.execute("SELECT value FROM meta WHERE name = 'audit_head'").fetchall()
        head = None
        if found:
            seq, _, digest = found[0][0].partition(":")
            head = (int(seq), digest)
        return verify(self.audit_rows(), head)
