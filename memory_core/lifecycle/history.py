"""Redact, snapshot / restore and rollback: pure plans over a namespace's version log."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping, Sequence

from ..errors import InvalidSnapshot, LiveHead, NotFound
from ..model import LIVE_STATUSES, VISIBLE_STATUSES, FactVersion, Op, Status
from ..temporal import iso, parse_instant
from ..values import canonical_json, content_sha256
from .flags import KeyOp

REDACTED_JSON = canonical_json("[redacted]")
SNAPSHOT_FORMAT = "memcore.snapshot/1"
SNAPSHOT_FIELDS = (
    "key",
    "value",
    "content_sha256",
    "kind",
    "memory_type",
    "status",
    "valid_at",
    "invalid_at",
    "observed_at",
    "subject",
    "context",
    "source_class",
    "sensitivity",
    "expires_at",
    "on_expire",
    "locked",
    "pinned",
    "confidence",
    "version",
)


def redaction_targets(history: Sequence[FactVersion], version_id: str) -> list[FactVersion]:
    """The rows ``redact`` scrubs: the named version and every row of its key holding the same value.
    Refused while that value is the key's live head: delete it first."""
    target = next((r for r in history if r.id == version_id), None)
    if target is None:
        raise NotFound(f"no version {version_id!r} under this key in this scope", version_id=version_id)
    latest: dict[str, FactVersion] = {}
    for row in history:
        latest[row.fact_id] = row
    same = [r for r in history if r.content_sha256 == target.content_sha256]
    if any(
        latest[r.fact_id].status.value in LIVE_STATUSES and latest[r.fact_id].content_sha256 == target.content_sha256
        for r in same
    ):
        raise LiveHead("this value is the key's live head; delete it before redacting it", version_id=version_id)
    return same


def snapshot_rows(states: Mapping[str, Sequence[FactVersion]], now: datetime) -> list[dict[str, Any]]:
    """The live facts of a namespace as portable rows."""
    out = []
    for key in sorted(states):
        for s in states[key]:
            if s.status.value not in LIVE_STATUSES or s.expired(now):
                continue
            out.append(
                {
                    "key": s.key,
                    "value": s.value,
                    "content_sha256": s.content_sha256,
                    "kind": s.kind.value,
                    "memory_type": s.memory_type,
                    "status": s.status.value,
                    "valid_at": iso(s.valid_at),
                    "invalid_at": iso(s.invalid_at),
                    "observed_at": iso(s.observed_at),
                    "subject": s.subject,
                    "context": s.index_context,
                    "source_class": s.source_class,
                    "sensitivity": s.sensitivity,
                    "expires_at": iso(s.expires_at),
                    "on_expire": s.on_expire,
                    "locked": s.locked,
                    "pinned": s.pinned,
                    "confidence": s.confidence,
                    "version": s.version,
                }
            )
    return out


def payload_digest(rows: Sequence[Mapping[str, Any]]) -> str:
    return content_sha256(canonical_json(list(rows), levels_above=2, max_chars=None))  # the list, then each row


def check_payload(payload: Any) -> list[dict[str, Any]]:
    """Validate a snapshot payload; refuse (422) anything malformed or altered."""
    if not isinstance(payload, dict) or payload.get("format") != SNAPSHOT_FORMAT:
        raise InvalidSnapshot(f"not a snapshot payload: expected format {SNAPSHOT_FORMAT!r}")
    rows = payload.get("rows")
    if not isinstance(payload.get("snapshot_id"), str) or not isinstance(rows, list):
        raise InvalidSnapshot("a snapshot payload needs a snapshot_id and a list of rows")
    if payload_digest(rows) != payload.get("content_sha256"):
        raise InvalidSnapshot("the payload's content_sha256 does not match its rows: it was altered or truncated")
    for number, row in enumerate(rows):
        if not isinstance(row, dict) or set(row) != set(SNAPSHOT_FIELDS):
            raise InvalidSnapshot(f"row {number} does not have the snapshot fields")
        if content_sha256(canonical_json(row["value"])) != row["content_sha256"]:
            raise InvalidSnapshot(f"row {number}'s value does not match its content_sha256")
        for name in ("valid_at", "invalid_at", "observed_at", "expires_at"):
            parse_instant(row[name], name)
    return rows


@dataclass(frozen=True, slots=True)
class RollbackStep:
    key: str
    action: str  # restore | tombstone | unchanged | skipped_locked
    rows: tuple[FactVersion, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "action": self.action, "rows": len(self.rows)}


def plan_rollback(op: KeyOp, then: Sequence[FactVersion]) -> RollbackStep:
    """Put one key back to what the store held at the rollback instant: each fact whose state
    changed since takes its state of then as a new version; a fact born since is tombstoned."""
    now_states = {s.fact_id: s for s in op.states}
    then_states = {s.fact_id: s for s in then}
    changed = [
        s for fid, s in then_states.items() if now_states.get(fid) is None or _state(now_states[fid]) != _state(s)
    ]
    born = [s for fid, s in now_states.items() if fid not in then_states and s.status.value in VISIBLE_STATUSES]
    if not changed and not born:
        return RollbackStep(op.key, "unchanged")
    if any(s.locked for s in op.states if s.status.value in LIVE_STATUSES):
        return RollbackStep(op.key, "skipped_locked")
    change_id = op.new_id()
    rows: list[FactVersion] = []
    for state in sorted(changed, key=lambda s: s.version):
        rows.append(
            dataclasses.replace(
                state,
                id=op.new_id(),
                op=Op.ROLLBACK,
                version=op.head_version + len(rows) + 1,
                change_id=change_id,
                created_at=op.created_at,
                changed_by=op.actor,
            )
        )
    for state in sorted(born, key=lambda s: s.version):
        rows.append(
            dataclasses.replace(
                state,
                id=op.new_id(),
                op=Op.ROLLBACK,
                status=Status.TOMBSTONED,
                version=op.head_version + len(rows) + 1,
                change_id=change_id,
                created_at=op.created_at,
                changed_by=op.actor,
            )
        )
    visible_then = any(s.status.value in VISIBLE_STATUSES for s in then)
    return RollbackStep(op.key, "restore" if visible_then else "tombstone", tuple(rows))


def _state(s: FactVersion) -> tuple:
    """What a reader can tell apart: a rollback that restored these is done, whatever the row ids."""
    return (s.status, s.content_sha256, s.valid_at, s.invalid_at, s.expires_at, s.locked, s.pinned, s.sensitivity)


def snapshot_payload(
    snapshot_id: str, created_at: datetime, tenant: str, scope: str, rows: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "format": SNAPSHOT_FORMAT,
        "snapshot_id": snapshot_id,
        "created_at": iso(created_at),
        "source": {"tenant": tenant, "scope": scope},
        "rows": rows,
        "content_sha256": payload_digest(rows),
    }


@dataclass(frozen=True, slots=True)
class RollbackPlan:
    """What a rollback to ``to`` does (or did, when ``applied``): one step per key it changes."""

    to: datetime
    applied: bool
    steps: tuple[RollbackStep, ...]  # the keys it restores or tombstones
    unchanged: int  # keys already as they were then

    def to_dict(self) -> dict[str, Any]:
        return {
            "to": self.to.isoformat(),
            "applied": self.applied,
            "steps": [s.to_dict() for s in self.steps],
            "unchanged": self.unchanged,
        }
