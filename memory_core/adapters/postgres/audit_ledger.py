"""The audit ledger over PostgreSQL: the DuckDB ledger's bound tables, keys and digests
(``..duckdb.audit_ledger``), rendered in PostgreSQL's SQL.

A row's digest is SHA-256 of the text of ``json_build_array`` over all its columns, instants as
epoch microseconds (a bigint: no time zone or text format reaches the digest). PostgreSQL computes
it at write time and at verify time from the same expression over values of the columns' types,
so a row's stored digest equals the one recomputed from it. The digests are PostgreSQL's own: a
row hashes differently here than in a DuckDB home (the two engines render JSON differently); a
chain is only ever checked on the engine that wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import psycopg

from ...audit import LedgerLine, RowMismatch
from ..duckdb.audit_ledger import BOUND as DUCKDB_BOUND
from ..duckdb.audit_ledger import SELF_BOUND, BoundTable, paired_mismatches, replay_sql
from ..duckdb.audit_ledger import AuditedTx as DuckDBAuditedTx
from ..duckdb.audit_ledger import adopt_all as adopt_all  # only names tables and calls ``tx.added``
from .connection import Tx

__all__ = ["BOUND", "SELF_BOUND", "AuditedTx", "PgBoundTable", "adopt_all", "insert_self_bound"]

# Rows per multi-row insert: PostgreSQL takes at most 65535 parameters in one statement.
_ROWS_PER_INSERT = 1000


def epoch_us(column: str) -> str:
    """An instant as epoch microseconds (``extract`` answers an exact numeric)."""
    return f"(extract(epoch FROM {column}) * 1000000)::bigint"


def _sha256_of_array(parts: Iterable[str]) -> str:
    """SHA-256 (hex) of the JSON text of an array of SQL expressions."""
    return f"encode(sha256(convert_to(json_build_array({', '.join(parts)})::text, 'UTF8')), 'hex')"


@dataclass(frozen=True)
class PgBoundTable(BoundTable):
    """A DuckDB bound table (same key, columns and instants), its SQL in PostgreSQL's words."""

    @property
    def key_sql(self) -> str:
        return f"json_build_array({', '.join(self.key)})::text"

    @property
    def digest_sql(self) -> str:
        return _sha256_of_array(epoch_us(c) if c in self.instants else c for c in self.columns)

    @property
    def digest_of_params(self) -> str:
        """The same digest over one row's parameters, in the columns' order (for a table of text,
        bigint and instant columns, as the self-bound ones are)."""
        return _sha256_of_array(
            epoch_us("?::timestamptz") if t == "timestamptz" else f"?::{t}" for t in self.param_types
        )

    @property
    def param_types(self) -> tuple[str, ...]:
        """The casts of one row's parameters (a self-bound table holds text, bigints and instants
        only): ``digest_sql`` over them renders as over the stored columns."""
        return tuple(
            "timestamptz" if c in self.instants else "bigint" if c in self.integers else "text" for c in self.columns
        )


BOUND: dict[str, PgBoundTable] = {
    name: PgBoundTable(t.name, t.key, t.columns, t.instants, t.integers) for name, t in DUCKDB_BOUND.items()
}


def insert_self_bound(con: Tx, table: str, rows: Sequence[Sequence[Any]]) -> list[LedgerLine]:
    """Insert rows of a table whose rows carry their own ledger digest (``SELF_BOUND``), each
    computed by the insert from the values it inserts: their ``+`` lines, without a second
    statement. Each row gives the bound table's columns, in order."""
    bound = BOUND[table]
    cols = ", ".join(bound.columns)
    marks = "(" + ", ".join(f"?::{t}" for t in bound.param_types) + ")"
    lines: list[LedgerLine] = []
    for start in range(0, len(rows), _ROWS_PER_INSERT):
        chunk = rows[start : start + _ROWS_PER_INSERT]
        found = con.execute(
            f"INSERT INTO {table} ({cols}, row_digest) SELECT {cols}, {bound.digest_sql} "
            f"FROM (VALUES {', '.join([marks] * len(chunk))}) AS v ({cols}) RETURNING row_digest, {bound.key_sql}",
            [value for row in chunk for value in row],
        ).fetchall()
        lines.extend(LedgerLine(table, "+", digest, key) for digest, key in found)
    return lines


class AuditedTx(DuckDBAuditedTx):
    """One audited transaction: its connection (a ``Tx``: ``con.execute`` takes ``?``
    placeholders, as DuckDB's does), the seq of the audit row that closes it, and the ledger lines
    its statements record (``added``, ``removed``, ``touching``: the DuckDB ones, over this SQL)."""

    con: Tx  # type: ignore[assignment]

    def __init__(self, con: Tx, seq: int) -> None:
        super().__init__(con, seq)  # type: ignore[arg-type]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor:  # type: ignore[override]
        return self.con.execute(sql, params)

    def _record(self, change: str, table: str, where: str, params: Sequence[Any]) -> None:
        bound = BOUND[table]
        # RETURNING: the write's data root is hashed from its lines without reading them again.
        found = self.con.execute(
            f"INSERT INTO audit_digests (seq, tbl, row_key, digest, change) "
            f"SELECT ?::bigint, '{table}', {bound.key_sql}, {bound.digest_sql}, '{change}' "
            f"FROM {table} WHERE {where} RETURNING tbl, change, digest, row_key",
            [self.seq, *params],
        ).fetchall()
        self.lines.extend(LedgerLine(*line) for line in found)


# The ledger: the recorded lines, and the ``+`` lines self-bound rows carry (see the DuckDB ledger).
LEDGER = " UNION ALL ".join(
    [
        "SELECT seq, tbl, change, digest, row_key FROM audit_digests",
        *(
            f"SELECT audit_seq, '{t}', '+', row_digest, {BOUND[t].key_sql} FROM {t} WHERE row_digest IS NOT NULL"
            for t in SELF_BOUND
        ),
    ]
)


def lines_by_seq(con: Tx) -> dict[int, list[LedgerLine]]:
    """Every ledger line, by the seq of the audit row that closes its write."""
    out: dict[int, list[LedgerLine]] = {}
    for seq, *line in con.execute(LEDGER).fetchall():
        out.setdefault(int(seq) if seq is not None else -1, []).append(LedgerLine(*line))
    return out


def mismatches(con: Tx, limit: int = 100) -> list[RowMismatch]:
    """Stored rows the ledger does not account for, and ledger rows with no stored row, paired by
    row key into edits where both sides name the same row."""
    return paired_mismatches(con.execute(replay_sql(LEDGER, BOUND.values(), limit)).fetchall())
