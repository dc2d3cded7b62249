"""The audit chain in a PostgreSQL authority: the DuckDB ``AuditChain``, for several processes.

Several replicas append to one chain, so nothing about it is kept in a process: each audited
transaction reads the head from ``audit_log`` inside the transaction, under the authority's write
lock (``db.lock``, held until the commit), so no other writer chains onto the same head. The one
``audit_head`` row is updated in place, inserted the first time. ``verify`` reads the chain, its
ledger and the stored rows in one snapshot (a repeatable-read transaction) without taking the
lock: writers go on meanwhile, and the snapshot holds whole transactions only.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from psycopg.pq import TransactionStatus

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
from ..duckdb.audit_chain import AUDIT_COLUMNS, audit_params, audit_row
from ..home_key import HomeKey
from .audit_ledger import AuditedTx, adopt_all, lines_by_seq, mismatches
from .connection import PgConnection, Tx
from .schema import COMMIT_FLOOR

_HEAD = "SELECT seq, row_hash FROM audit_log ORDER BY seq DESC LIMIT 1"


class PgAuditChain:
    def __init__(self, db: PgConnection, key: HomeKey | None = None, *, new_key_dir: Path | None = None) -> None:
        """``key`` signs (or, read-only, verifies) the head; without one, a writer takes the key in
        ``new_key_dir`` (another replica may have made it) or makes one there at its first
        audited write."""
        self._db = db
        self.key = key
        self._new_key_dir = new_key_dir
        # An authority hashes keys as commitments from its first row on (``schema.COMMIT_FLOOR``).
        floor = db.meta(COMMIT_FLOOR)
        self.commit_floor = int(floor) if floor is not None else 1

    @property
    def head(self) -> tuple[int, str]:
        """The chain's newest (seq, row_hash), as the database holds it now."""
        return _head(self._db.rows(_HEAD))

    def _signing_key(self) -> HomeKey:
        """The key that signs the head; called under the write lock, so two replicas sharing a
        key directory make one key between them."""
        if self.key is None and self._new_key_dir is not None:
            self.key = HomeKey.load(self._new_key_dir, private=True) or HomeKey.create(self._new_key_dir)
        if self.key is None or not self.key.can_sign:
            raise StoreCorrupted("this home has no signing key loaded: an audited write needs one")
        return self.key

    def _append(self, tx: AuditedTx, head: tuple[int, str], entries: Sequence[AuditEntry]) -> None:
        """Chain the entries onto ``head`` inside the transaction and sign the new head."""
        key = self._signing_key()
        seq, prev = head
        for entry in entries:
            seq += 1
            # The closing row commits to the write's ledger lines; rows before it in the same
            # transaction record none (every line of a write carries the closing seq).
            row = chain(seq, entry, prev, data_root(tx.lines, True) if seq == tx.seq else EMPTY_ROOT)
            tx.execute(f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ({', '.join('?' * 13)})", audit_params(row))
            prev = row.row_hash
        signed = [seq, prev, key.sign(head_message(seq, prev)), key.key_id]
        if not tx.execute("UPDATE audit_head SET seq = ?, row_hash = ?, signature = ?, key_id = ?", signed).rowcount:
            tx.execute("INSERT INTO audit_head (seq, row_hash, signature, key_id) VALUES (?, ?, ?, ?)", signed)

    @contextmanager
    def transaction(
        self, entries: Sequence[AuditEntry], *, before_commit: Callable[[], None] | None = None
    ) -> Iterator[AuditedTx]:
        """A transaction whose statements the ``entries`` close, under the write lock until it
        committed, so no other writer (in this process or another) chains onto the same head.
        ``before_commit`` runs last inside it: if it raises, nothing is written."""
        if not entries:
            raise StoreCorrupted("an audited transaction needs at least one audit entry")
        with self._db.lock:
            with self._db.tx() as con:
                head = _head(con.execute(_HEAD).fetchall())
                tx = AuditedTx(con, head[0] + len(entries))
                yield tx
                self._append(tx, head, entries)
                if before_commit is not None:
                    before_commit()

    def adopt(self, entry: AuditEntry) -> bool:
        """Bind the rows an authority already holds, once (as the DuckDB chain does): only a
        chain with rows and no signed head is adopted. Answers whether it did."""
        with self._db.lock:  # two replicas opening together adopt once
            signed = self._db.rows("SELECT signature FROM audit_head WHERE signature IS NOT NULL")
            if signed or not self._db.one("SELECT count(*) FROM audit_log"):
                return False  # bound already, or a new authority: its first write starts the chain
            with self.transaction([entry]) as tx:
                adopt_all(tx)
        return True

    def signed_head(self) -> SignedHead | None:
        return _signed_head(self._db.rows("SELECT seq, row_hash, signature, key_id FROM audit_head"))

    def rows(self) -> list[AuditRow]:
        return self._rows(self._db.rows(f"SELECT {AUDIT_COLUMNS} FROM audit_log ORDER BY seq"))

    def _rows(self, rows: Sequence[Sequence[Any]]) -> list[AuditRow]:
        return [audit_row(r, self.commit_floor) for r in rows]

    def verify(self) -> AuditReport:
        with self._snapshot() as con:
            head = _signed_head(con.execute("SELECT seq, row_hash, signature, key_id FROM audit_head").fetchall())
            rows = self._rows(con.execute(f"SELECT {AUDIT_COLUMNS} FROM audit_log ORDER BY seq").fetchall())
            floor = con.execute("SELECT coalesce(max(audit_seq), 0) FROM memory_versions").fetchone()[0]
            lines = lines_by_seq(con)
            found = mismatches(con)
        if self.key is None and self._new_key_dir is not None:  # another replica may have made it since
            self.key = HomeKey.load(self._new_key_dir, private=True)
        signature_ok: bool | None = None
        if head is not None and head.signature is not None and self.key is not None:
            signature_ok = head.key_id == self.key.key_id and self.key.verify(
                head_message(head.seq, head.row_hash), head.signature
            )
        return verify(rows, head, signature_ok=signature_ok, floor_seq=int(floor), lines=lines, mismatches=found)

    @contextmanager
    def _snapshot(self) -> Iterator[Tx]:
        """One read-only repeatable-read transaction (or the caller's, when one is open on this
        thread's connection: its reads see one state already as far as this thread writes)."""
        with self._db.connection() as con:
            if con.info.transaction_status != TransactionStatus.IDLE:
                yield Tx(con)
                return
            with con.transaction():
                con.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                yield Tx(con)


def _head(found: Sequence[Sequence[Any]]) -> tuple[int, str]:
    return (int(found[0][0]), found[0][1]) if found else (0, GENESIS_HASH)


def _signed_head(found: Sequence[Sequence[Any]]) -> SignedHead | None:
    if not found:
        return None
    seq, digest, signature, key_id = found[0]
    return SignedHead(int(seq), digest, signature, key_id)
