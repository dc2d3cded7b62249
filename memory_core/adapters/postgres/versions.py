"""The version log over PostgreSQL: ``memory_versions``, append-only, shared by several processes.

The DuckDB log keeps each namespace's latest states in memory, being its home's only writer. Here
another replica may append at any moment, so every read asks the database (the point reads go
by the ``(tenant, scope, owner_id, key, version)`` index) and nothing is cached. Sequence numbers
come from the database too: ``apply`` reads the highest seq inside its transaction, under the
authority's write lock, which it holds until the commit; so seqs are unique, contiguous, and
committed in order (a reader tailing the log by seq never skips a row: ``changes_since``).
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from ...audit import AuditEntry, LedgerLine
from ...identity import Namespace
from ...model import VISIBLE_STATUSES, FactVersion
from ...ports import Head, StagedRows, WriteBatch
from ...substrate.events import StateChange
from ..duckdb.connection import NS_WHERE, ns_of, ns_params
from ..duckdb.schema import COLS, row_to_version, utc, version_params
from ..duckdb.versions import LogAudit, redactions
from .audit_chain import PgAuditChain
from .audit_ledger import AuditedTx, insert_self_bound
from .connection import PgConnection

if TYPE_CHECKING:  # what ``apply`` writes through (their ``write`` and ``forget`` / ``committed`` only)
    from .graph import PgGraph
    from .substrate import PgSubstrate

COPY_ABOVE = 64  # rows; up to this many go in multi-row inserts that digest each row themselves
_FIELDS = tuple(f.name for f in dataclasses.fields(FactVersion))
_VISIBLE = list(VISIBLE_STATUSES)
# Keys in code-point order, as Python sorts them, whatever the database's collation.
_BY_KEY = 'key COLLATE "C"'


def latest(cols: str, where: str, order: str | None = None) -> str:
    """The latest row of every fact matching ``where`` (the DuckDB ``LATEST``, without QUALIFY)."""
    inner = f"SELECT DISTINCT ON (fact_id) {cols} FROM memory_versions WHERE {where} ORDER BY fact_id, version DESC"
    return inner if order is None else f"SELECT * FROM ({inner}) AS latest ORDER BY {order}"


def staged_versions(staged: StagedRows) -> list[FactVersion]:
    """Staged rows (one column per ``FactVersion`` field) as row objects: PostgreSQL takes rows,
    and a row built so is written exactly as a point write writes it (its attrs included)."""
    columns = [staged.column(name) for name in _FIELDS]
    return [FactVersion(**dict(zip(_FIELDS, values))) for values in zip(*columns)]


class PgVersions(LogAudit):
    """``VersionLog`` over a PostgreSQL authority."""

    def __init__(self, db: PgConnection, audit: PgAuditChain, graph: "PgGraph", substrate: "PgSubstrate") -> None:
        self._db = db
        self._audit = audit
        self._graph = graph
        self._substrate = substrate
        self.read_only = db.read_only

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the log for a read-decide-commit sequence: no other thread or process writes
        between (the authority's write lock)."""
        with self._db.lock:
            yield

    @property
    def last_seq(self) -> int:
        return int(self._db.one("SELECT coalesce(max(seq), 0) FROM memory_versions"))

    def _versions(self, sql: str, params: Sequence[Any] = ()) -> list[FactVersion]:
        return [row_to_version(r) for r in self._db.rows(sql, params)]

    # -- point reads ---------------------------------------------------------------------------

    def namespace_states(self, namespace: Namespace) -> dict[str, list[FactVersion]]:
        """Every key of ``namespace`` with the latest state of each of its facts, oldest version first."""
        out: dict[str, list[FactVersion]] = {}
        for state in self._versions(latest(COLS, NS_WHERE, f"{_BY_KEY}, version"), ns_params(namespace)):
            out.setdefault(state.key, []).append(state)
        return out

    def has_key(self, namespace: Namespace, key: str) -> bool:
        sql = f"SELECT EXISTS (SELECT 1 FROM memory_versions WHERE {NS_WHERE} AND key = ?)"
        return bool(self._db.one(sql, [*ns_params(namespace), key]))

    def keys(self, namespace: Namespace) -> list[str]:
        sql = f"SELECT key FROM memory_versions WHERE {NS_WHERE} GROUP BY key ORDER BY {_BY_KEY}"
        return [r[0] for r in self._db.rows(sql, ns_params(namespace))]

    def keys_under(self, namespace: Namespace, prefix: str, limit: int) -> list[str]:
        sql = (
            f"SELECT key FROM memory_versions WHERE {NS_WHERE} AND starts_with(key, ?) "
            f"GROUP BY key ORDER BY {_BY_KEY} LIMIT ?"
        )
        return [r[0] for r in self._db.rows(sql, [*ns_params(namespace), prefix, limit])]

    def fact_state(self, namespace: Namespace, key: str, fact_id: str) -> FactVersion | None:
        sql = (
            f"SELECT {COLS} FROM memory_versions WHERE {NS_WHERE} AND key = ? AND fact_id = ? "
            "ORDER BY version DESC LIMIT 1"
        )
        found = self._versions(sql, [*ns_params(namespace), key, fact_id])
        return found[0] if found else None

    def head(self, namespace: Namespace, key: str) -> Head | None:
        sql = (
            f"SELECT version, status, id, created_at FROM memory_versions WHERE {NS_WHERE} AND key = ? "
            "ORDER BY version DESC, seq DESC LIMIT 1"
        )
        found = self._db.rows(sql, [*ns_params(namespace), key])
        if not found:
            return None
        version, status, row_id, created_at = found[0]
        return Head(namespace, key, int(version), status, row_id, utc(created_at))

    def fact_states(self, namespace: Namespace, key: str, known_at: datetime | None = None) -> list[FactVersion]:
        where, params = f"{NS_WHERE} AND key = ?", [*ns_params(namespace), key]
        if known_at is not None:
            where, params = where + " AND created_at <= ?", [*params, known_at]
        return self._versions(latest(COLS, where, "version"), params)

    # -- reads of the log ----------------------------------------------------------------------

    def history(self, namespace: Namespace, key: str) -> list[FactVersion]:
        sql = f"SELECT {COLS} FROM memory_versions WHERE {NS_WHERE} AND key = ? ORDER BY version"
        return self._versions(sql, [*ns_params(namespace), key])

    def session_notes(self, namespace: Namespace, session: str, limit: int) -> list[FactVersion]:
        sql = (
            f"SELECT {COLS} FROM memory_versions WHERE {NS_WHERE} AND kind = 'note' AND op = 'set' "
            "AND (attrs::jsonb ->> 'prov_session') = ? ORDER BY seq DESC LIMIT ?"
        )
        return list(reversed(self._versions(sql, [*ns_params(namespace), session, limit])))

    def notes_quoting(self, namespace: Namespace, note_id: str, session: str, text: str) -> list[FactVersion]:
        sql = (
            f"SELECT {COLS} FROM memory_versions WHERE {NS_WHERE} AND kind = 'note' "
            "AND (attrs::jsonb ->> 'prov_session') = ? "
            "AND seq > (SELECT seq FROM memory_versions WHERE id = ?) "
            "AND strpos(coalesce(attrs::jsonb ->> 'index_context', ''), ?) > 0 ORDER BY seq"
        )
        return self._versions(sql, [*ns_params(namespace), session, note_id, text])

    def states_known_at(self, namespace: Namespace, known_at: datetime) -> dict[str, list[FactVersion]]:
        """What the store held for every key of ``namespace`` at transaction time ``known_at``."""
        sql = latest(COLS, f"{NS_WHERE} AND created_at <= ?", f"{_BY_KEY}, version")
        out: dict[str, list[FactVersion]] = {}
        for state in self._versions(sql, [*ns_params(namespace), known_at]):
            out.setdefault(state.key, []).append(state)
        return out

    def live_facts(self, namespace: Namespace, as_of: datetime, known_at: datetime | None = None) -> list[FactVersion]:
        where, params = NS_WHERE, ns_params(namespace)
        if known_at is not None:
            where, params = where + " AND created_at <= ?", [*params, known_at]
        sql = (
            f"SELECT {COLS} FROM ({latest(COLS, where)}) AS latest WHERE status = ANY(?) AND valid_at <= ? "
            f"AND (invalid_at IS NULL OR ? < invalid_at) ORDER BY {_BY_KEY}, version"
        )
        return self._versions(sql, [*params, _VISIBLE, as_of, as_of])

    def latest_states(self, fact_ids: Sequence[str] | None = None) -> list[FactVersion]:
        """The latest row of each named fact (of every fact when ``fact_ids`` is None)."""
        if fact_ids is not None and not fact_ids:
            return []
        where, params = ("TRUE", []) if fact_ids is None else ("fact_id = ANY(?)", [list(fact_ids)])
        return self._versions(latest(COLS, where), params)  # DISTINCT ON orders by fact_id

    def version_rows(self, ids: Sequence[str]) -> list[FactVersion]:
        """The version rows of these ids (an id no row has is left out)."""
        if not ids:
            return []
        return self._versions(f"SELECT {COLS} FROM memory_versions WHERE id = ANY(?)", [list(ids)])

    def expired_keys(self, now: datetime) -> dict[Namespace, list[str]]:
        """The keys holding a served fact whose expires_at has passed, by namespace."""
        found = latest("tenant, scope, owner_id, key, status, expires_at", "expires_at IS NOT NULL")
        sql = (
            f"SELECT DISTINCT tenant, scope, owner_id, key FROM ({found}) AS latest "
            "WHERE status = ANY(?) AND expires_at <= ? ORDER BY 1, 2, 3, 4"
        )
        out: dict[Namespace, list[str]] = {}
        for tenant, scope, owner_id, key in self._db.rows(sql, [_VISIBLE, now]):
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

    def changes_since(self, seq: int, limit: int) -> list[tuple[int, FactVersion]]:
        """(seq, row) of every version row appended after ``seq``, in seq order, at most ``limit``:
        what a replica's index tailer reads (a committed seq is never followed by a smaller one)."""
        rows = self._db.rows(f"SELECT {COLS} FROM memory_versions WHERE seq > ? ORDER BY seq LIMIT ?", [seq, limit])
        return [(int(r[0]), row_to_version(r)) for r in rows]  # COLS starts with seq

    def new_statements(self, after_seq: int, limit: int = 10_000) -> list[tuple[int, FactVersion]]:
        """(seq, row) of first versions of facts (op set) appended after ``after_seq``."""
        rows = self._db.rows(
            f"SELECT {COLS} FROM memory_versions WHERE seq > ? AND op = 'set' ORDER BY seq LIMIT ?",
            [after_seq, limit],
        )
        return [(int(r[0]), row_to_version(r)) for r in rows]

    def conflicted_namespaces(self) -> list[tuple[str, str, str]]:
        found = latest("tenant, scope, owner_id, status", "TRUE")
        sql = (
            f"SELECT DISTINCT tenant, scope, owner_id FROM ({found}) AS latest WHERE status = 'conflicted' "
            "ORDER BY 1, 2, 3"
        )
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
        """Append the batch's rows (then ``staged``'s), its graph writes, events and audit rows in
        one transaction, numbered from the highest seq the database holds.

        ``snapshot`` (id, keys) records a snapshot restore in the same transaction, so a restore
        is idempotent per snapshot id. ``before_commit`` runs last inside the transaction: if it
        raises, nothing is written."""
        rows = [*batch.rows, *(staged_versions(staged) if staged is not None and staged.count else ())]
        with self._db.lock:
            with self._audit.transaction(batch.audits, before_commit=before_commit) as tx:
                first = int(tx.execute("SELECT coalesce(max(seq), 0) FROM memory_versions").fetchone()[0]) + 1
                # Each row names the audit row that records it: a chain missing its newest rows is caught.
                if len(rows) > COPY_ABOVE:
                    _copy_rows(tx, first, rows)
                    tx.added("memory_versions", "seq BETWEEN ? AND ?", [first, first + len(rows) - 1])
                elif rows:
                    tx.lines.extend(_insert_rows(tx, first, rows))
                for change in batch.graph:
                    self._graph.write(tx, change)
                events = self._substrate.write(tx, batch.events, batch.records)
                if snapshot is not None:
                    audit = batch.audits[0]
                    tx.execute(
                        "INSERT INTO snapshots_restored VALUES (?, ?, ?, ?, ?, ?)",
                        [snapshot[0], audit.tenant, audit.scope, audit.owner_id, audit.at, snapshot[1]],
                    )
            self._substrate.committed(events)

    def remember(self, rows: Sequence[FactVersion]) -> None:
        """Nothing to do: no process keeps rows (every read asks the database)."""

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
                with tx.touching("memory_versions", "id = ANY(?)", [touched]):
                    for statement, params in redactions(rows, value_json, content_sha256, requoted):
                        tx.execute(statement, params)
                self._graph.forget(tx, sorted({r.fact_id for r in rows}))
            self._substrate.committed(written)


def _insert_rows(tx: AuditedTx, first: int, rows: Sequence[FactVersion]) -> list[LedgerLine]:
    """Insert a few version rows, each with the digest it is written with."""
    return insert_self_bound(
        tx.con, "memory_versions", [version_params(first + i, r, tx.seq) for i, r in enumerate(rows)]
    )


def _copy_rows(tx: AuditedTx, first: int, rows: Sequence[FactVersion]) -> None:
    """Many version rows in one ``COPY`` (their ledger lines are recorded from the stored rows)."""
    with tx.con.con.cursor() as cur:
        with cur.copy(f"COPY memory_versions ({COLS}) FROM STDIN") as copy:
            for i, row in enumerate(rows):
                copy.write_row(version_params(first + i, row, tx.seq))
