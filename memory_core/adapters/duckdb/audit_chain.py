"""The audit chain in the store: one hash-only row per write, appended in the write's transaction
with the ledger lines of the rows it touched, and the chain's head signed with the home's key.

Every audited write goes through ``transaction``: its statements record their ledger lines on the
yielded ``AuditedTx``; at the end, the audit rows are chained (the last one committing to the
write's data root) and ``audit_head`` is replaced by the new head and its signature, all in the
same transaction. Version rows also name the audit row that records them (``audit_seq``).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ...audit import (
    EMPTY_ROOT,
    GENESIS_HASH,
    AuditEntry,
    AuditReport,
    AuditRow,
    SignedHead,
    chain,
    data_root,
    head_message,
    verify,
)
from ...errors import StoreCorrupted
from ..home_key import HomeKey
from .audit_ledger import AuditedTx, adopt_all, lines_by_seq, mismatches
from .connection import DuckDBConnection
from .schema import utc

COMMIT_FLOOR = "audit_key_commit_from"

AUDIT_COLUMNS = (
    "seq, written_at, tenant, scope, owner_id, key, op, version_ids, content_sha256, actor, prev_hash, row_hash, "
    "data_root"
)


def audit_params(row: AuditRow) -> list[Any]:
    """An audit row as the parameters of an insert of ``AUDIT_COLUMNS`` (shared with PostgreSQL)."""
    e = row.entry
    return [
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
        row.data_root,
    ]


def audit_row(r: Sequence[Any], commit_floor: int) -> AuditRow:
    """A stored row of ``AUDIT_COLUMNS`` (shared with PostgreSQL)."""
    return AuditRow(
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
        data_root=r[12],
        committed=int(r[0]) >= commit_floor,
    )


class AuditChain:
    def __init__(self, db: DuckDBConnection, key: HomeKey | None = None, *, new_key_dir: Path | None = None) -> None:
        """``key`` signs (or, read-only, verifies) the head; without one, a writer makes one in
        ``new_key_dir`` at its first audited write (so a home that refused every write has none)."""
        self._db = db
        self.key = key
        self._new_key_dir = new_key_dir
        self.head: tuple[int, str] = self._stored_head()
        # The first seq whose row hashes its key as a commitment (schema 9 on; see ``migrations``).
        floor = db.meta(COMMIT_FLOOR)
        self.commit_floor = int(floor) if floor is not None else self.head[0] + 1
        self._head_stored = self._db.one("SELECT count(*) FROM audit_head") == 1

    def _append(self, tx: AuditedTx, entries: Sequence[AuditEntry]) -> tuple[int, str]:
        """Chain the entries inside the transaction and sign the new head; answers the head, which
        the caller keeps only once the transaction committed."""
        if self.key is None and self._new_key_dir is not None:
            self.key = HomeKey.create(self._new_key_dir)
        if self.key is None or not self.key.can_sign:
            raise StoreCorrupted("this home has no signing key loaded: an audited write needs one")
        seq, prev = self.head
        for entry in entries:
            seq += 1
            # The closing row commits to the write's ledger lines; rows before it in the same
            # transaction record none (every line of a write carries the closing seq).
            row = chain(seq, entry, prev, data_root(tx.lines, True) if seq == tx.seq else EMPTY_ROOT)
            tx.execute(f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ({', '.join('?' * 13)})", audit_params(row))
            prev = row.row_hash
        head = [seq, prev, self.key.sign(head_message(seq, prev)), self.key.key_id]
        if self._head_stored:  # one statement per write: the head row is replaced in place
            tx.execute("UPDATE audit_head SET seq = ?, row_hash = ?, signature = ?, key_id = ?", head)
        else:
            tx.execute("DELETE FROM audit_head")
            tx.execute("INSERT INTO audit_head (seq, row_hash, signature, key_id) VALUES (?, ?, ?, ?)", head)
        return seq, prev

    @contextmanager
    def transaction(
        self, entries: Sequence[AuditEntry], *, before_commit: Callable[[], None] | None = None
    ) -> Iterator[AuditedTx]:
        """A transaction whose statements the ``entries`` close; the head moves once it committed.
        Held under the store's lock until then, so no other writer chains onto the old head.
        ``before_commit`` runs last inside it: if it raises, nothing is written."""
        if not entries:
            raise StoreCorrupted("an audited transaction needs at least one audit entry")
        with self._db.lock:
            with self._db.tx() as con:
                tx = AuditedTx(con, self.head[0] + len(entries))
                yield tx
                head = self._append(tx, entries)
                if before_commit is not None:
                    before_commit()
            self.head = head
            self._head_stored = True

    def adopt(self, entry: AuditEntry) -> bool:
        """Bind the rows a home already holds, once: a home whose chain has no signed head (written
        before the chain bound data) gets one audit row recording every stored row. Answers
        whether it did."""
        signed = self._db.rows("SELECT signature FROM audit_head WHERE signature IS NOT NULL")
        if signed or not self._db.one("SELECT count(*) FROM audit_log"):
            return False  # bound already, or a new home: its first write starts the chain
        with self.transaction([entry]) as tx:
            adopt_all(tx)
        return True

    def _stored_head(self) -> tuple[int, str]:
        found = self._db.rows("SELECT seq, row_hash FROM audit_log ORDER BY seq DESC LIMIT 1")
        return (int(found[0][0]), found[0][1]) if found else (0, GENESIS_HASH)

    def signed_head(self) -> SignedHead | None:
        found = self._db.rows("SELECT seq, row_hash, signature, key_id FROM audit_head")
        if not found:
            return None
        seq, digest, signature, key_id = found[0]
        return SignedHead(int(seq), digest, signature, key_id)

    def rows(self) -> list[AuditRow]:
        rows = self._db.rows(f"SELECT {AUDIT_COLUMNS} FROM audit_log ORDER BY rowid")
        return [audit_row(r, self.commit_floor) for r in rows]

    def verify(self) -> AuditReport:
        head = self.signed_head()
        signature_ok: bool | None = None
        if head is not None and head.signature is not None and self.key is not None:
            signature_ok = head.key_id == self.key.key_id and self.key.verify(
                head_message(head.seq, head.row_hash), head.signature
            )
        floor = self._db.one("SELECT coalesce(max(audit_seq), 0) FROM memory_versions")
        with self._db.lock:
            lines = lines_by_seq(self._db.con)
            found = mismatches(self._db.con)
        return verify(self.rows(), head, signature_ok=signature_ok, floor_seq=int(floor), lines=lines, mismatches=found)
