"""The audit chain: one hash-only row per write, each row's hash covering the one before it and
the digests of every stored row the write added, changed or removed.

A row names who changed which key and the content hash written, never the value. Beside the
chain, a ledger keeps one digest per row a write touched (``+`` for the row as it stands after
the write, ``-`` for the row as it stood before); each audit row commits to its write's ledger
lines through ``data_root``. The chain's newest row is signed with the home's Ed25519 key. So
``verify`` can say, for a home whose file was edited by hand: which audit row was edited,
removed or moved; which stored row was edited, inserted or removed; that the newest rows were
cut off; or that the chain was recomputed by someone without the key. What it cannot see:
someone holding the key, or a whole file rolled back to an earlier signed state
(``docs/audit.md``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    from .identity import Namespace
    from .model import FactVersion

GENESIS_HASH = "0" * 64
# The data root of a write that touched no bound row (a ledger with no lines).
EMPTY_ROOT = hashlib.sha256(b"").hexdigest()  # == data_root(())
_HEAD_DOMAIN = b"memory_core audit head v1\n"
# An erased key, as the audit row and the ledger keep it: the prefix and the key's SHA-256, which
# is what a committed row hashed in the first place (``key_commitment``).
ERASED_PREFIX = "erased:"


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """The fields a write contributes; the store adds seq and the hashes."""

    at: datetime
    tenant: str
    scope: str
    owner_id: str
    key: str
    op: str
    version_ids: str  # comma-separated ids of the version rows the write appended
    content_sha256: str | None
    actor: str


@dataclass(frozen=True, slots=True)
class AuditRow:
    seq: int
    entry: AuditEntry
    prev_hash: str
    row_hash: str
    # The digest of the write's ledger lines; None on rows written before the chain bound data
    # (a home migrated from schema 5 or older: its rows are bound by the migration's adopt row).
    data_root: str | None = None
    # Rows of schema 9 on hash their key (and their ledger lines' row keys) as SHA-256
    # commitments, so an erasure can drop the key and the row still verifies.
    committed: bool = False


@dataclass(frozen=True, slots=True)
class SignedHead:
    """The chain's newest row as the writer signed it."""

    seq: int
    row_hash: str
    signature: str | None
    key_id: str | None


@dataclass(frozen=True, slots=True)
class LedgerLine:
    """One stored row a write touched: its table, ``+`` (as it stands after the write) or ``-``
    (as it stood before), the digest of all its columns, and its row key (for saying which row)."""

    table: str
    change: str
    digest: str
    row_key: str


def key_commitment(key: str) -> str:
    """What a committed audit row hashes in a key's place: its SHA-256, or the digest an erased
    key left behind (``erased:<sha256>``)."""
    if key.startswith(ERASED_PREFIX) and len(key) == len(ERASED_PREFIX) + 64:
        return key[len(ERASED_PREFIX) :]
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def erased_key(key: str) -> str:
    """The form an erasure leaves a key in: no byte of it, and the same commitment."""
    return ERASED_PREFIX + key_commitment(key)


def data_root(lines: Iterable[LedgerLine], committed: bool = False) -> str:
    """The digest a write's audit row commits to: its ledger lines, in one canonical order (row
    keys as commitments on a committed row)."""
    keyed = [(x.table, x.change, x.digest, key_commitment(x.row_key) if committed else x.row_key) for x in lines]
    text = "\n".join("\t".join(line) for line in sorted(keyed))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class RowMismatch:
    """A stored row whose digest the ledger does not account for (or a ledger row with no stored
    row): ``problem`` is edited, inserted or removed; ``seq`` the audit row that last recorded it."""

    table: str
    row_key: str
    problem: str
    seq: int | None


@dataclass(frozen=True, slots=True)
class AuditReport:
    ok: bool
    rows: int
    problem: str | None = None
    seq: int | None = None
    table: str | None = None
    row_key: str | None = None
    signed: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "rows": self.rows,
            "problem": self.problem,
            "seq": self.seq,
            "table": self.table,
            "row_key": self.row_key,
            "signed": self.signed,
        }


def row_hash(seq: int, entry: AuditEntry, prev_hash: str, data_root: str | None = None, committed: bool = False) -> str:
    payload: list[object] = [
        seq,
        entry.at.isoformat(),
        entry.tenant,
        entry.scope,
        entry.owner_id,
        key_commitment(entry.key) if committed else entry.key,
        entry.op,
        entry.version_ids,
        entry.content_sha256,
        entry.actor,
        prev_hash,
    ]
    if data_root is not None:  # rows of schema 5 and older hash without it, and still verify
        payload.append(data_root)
    return hashlib.sha256(json.dumps(payload, separators=(",", ":")).encode("utf-8")).hexdigest()


def chain(
    seq: int, entry: AuditEntry, prev_hash: str, data_root: str | None = None, committed: bool = True
) -> AuditRow:
    digest = row_hash(seq, entry, prev_hash, data_root, committed)
    return AuditRow(seq, entry, prev_hash, digest, data_root, committed)


def head_message(seq: int, row_hash: str) -> bytes:
    """The bytes the home's key signs for a chain head (domain-separated from anything else it signs)."""
    return _HEAD_DOMAIN + f"{seq}\n{row_hash}".encode("ascii")


def _chain_problem(rows: Iterable[AuditRow]) -> tuple[AuditReport | None, list[AuditRow]]:
    """Walk the chain: seq order, links, each row's hash; answers the first problem and the rows."""
    expected_prev = GENESIS_HASH
    binding = False
    seen: list[AuditRow] = []
    for count, row in enumerate(rows, start=1):
        problem = None
        if row.seq != count:
            problem = f"expected seq {count}, found {row.seq}: an audit row was removed or moved"
        elif row.prev_hash != expected_prev:
            problem = "prev_hash does not match the previous row: the chain is broken"
        elif row_hash(row.seq, row.entry, row.prev_hash, row.data_root, row.committed) != row.row_hash:
            problem = "row_hash does not match the row's fields: the audit row was edited"
        elif row.data_root is None and binding:
            problem = "an audit row without a data root after the chain began binding data: the row was edited"
        if problem is not None:
            return AuditReport(False, count, problem, row.seq, "audit_log"), seen
        binding = binding or row.data_root is not None
        expected_prev = row.row_hash
        seen.append(row)
    return None, seen


def _root_problem(rows: Sequence[AuditRow], lines: Mapping[int, Sequence[LedgerLine]]) -> AuditReport | None:
    """Each binding row's data root against its write's ledger lines, and no line of a write the
    chain does not hold."""
    for row in rows:
        if row.data_root is not None and data_root(lines.get(row.seq, ()), row.committed) != row.data_root:
            # A version row of a point write carries its own line: gone with the row, it is found
            # by the ids the audit row names.
            keys = {line.row_key for line in lines.get(row.seq, ()) if line.table == "memory_versions"}
            gone = [i for i in row.entry.version_ids.split(",") if i and json.dumps([i]) not in keys]
            if gone:
                problem = f"memory_versions row {json.dumps([gone[0]])} was written by this write and is gone"
                return AuditReport(False, len(rows), problem, row.seq, "memory_versions", json.dumps([gone[0]]))
            problem = "the ledger lines of this write do not match its data root: the ledger was edited"
            return AuditReport(False, len(rows), problem, row.seq, "audit_digests")
    stray = sorted(set(lines) - {r.seq for r in rows if r.data_root is not None})
    if stray:
        problem = f"ledger lines name audit row {stray[0]}, which holds no data root: the ledger was edited"
        return AuditReport(False, len(rows), problem, stray[0], "audit_digests")
    return None


def _mismatch_report(first: RowMismatch, rows: int, signed: bool) -> AuditReport:
    what = {
        "edited": "was edited after the write that recorded it",
        "inserted": "is not recorded by any write: it was inserted by hand (or its key was edited)",
        "removed": "was recorded by a write and is gone: it was removed by hand (or its key was edited)",
    }[first.problem]
    problem = f"{first.table} row {first.row_key} {what}"
    return AuditReport(False, rows, problem, first.seq, first.table, first.row_key, signed=signed)


def verify(
    rows: Iterable[AuditRow],
    head: SignedHead | None,
    *,
    signature_ok: bool | None,
    floor_seq: int = 0,
    lines: Mapping[int, Sequence[LedgerLine]] | None = None,
    mismatches: Sequence[RowMismatch] = (),
) -> AuditReport:
    """Check, in this order, and report the first problem: the chain ``rows`` (in stored order)
    against each other; the stored rows against the replayed ledger (``mismatches``: the most
    precise report, naming the row); each row's data root against the ledger ``lines`` of its
    write (by the seq that closes it); the signed ``head`` (``signature_ok``: did its signature
    verify with the home's public key, None when there was no key to check with); and
    ``floor_seq`` (the newest seq a version row names: the chain must reach it)."""
    found, chained = _chain_problem(rows)
    if found is not None:
        return found
    count = len(chained)
    end = chained[-1].seq if chained else 0
    binding = any(r.data_root is not None for r in chained)
    signed = head is not None and head.signature is not None
    if mismatches:
        return _mismatch_report(mismatches[0], count, signed)
    found = _root_problem(chained, lines or {})
    if found is not None:
        return found
    if head is not None:
        hashes = {r.seq: r.row_hash for r in chained}
        if hashes.get(head.seq) != head.row_hash:
            problem = f"the chain ends before its signed head (seq {head.seq}): its newest rows were removed"
            return AuditReport(False, count, problem, head.seq, "audit_log")
        if head.seq != end:
            problem = f"audit rows after the signed head (seq {head.seq}) were appended without the home's key"
            return AuditReport(False, count, problem, head.seq + 1, "audit_log")
        if binding and not signed:
            problem = "the chain binds data but its head carries no signature: the signature was removed"
            return AuditReport(False, count, problem, head.seq, "audit_head")
        if signed and signature_ok is None:
            problem = "the chain's head is signed, but the home's public key is missing: cannot check it"
            return AuditReport(False, count, problem, head.seq, "audit_head")
        if signed and not signature_ok:
            problem = "the head's signature does not verify with the home's key: the chain was recomputed without it"
            return AuditReport(False, count, problem, head.seq, "audit_head")
    elif binding:
        return AuditReport(False, count, "the chain's signed head is missing", end, "audit_head")
    if end < floor_seq:
        problem = f"version rows name audit row {floor_seq}, the chain ends at {end}: its newest rows were removed"
        return AuditReport(False, count, problem, floor_seq, "audit_log")
    return AuditReport(True, count, signed=signed)


def audit_entry(
    namespace: Namespace, key: str, op: str, rows: Sequence[FactVersion], sha: str | None, actor: str, at: datetime
) -> AuditEntry:
    """The audit entry of a write on ``key`` (or ``*``) that appended ``rows``."""
    return AuditEntry(
        at=at,
        tenant=namespace.tenant,
        scope=namespace.scope.value,
        owner_id=namespace.owner_id,
        key=key,
        op=op,
        version_ids=",".join(r.id for r in rows),
        content_sha256=sha,
        actor=actor,
    )
