"""The audit chain in the store: one hash-only row per write, appended in the write's transaction.

The chain's head is known from the version rows' ``audit_seq`` when a write appended version
rows (each row names the audit row that records it, so a chain missing its newest rows is
caught); a write that appends none (a settings change) keeps the head in ``audit_head``.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import duckdb

from ...audit import GENESIS_HASH, AuditEntry, AuditReport, AuditRow, chain, verify
from .connection import DuckDBConnection
from .schema import utc


class AuditChain:
    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db
        self.head: tuple[int, str] = self._stored_head()

    def next_seq(self, entries: int) -> int | None:
        """The seq the last of ``entries`` new audit rows will take (None when there are none)."""
        return self.head[0] + entries if entries else None

    def append(
        self, con: duckdb.DuckDBPyConnection, entries: Sequence[AuditEntry], *, recorded_by_rows: bool = False
    ) -> tuple[int, str]:
        """Append the entries inside the caller's transaction; answers the new head, which the
        caller keeps (``head = ...``) only once the transaction committed (``transaction`` does
        both)."""
        seq, prev = self.head
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

    @contextmanager
    def transaction(self, entries: Sequence[AuditEntry]) -> Iterator[duckdb.DuckDBPyConnection]:
        """A transaction whose statements the ``entries`` close; the head moves once it committed.
        Held under the store's lock until then, so no other writer chains onto the old head."""
        with self._db.lock:
            with self._db.tx() as con:
                yield con
                head = self.append(con, entries)
            self.head = head

    def _stored_head(self) -> tuple[int, str]:
        found = self._db.rows("SELECT seq, row_hash FROM audit_log ORDER BY seq DESC LIMIT 1")
        return (int(found[0][0]), found[0][1]) if found else (0, GENESIS_HASH)

    def rows(self) -> list[AuditRow]:
        rows = self._db.rows(
            "SELECT seq, written_at, tenant, scope, owner_id, key, op, version_ids, content_sha256, actor, prev_hash, "
            "row_hash FROM audit_log ORDER BY rowid",
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

    def verify(self) -> AuditReport:
        found = self._db.rows("SELECT seq, row_hash FROM audit_head")
        floor = self._db.one("SELECT coalesce(max(audit_seq), 0) FROM memory_versions")
        return verify(self.rows(), (int(found[0][0]), found[0][1]) if found else None, int(floor))
