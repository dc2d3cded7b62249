"""The version log over DuckDB: ``memory_versions``, append-only, and its write-through cache.

Every change appends rows; nothing is updated in place except by ``redact``. The head of a key
is its newest row (the ``memory_heads`` view). The adapter is the home's only writer while it is
open, so it keeps the latest fact states of each namespace it touched in memory: a point write
reads its key from there (a DuckDB point query costs milliseconds) and appends in one
transaction. The cache is updated only after a commit, and dropped by ``redact``.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Callable, Iterator, Sequence, TypeVar

import duckdb

from ...audit import AuditEntry, AuditReport, AuditRow, LedgerLine
from ...identity import Namespace
from ...model import VISIBLE_STATUSES, FactVersion
from ...ports import Head, StagedRows, WriteBatch
from ...ports.waiting import ReadLock
from ...substrate.events import StateChange
from .audit_chain import AuditChain
from .audit_ledger import insert_self_bound
from .connection import NS_WHERE, DuckDBConnection, ns_of, ns_params
from .graph import DuckDBGraph
from .key_order import KeyOrder
from .schema import COLS, LATEST, attrs_json, row_to_version, version_params
from .staging import arrow_versions, staged_columns, staged_insert
from .substrate import DuckDBSubstrate

ARROW_INSERT_ABOVE = 32  # rows; below this one multi-row VALUES insert is faster

KeyFacts = dict[str, FactVersion]  # fact_id -> latest state
T = TypeVar("T")


class LogAudit:
    """The version log's reads that are the same SQL on both engines: a snapshot's restore
    record and the audit chain (``PgVersions`` shares them)."""

    _db: Any
    _audit: Any

    def snapshot_restored(self, snapshot_id: str, namespace: Namespace) -> bool:
        sql = f"SELECT 1 FROM snapshots_restored WHERE snapshot_id = ? AND {NS_WHERE}"
        return bool(self._db.rows(sql, [snapshot_id, *ns_params(namespace)]))

    def audit_rows(self) -> list[AuditRow]:
        return self._audit.rows()

    def verify_audit(self) -> AuditReport:
        return self._audit.verify()

    def adopt_audit(self, entry: AuditEntry) -> bool:
        """Bind, once, the rows of a home written before the audit chain bound data."""
        return self._audit.adopt(entry)


class DuckDBVersions(LogAudit):
    """``VersionLog`` over the home's connection."""

    def __init__(self, db: DuckDBConnection, audit: AuditChain, graph: DuckDBGraph, substrate: DuckDBSubstrate) -> None:
        self._db = db
        self._audit = audit
        self._graph = graph
        self._substrate = substrate
        self.read_only = db.read_only
        self._cache: dict[Namespace, dict[str, KeyFacts]] = {}
        self._key_order = KeyOrder()  # the cached namespaces' keys in order (under the cache's lock)
        # Guards the cache's contents only: a read of a cached namespace takes this, never the
        # connection's lock, so a point read does not wait behind a write's read-decide-commit
        # (nor an index write). A commit updates the cache under both, in one hold: a reader sees
        # a commit's rows all or none.
        self._cache_lock = ReadLock("the version log's cache")
        self._seq = int(db.one("SELECT coalesce(max(seq), 0) FROM memory_versions"))

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the log for a read-decide-commit sequence so no other thread writes between."""
        with self._db.lock:
            yield

    @property
    def last_seq(self) -> int:
        return self._seq

    def _forget_cache(self) -> None:
        with self._db.lock, self._cache_lock:
            self._cache.clear()
            self._key_order.forget()

    # -- point reads, from the cache -----------------------------------------------------------

    def _namespace(self, ns: Namespace) -> dict[str, KeyFacts]:
        """The cached latest states of a namespace, loaded in one query on first touch."""
        found = self._cache.get(ns)
        if found is None:
            found = {}
            for row in self._db.rows(LATEST.format(cols=COLS, where=NS_WHERE), ns_params(ns)):
                state = row_to_version(row)
                found.setdefault(state.key, {})[state.fact_id] = state
            with self._cache_lock:
                self._cache[ns] = found
        return found

    def _cached(self, ns: Namespace, read: Callable[[dict[str, KeyFacts]], T]) -> T:
        """``read`` of a namespace's cached states, under the cache's lock only once the namespace
        is loaded (loading it reads the store, under the connection's lock)."""
        found = self._cache.get(ns)
        if found is None:
            with self._db.lock:
                found = self._namespace(ns)
        with self._cache_lock:
            return read(found)

    def namespace_states(self, namespace: Namespace) -> dict[str, list[FactVersion]]:
        """Every key of ``namespace`` with the latest state of each of its facts, oldest version first."""
        return self._cached(
            namespace, lambda found: {k: sorted(v.values(), key=lambda s: s.version) for k, v in found.items()}
        )

    def has_key(self, namespace: Namespace, key: str) -> bool:
        return self._cached(namespace, lambda found: key in found)

    def keys(self, namespace: Namespace) -> list[str]:
        return self._cached(namespace, list)

    def keys_under(self, namespace: Namespace, prefix: str, limit: int) -> list[str]:
        return self._cached(namespace, lambda found: self._key_order.under(namespace, found, prefix, limit))

    def fact_state(self, namespace: Namespace, key: str, fact_id: str) -> FactVersion | None:
        return self._cached(namespace, lambda found: found.get(key, {}).get(fact_id))

    def head(self, namespace: Namespace, key: str) -> Head | None:
        facts = self._cached(namespace, lambda found: dict(found.get(key, {})))
        if not facts:
            return None
        newest = max(facts.values(), key=lambda s: s.version)
        return Head(namespace, key, newest.version, newest.status.value, newest.id, newest.created_at)

    def fact_states(self, namespace: Namespace, key: str, known_at: datetime | None = None) -> list[FactVersion]:
        if known_at is None:
            return self._cached(namespace, lambda found: sorted(found.get(key, {}).values(), key=lambda s: s.version))
        sql = LATEST.format(cols=COLS, where=f"{NS_WHERE} AND key = ? AND created_at <= ?") + " ORDER BY version"
        return [row_to_version(r) for r in self._db.rows(sql, [*ns_params(namespace), key, known_at])]

    # -- reads of the log ----------------------------------------------------------------------

    def history(self, namespace: Namespace, key: str) -> list[FactVersion]:
        rows = self._db.rows(
            f"SELECT {COLS} FROM memory_versions WHERE {NS_WHERE} AND key = ? ORDER BY version",
            [*ns_params(namespace), key],
        )
        return [row_to_version(r) for r in rows]

    def session_notes(self, namespace: Namespace, session: str, limit: int) -> list[FactVersion]:
        rows = self._db.rows(
            f"SELECT {COLS} FROM memory_versions WHERE {NS_WHERE} AND kind = 'note' AND op = 'set' "
            "AND json_extract_string(attrs, '$.prov_session') = ? ORDER BY seq DESC LIMIT ?",
            [*ns_params(namespace), session, limit],
        )
        return [row_to_version(r) for r in reversed(rows)]

    def notes_quoting(self, namespace: Namespace, note_id: str, session: str, text: str) -> list[FactVersion]:
        rows = self._db.rows(
            f"SELECT {COLS} FROM memory_versions WHERE {NS_WHERE} AND kind = 'note' "
            "AND json_extract_string(attrs, '$.prov_session') = ? "
            "AND seq > (SELECT seq FROM memory_versions WHERE id = ?) "
            "AND contains(coalesce(json_extract_string(attrs, '$.index_context'), ''), ?) ORDER BY seq",
            [*ns_params(namespace), session, note_id, text],
        )
        return [row_to_version(r) for r in rows]

    def states_known_at(self, namespace: Namespace, known_at: datetime) -> dict[str, list[FactVersion]]:
        """What the store held for every key of ``namespace`` at transaction time ``known_at``."""
        sql = LATEST.format(cols=COLS, where=f"{NS_WHERE} AND created_at <= ?") + " ORDER BY key, version"
        out: dict[str, list[FactVersion]] = {}
        for row in self._db.rows(sql, [*ns_params(namespace), known_at]):
            state = row_to_version(row)
            out.setdefault(state.key, []).append(state)
        return out

    def live_facts(self, namespace: Namespace, as_of: datetime, known_at: datetime | None = None) -> list[FactVersion]:
        where, params = NS_WHERE, ns_params(namespace)
        if known_at is not None:
            where += " AND created_at <= ?"
            params = [*params, known_at]
        sql = (
            f"WITH latest AS ({LATEST.format(cols=COLS, where=where)}) SELECT {COLS} FROM latest "
            f"WHERE status IN {VISIBLE_STATUSES!r} AND valid_at <= ? AND (invalid_at IS NULL OR ? < invalid_at) "
            "ORDER BY key, version"
        )
        return [row_to_version(r) for r in self._db.rows(sql, [*params, as_of, as_of])]

    def latest_states(self, fact_ids: Sequence[str] | None = None) -> list[FactVersion]:
        """The latest row of each named fact (of every fact when ``fact_ids`` is None)."""
        if fact_ids is not None and not fact_ids:
            return []
        where, params = ("TRUE", []) if fact_ids is None else ("list_contains(?, fact_id)", [list(fact_ids)])
        sql = LATEST.format(cols=COLS, where=where) + " ORDER BY fact_id"
        return [row_to_version(r) for r in self._db.rows(sql, params)]

    def version_rows(self, ids: Sequence[str]) -> list[FactVersion]:
        """The version rows of these ids (an id no row has is left out)."""
        if not ids:
            return []
        sql = f"SELECT {COLS} FROM memory_versions WHERE list_contains(?, id)"
        return [row_to_version(r) for r in self._db.rows(sql, [list(ids)])]

    def expired_keys(self, now: datetime) -> dict[Namespace, list[str]]:
        """The keys holding a served fact whose expires_at has passed, by namespace."""
        latest = LATEST.format(cols="tenant, scope, owner_id, key, status, expires_at", where="expires_at IS NOT NULL")
        sql = (
            f"WITH latest AS ({latest}) SELECT DISTINCT tenant, scope, owner_id, key FROM latest "
            f"WHERE status IN {VISIBLE_STATUSES!r} AND expires_at <= ? ORDER BY 1, 2, 3, 4"
        )
        out: dict[Namespace, list[str]] = {}
        for tenant, scope, owner_id, key in self._db.rows(sql, [now]):
            out.setdefault(ns_of(tenant, scope, owner_id), []).append(key)
        return out

    def rows_since(self, seq: int, until: int | None = None) -> list[str]:
        """Fact ids with a version row appended after global sequence number ``seq`` (and at or
        before ``until``)."""
        if until is not None and until <= seq:
            return []
        sql, params = "SELECT DISTINCT fact_id FROM memory_versions WHERE seq > ?", [seq]
        if until is not None:
            sql, params = sql + " AND seq <= ?", [seq, until]
        return [r[0] for r in self._db.rows(sql, params)]

    def new_statements(self, after_seq: int, limit: int = 10_000) -> list[tuple[int, FactVersion]]:
        """(seq, row) of first versions of facts (op set) appended after ``after_seq``."""
        rows = self._db.rows(
            f"SELECT {COLS} FROM memory_versions WHERE seq > ? AND op = 'set' ORDER BY seq LIMIT ?",
            [after_seq, limit],
        )
        return [(int(r[0]), row_to_version(r)) for r in rows]  # COLS starts with seq

    def conflicted_namespaces(self) -> list[tuple[str, str, str]]:
        latest = LATEST.format(cols="tenant, scope, owner_id, status", where="TRUE")
        sql = f"SELECT DISTINCT tenant, scope, owner_id FROM ({latest}) WHERE status = 'conflicted' ORDER BY 1, 2, 3"
        return [tuple(r) for r in self._db.rows(sql)]

    # -- writes --------------------------------------------------------------------------------

    def apply(
        self,
        batch: WriteBatch,
        *,
        snapshot: tuple[str, int] | None = None,
        before_commit: Callable[[], None] | None = None,
        staged: StagedRows | None = None,
    ) -> None:
        """Append the batch's rows, its graph writes and audit rows in one transaction; then
        update the cache.

        ``snapshot`` (id, keys) records a snapshot restore in the same transaction, so a restore
        is idempotent per snapshot id. ``before_commit`` runs last inside the transaction: if it
        raises, nothing is written (a batch waits there for work it started beside the insert).
        ``staged``: more new rows, given as columns, appended after the batch's rows; the caller
        puts them in the cache (``remember``) once it has them as rows."""
        rows = batch.rows
        extra = staged.count if staged is not None else 0
        with self._db.lock:
            if extra:
                self._evict(rows, staged)
            first = self._seq + 1
            with self._audit.transaction(batch.audits, before_commit=before_commit) as tx:
                # Each row names the audit row that records it: a chain missing its newest rows is caught.
                con, audit_seq = tx.con, tx.seq
                arrow = len(rows) > ARROW_INSERT_ABOVE
                if arrow:
                    self._insert_staged(con, arrow_versions(first, rows, audit_seq))
                elif rows:
                    tx.lines.extend(_insert_rows(con, first, rows, audit_seq))
                if arrow:  # fresh rows: nothing to record before them
                    tx.added("memory_versions", "seq BETWEEN ? AND ?", [first, first + len(rows) - 1])
                if extra:
                    self._insert_staged(con, staged_columns(first + len(rows), audit_seq, staged))
                    tx.added(
                        "memory_versions", "seq BETWEEN ? AND ?", [first + len(rows), first + len(rows) + extra - 1]
                    )
                for change in batch.graph:
                    self._graph.write(tx, change)
                events = self._substrate.write(tx, batch.events, batch.records)
                if snapshot is not None:
                    audit = batch.audits[0]
                    con.execute(
                        "INSERT INTO snapshots_restored VALUES (?, ?, ?, ?, ?, ?)",
                        [snapshot[0], audit.tenant, audit.scope, audit.owner_id, audit.at, snapshot[1]],
                    )
            self._seq += len(rows) + extra
            self._substrate.committed(events)
            self.remember(rows)

    def _evict(self, rows: Sequence[FactVersion], staged: Any) -> None:
        """Drop from the cache the namespaces a batch with staged rows writes to: their rows reach
        the cache in two steps (the batch's here, the staged ones when the caller has them as rows),
        and a reader between the two would see half a batch. A read after this loads the namespace
        from the store, under the connection's lock, which the batch holds until it is done."""
        owners = set(zip(staged.column("tenant"), staged.column("scope"), staged.column("owner_id")))
        owners.update((r.tenant, r.scope, r.owner_id) for r in rows)
        with self._cache_lock:
            for owner in owners:
                self._cache.pop(ns_of(*owner), None)

    @staticmethod
    def _insert_staged(con: duckdb.DuckDBPyConnection, table: Any) -> None:
        con.register("incoming_versions", table)
        try:
            con.execute(staged_insert(table).format(source="incoming_versions"))
        finally:
            con.unregister("incoming_versions")

    def remember(self, rows: Sequence[FactVersion]) -> None:
        """Put committed rows in the namespace cache (for namespaces it holds)."""
        with self._db.lock, self._cache_lock:
            owner, cached = None, None
            for row in rows:
                if (row.tenant, row.scope, row.owner_id) != owner:  # a batch is mostly one namespace
                    owner = (row.tenant, row.scope, row.owner_id)
                    cached = self._cache.get(Namespace(*owner))
                if cached is not None:
                    if row.key not in cached:
                        self._key_order.added(Namespace(*owner), cached, row.key)
                    facts = cached.setdefault(row.key, {})
                    known = facts.get(row.fact_id)
                    if known is None or known.version < row.version:
                        facts[row.fact_id] = row

    def redact(
        self,
        rows: Sequence[FactVersion],
        value_json: str,
        content_sha256: str,
        audit: AuditEntry,
        requoted: Sequence[FactVersion] = (),
        events: Sequence[StateChange] = (),
    ) -> None:
        """Overwrite the value (and the words kept beside it) of the given version rows in place:
        the one edit the log allows. The graph forgets what they stated; ``requoted`` rows keep
        everything but the index context they are given; ``events`` are the redaction's own."""
        touched = [r.id for r in (*rows, *requoted)]
        with self._db.lock:
            with self._audit.transaction([audit]) as tx:
                written = self._substrate.write(tx, events, ())
                # The ledger records the digests replaced and their replacements, never the bytes.
                with tx.touching("memory_versions", "list_contains(?, id)", [touched]):
                    for statement, params in redactions(rows, value_json, content_sha256, requoted):
                        tx.execute(statement, params)
                self._graph.forget(tx, sorted({r.fact_id for r in rows}))
            self._substrate.committed(written)
            self._forget_cache()
            self._db.con.execute("CHECKPOINT")  # fold the WAL, which still holds the old bytes


def redactions(
    rows: Sequence[FactVersion], value_json: str, content_sha256: str, requoted: Sequence[FactVersion]
) -> list[tuple[str, list[Any]]]:
    """The statements of a redaction (plain SQL, shared with PostgreSQL): ``requoted`` rows get
    their new attrs; ``rows`` the new value, without the words kept beside it."""
    out: list[tuple[str, list[Any]]] = [
        ("UPDATE memory_versions SET attrs = ? WHERE id = ?", [attrs_json(row), row.id]) for row in requoted
    ]
    for row in rows:
        scrubbed = dataclasses.replace(
            row,
            index_context=None,
            relations=(),
            provenance=dataclasses.replace(row.provenance, source_quote=None),
        )
        out.append(
            (
                "UPDATE memory_versions SET value_json = ?, content_sha256 = ?, attrs = ? WHERE id = ?",
                [value_json, content_sha256, attrs_json(scrubbed), row.id],
            )
        )
    return out


def _insert_rows(
    con: duckdb.DuckDBPyConnection, first: int, rows: Sequence[FactVersion], audit_seq: int | None
) -> list[LedgerLine]:
    """Insert a few version rows, each with the digest it is written with."""
    return insert_self_bound(
        con, "memory_versions", [version_params(first + i, r, audit_seq) for i, r in enumerate(rows)]
    )
