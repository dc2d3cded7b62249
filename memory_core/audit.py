"""The audit chain: one hash-only row per write, each row's hash covering the one before it.

A row names who changed which key and the content hash written, never the value. ``verify``
recomputes the chain and reports the first row that was edited, removed or moved. Every
version row names the audit row that records it, and a write that appends no version row keeps
the chain's head apart, so removing the newest rows is caught too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:
    from .identity import Namespace
    from .model import FactVersion

GENESIS_HASH = "0" * 64


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


@dataclass(frozen=True, slots=True)
class AuditReport:
    ok: bool
    rows: int
    problem: str | None = None
    seq: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "rows": self.rows, "problem": self.problem, "seq": self.seq}


def row_hash(seq: int, entry: AuditEntry, prev_hash: str) -> str:
    payload = [
        seq,
        entry.at.isoformat(),
        entry.tenant,
        entry.scope,
        entry.owner_id,
        entry.key,
        entry.op,
        entry.version_ids,
        entry.content_sha256,
        entry.actor,
        prev_hash,
    ]
    return hashlib.sha256(json.dumps(payload, separators=(",", ":")).encode("utf-8")).hexdigest()


def chain(seq: int, entry: AuditEntry, prev_hash: str) -> AuditRow:
    return AuditRow(seq=seq, entry=entry, prev_hash=prev_hash, row_hash=row_hash(seq, entry, prev_hash))


def verify(rows: Iterable[AuditRow], head: tuple[int, str] | None, floor_seq: int = 0) -> AuditReport:
    """Check ``rows`` (in stored seq order) against each other, against the kept ``head`` (a row
    the chain must hold unchanged) and against ``floor_seq`` (the newest seq a version row names:
    the chain must reach it)."""
    expected_prev = GENESIS_HASH
    count = 0
    last: AuditRow | None = None
    hashes: dict[int, str] = {}
    for count, row in enumerate(rows, start=1):
        if row.seq != count:
            return AuditReport(
                False, count, f"expected seq {count}, found {row.seq}: a row was removed or moved", row.seq
            )
        if row.prev_hash != expected_prev:
            return AuditReport(False, count, "prev_hash does not match the previous row: the chain is broken", row.seq)
        if row_hash(row.seq, row.entry, row.prev_hash) != row.row_hash:
            return AuditReport(False, count, "row_hash does not match the row's fields: the row was edited", row.seq)
        expected_prev = row.row_hash
        hashes[row.seq] = row.row_hash
        last = row
    end = last.seq if last is not None else 0
    if head is not None:
        head_seq, head_hash = head
        if hashes.get(head_seq) != head_hash:
            return AuditReport(False, count, f"the chain ends before its recorded head (seq {head_seq})", head_seq)
    if end < floor_seq:
        return AuditReport(
            False,
            count,
            f"version rows name audit row {floor_seq}, the chain ends at {end}: its newest rows were removed",
            floor_seq,
        )
    return AuditReport(True, count)


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
