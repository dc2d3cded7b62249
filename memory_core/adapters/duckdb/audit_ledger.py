"""The audit ledger: a digest of every row a write touched, in every table whose rows change what
a read answers, so the audit chain binds the data and not only the fact that a write happened.

Each bound table has a row key (for saying *which* row broke) and a canonical digest: SHA-256 of
the JSON array of all its columns, instants as epoch microseconds (so the session's time zone
cannot change a digest). Both are computed by the engine, at write time and at verify time alike.
A write records ``-`` lines for the rows it is about to change and ``+`` lines for the rows as they
stand after it; replaying every line in the chain leaves exactly the stored rows.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

import duckdb

from ...audit import LedgerLine, RowMismatch
from .schema import TRIPLE_COLUMNS, VERSION_COLUMNS
from .schema_compounding import PROFILE_SCHEMA_COLUMNS
from .schema_erasure import WEBHOOK_COLUMNS
from .schema_keys import API_KEY_COLUMNS
from .schema_substrate import (
    ASSIGNMENT_COLUMNS,
    DECISION_COLUMNS,
    EVENT_COLUMNS,
    FRAME_COLUMNS,
    GROUP_COLUMNS,
    LENS_COLUMNS,
    PREFERENCE_COLUMNS,
)


@dataclass(frozen=True)
class BoundTable:
    name: str
    key: tuple[str, ...]
    columns: tuple[str, ...]
    instants: frozenset[str]
    integers: frozenset[str] = frozenset()

    @property
    def key_sql(self) -> str:
        return f"json_array({', '.join(self.key)})::VARCHAR"

    @property
    def digest_sql(self) -> str:
        parts = [f"epoch_us({c})" if c in self.instants else c for c in self.columns]
        return f"sha256(json_array({', '.join(parts)})::VARCHAR)"

    @property
    def digest_of_params(self) -> str:
        """The same digest over one row's parameters (cast to the columns' types) instead of a
        stored row: a point write gets its rows' digests from the insert itself."""
        parts = [
            "epoch_us(?::TIMESTAMPTZ)" if c in self.instants else "?::BIGINT" if c in self.integers else "?::VARCHAR"
            for c in self.columns
        ]
        return f"sha256(json_array({', '.join(parts)})::VARCHAR)"


_NS = ("tenant", "scope", "owner_id")
BOUND: dict[str, BoundTable] = {
    t.name: t
    for t in (
        BoundTable(
            "memory_versions",
            ("id",),
            VERSION_COLUMNS,
            frozenset({"observed_at", "valid_at", "invalid_at", "created_at", "expires_at"}),
            frozenset({"seq", "version", "audit_seq"}),
        ),
        BoundTable(
            "graph_triples",
            (*_NS, "triple_id"),
            (*_NS, *TRIPLE_COLUMNS),
            frozenset({"valid_at", "invalid_at", "seen_at", "ended_at"}),
        ),
        BoundTable(
            "graph_links",
            (*_NS, "triple_id", "fact_id", "link_kind"),
            (*_NS, "triple_id", "fact_id", "key", "content_sha256", "link_kind", "linked_at"),
            frozenset({"linked_at"}),
        ),
        BoundTable(
            "graph_entities",
            (*_NS, "entity_id", "entity_type"),
            (*_NS, "entity_id", "entity_type", "first_seen_at"),
            frozenset({"first_seen_at"}),
        ),
        BoundTable(
            "write_config",
            ("tenant", "memory_type"),
            ("tenant", "memory_type", "config_json", "updated_at"),
            frozenset({"updated_at"}),
        ),
        BoundTable(
            "ontologies",
            ("tenant", "version"),
            ("tenant", "version", "markdown", "sha256", "created_at", "actor"),
            frozenset({"created_at"}),
        ),
        BoundTable("api_keys", ("key_id",), API_KEY_COLUMNS, frozenset({"created_at", "expires_at", "revoked_at"})),
        BoundTable("state_changes", ("event_id",), EVENT_COLUMNS, frozenset(), frozenset({"seq", "audit_seq"})),
        BoundTable("lens_contracts", ("tenant", "lens_id", "version"), LENS_COLUMNS, frozenset({"defined_at"})),
        BoundTable("lens_preferences", ("tenant", "lens_id", "version"), PREFERENCE_COLUMNS, frozenset({"defined_at"})),
        BoundTable(
            "lens_assignments",
            ("tenant", "lens_id", "consumer", "version"),
            ASSIGNMENT_COLUMNS,
            frozenset({"assigned_at"}),
        ),
        BoundTable("permission_groups", ("tenant", "group_name", "version"), GROUP_COLUMNS, frozenset({"defined_at"})),
        BoundTable(
            "frames",
            ("tenant", "frame_id", "version"),
            FRAME_COLUMNS,
            frozenset({"opened_at", "changed_at", "closed_at"}),
        ),
        BoundTable(
            "decision_traces", ("tenant", "decision_id", "version"), DECISION_COLUMNS, frozenset({"recorded_at"})
        ),
        BoundTable("webhooks", ("tenant", "webhook_id", "version"), WEBHOOK_COLUMNS, frozenset({"changed_at"})),
        BoundTable("profile_schemas", (*_NS, "version"), PROFILE_SCHEMA_COLUMNS, frozenset({"set_at"})),
    )
}
# Tables whose rows carry their own ``+`` line (``row_digest``, written by their insert).
SELF_BOUND = ("memory_versions", "state_changes")


def insert_self_bound(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Sequence[Any]]) -> list[LedgerLine]:
    """Insert rows of a table whose rows carry their own ledger digest (``SELF_BOUND``), each
    computed by the insert from the same values: their ``+`` lines, without a second statement.
    Each row gives the bound table's columns, in order."""
    bound = BOUND[table]
    marks = "(" + ", ".join(["?"] * len(bound.columns) + [bound.digest_of_params]) + ")"
    params = [value for row in rows for value in (*row, *row)]
    found = con.execute(
        f"INSERT INTO {table} ({', '.join(bound.columns)}, row_digest) VALUES "
        + ", ".join([marks] * len(rows))
        + f" RETURNING row_digest, {bound.key_sql}",
        params,
    ).fetchall()
    return [LedgerLine(table, "+", digest, key) for digest, key in found]


class AuditedTx:
    """One audited transaction: its connection, the seq of the audit row that closes it, and the
    ledger lines its statements record."""

    def __init__(self, con: duckdb.DuckDBPyConnection, seq: int) -> None:
        self.con = con
        self.seq = seq
        self.lines: list[LedgerLine] = []

    def execute(self, sql: str, params: Sequence[Any] = ()) -> duckdb.DuckDBPyConnection:
        return self.con.execute(sql, list(params))

    def _record(self, change: str, table: str, where: str, params: Sequence[Any]) -> None:
        bound = BOUND[table]
        # RETURNING: the write's data root is hashed from its lines without reading them again.
        found = self.con.execute(
            f"INSERT INTO audit_digests SELECT ?, '{table}', {bound.key_sql}, {bound.digest_sql}, '{change}' "
            f"FROM {table} WHERE {where} RETURNING tbl, change, digest, row_key",
            [self.seq, *params],
        ).fetchall()
        self.lines.extend(LedgerLine(*line) for line in found)

    def added(self, table: str, where: str, params: Sequence[Any] = ()) -> None:
        """Record the rows of ``table`` matching ``where`` as they stand now (after the change)."""
        self._record("+", table, where, params)

    def removed(self, table: str, where: str, params: Sequence[Any] = ()) -> None:
        """Record the rows of ``table`` matching ``where`` as they stand now (before the change)."""
        self._record("-", table, where, params)

    @contextmanager
    def touching(self, table: str, where: str, params: Sequence[Any] = ()) -> Iterator[None]:
        """Statements that change only rows matching ``where``: their lines before and after."""
        self.removed(table, where, params)
        yield
        self.added(table, where, params)


# A version row written by a point write carries its ``+`` line itself (``row_digest``, the digest
# it was written with, never changed after), instead of a line in ``audit_digests``: one statement
# less per write. Together with the recorded lines these are the ledger.
LEDGER = (
    "SELECT seq, tbl, change, digest, row_key FROM audit_digests UNION ALL "
    "SELECT audit_seq, 'memory_versions', '+', row_digest, json_array(id)::VARCHAR FROM memory_versions "
    "WHERE row_digest IS NOT NULL UNION ALL "
    "SELECT audit_seq, 'state_changes', '+', row_digest, json_array(event_id)::VARCHAR FROM state_changes "
    "WHERE row_digest IS NOT NULL"
)


def lines_by_seq(con: duckdb.DuckDBPyConnection) -> dict[int, list[LedgerLine]]:
    """Every ledger line, by the seq of the audit row that closes its write."""
    out: dict[int, list[LedgerLine]] = {}
    for seq, *line in con.execute(LEDGER).fetchall():
        out.setdefault(int(seq) if seq is not None else -1, []).append(LedgerLine(*line))
    return out


def mismatches(con: duckdb.DuckDBPyConnection, limit: int = 100) -> list[RowMismatch]:
    """Stored rows the ledger does not account for, and ledger rows with no stored row, paired by
    row key into edits where both sides name the same row."""
    return paired_mismatches(con.execute(replay_sql(LEDGER, BOUND.values(), limit)).fetchall())


def replay_sql(ledger: str, bound: Iterable[BoundTable], limit: int) -> str:
    """The ledger replayed against the stored rows of the ``bound`` tables (their key and digest
    SQL in the engine's words; the rest is SQL both DuckDB and PostgreSQL take): (table, row key,
    expected count, stored count, seq) where the two disagree."""
    current = " UNION ALL ".join(
        f"SELECT '{b.name}'::VARCHAR AS tbl, {b.key_sql} AS row_key, {b.digest_sql} AS digest FROM {b.name}"
        for b in bound
    )
    sign = "sum(CASE change WHEN '+' THEN 1 ELSE -1 END)"
    return f"""
        WITH expected AS (
            SELECT tbl, row_key, digest, {sign} AS n, max(seq) AS seq
            FROM ({ledger}) AS ledger GROUP BY tbl, row_key, digest HAVING {sign} <> 0),
        stored AS (
            SELECT tbl, row_key, digest, count(*) AS n FROM ({current}) AS cur GROUP BY tbl, row_key, digest)
        SELECT coalesce(e.tbl, s.tbl), coalesce(e.row_key, s.row_key), coalesce(e.n, 0), coalesce(s.n, 0), e.seq
        FROM expected e FULL OUTER JOIN stored s ON e.tbl = s.tbl AND e.row_key = s.row_key AND e.digest = s.digest
        WHERE coalesce(e.n, 0) <> coalesce(s.n, 0)
        ORDER BY 1, 2, 5 NULLS LAST
        LIMIT {int(limit)}
        """


def paired_mismatches(rows: Sequence[tuple[Any, ...]]) -> list[RowMismatch]:
    """(table, row key, expected count, stored count, seq) rows of a ledger replay as mismatches,
    paired by row key into edits where both sides name the same row (shared with PostgreSQL)."""
    sides: dict[tuple[str, str], dict[str, Any]] = {}
    for table, row_key, expected, stored, seq in rows:
        side = sides.setdefault((table, row_key), {"missing": False, "extra": False, "seq": None})
        side["missing"] |= expected > stored
        side["extra"] |= stored > expected
        side["seq"] = side["seq"] if seq is None else seq
    out = []
    for (table, row_key), side in sides.items():
        problem = "edited" if side["missing"] and side["extra"] else "removed" if side["missing"] else "inserted"
        out.append(RowMismatch(table, row_key, problem, None if side["seq"] is None else int(side["seq"])))
    order = {"memory_versions": 0}
    return sorted(out, key=lambda m: (order.get(m.table, 1), m.seq is None, m.seq or 0, m.table, m.row_key))


def adopt_all(tx: AuditedTx) -> None:
    """Record every stored row of every bound table (a home whose chain did not bind data yet)."""
    for table in BOUND:  # a version row that carries its own line is bound already
        tx.added(table, "row_digest IS NULL" if table in SELF_BOUND else "TRUE")
