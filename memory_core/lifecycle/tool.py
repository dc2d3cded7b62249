"""The lifecycle ops of the Memory tool: delete, restore, lock, pin, promote, demote, reject,
delete_version, redact, snapshot / restore_snapshot and rollback.
Each decides with a pure function and applies its rows with one audit row in one transaction."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..identity import Scope
from ..model import Op, WriteResult
from ..store.port import KeyChange, WriteBatch
from ..temporal import parse_instant
from ..values import content_sha256
from ..write.bulk import run_bulk
from ..write.point import after_write, audit_entry
from ..write.settle import entry_request, validate_key
from .flags import Decision, KeyOp, decide_delete, decide_delete_version, decide_flag, decide_restore
from .history import REDACTED_JSON, check_payload, plan_rollback, redaction_targets, snapshot_payload, snapshot_rows

if TYPE_CHECKING:
    from ..api import Memory


class LifecycleOps:
    _memory: "Memory"

    def _key_op(self, key: str, scope: str | Scope) -> KeyOp:
        key = validate_key(key)
        namespace = self.identity.namespace(scope)  # type: ignore[attr-defined]
        return KeyOp(
            namespace,
            key,
            tuple(self._memory.store.fact_states(namespace, key)),
            self.identity.actor,
            self._memory.clock.now(),
            self._memory._new_id,
        )  # type: ignore[attr-defined]

    def _apply(self, op: KeyOp, decision: Decision, audit_op: str, sha: str | None = None) -> WriteResult:
        if decision.rows:
            audit = audit_entry(op.namespace, op.key, audit_op, decision.rows, sha, op.actor, op.created_at)
            self._memory.store.apply(WriteBatch((KeyChange(op.namespace, op.key, decision.rows),), (audit,)))
            after_write(self._memory.write_context(), op.namespace, decision.rows, {})
        return WriteResult(decision.verdict, op.key, decision.rows)

    def _flag(self, key: str, scope: str | Scope, kind: Op) -> WriteResult:
        with self._memory.store.locked():
            op = self._key_op(key, scope)
            return self._apply(op, decide_flag(op, kind), kind.value)

    def delete(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Tombstone the key: reads stop seeing it, history keeps it, ``restore`` brings it back."""
        with self._memory.store.locked():
            op = self._key_op(key, scope)
            return self._apply(op, decide_delete(op), "delete")

    def delete_version(self, key: str, version: int, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Delete the key only while ``version`` (as read) is still its head; otherwise the verdict
        is ``version_changed`` and nothing is written."""
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise InvalidInput("version must be a positive integer (the version a read returned)", field="version")
        with self._memory.store.locked():
            op = self._key_op(key, scope)
            return self._apply(op, decide_delete_version(op, version), "delete_version")

    def restore(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Undo the latest delete, reject, expiry or retirement of ``key``."""
        with self._memory.store.locked():
            op = self._key_op(key, scope)
            history = self._memory.store.history(op.namespace, op.key)
            return self._apply(op, decide_restore(op, history), "restore")

    def lock(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Refuse every change of value (423) until unlocked."""
        return self._flag(key, scope, Op.LOCK)

    def unlock(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        return self._flag(key, scope, Op.UNLOCK)

    def pin(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Refuse a changed value (409) unless the write pins too, and refuse close peers of it."""
        return self._flag(key, scope, Op.PIN)

    def unpin(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        return self._flag(key, scope, Op.UNPIN)

    def promote(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Accept a proposal as an established fact."""
        return self._flag(key, scope, Op.PROMOTE)

    def demote(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Make an established fact a proposal again, with half its confidence and no expiry."""
        return self._flag(key, scope, Op.DEMOTE)

    def reject(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Mark the live fact wrong: hidden from reads, kept in history, undone by restore."""
        return self._flag(key, scope, Op.REJECT)

    def redact(self, key: str, version_id: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Scrub the value of one historical version, and of every row of the key holding the same
        value, in place: in DuckDB and in the index. Refuses the live head (delete it first)."""
        memory = self._memory
        with memory.store.locked():
            op = self._key_op(key, scope)
            targets = redaction_targets(memory.store.history(op.namespace, op.key), version_id)
            audit = audit_entry(op.namespace, op.key, "redact", targets, None, op.actor, op.created_at)
            memory.store.redact(targets, REDACTED_JSON, content_sha256(REDACTED_JSON), audit)
            if memory.embedder is not None:
                memory.flush()
                memory.projector.index.delete_facts(sorted({t.fact_id for t in targets}))
                memory.projector.index.purge_history()
                if memory._peers is not None:
                    memory._peers.clear()
        return WriteResult("redacted", op.key, (), {"versions_redacted": len(targets)})

    def snapshot(self, *, scope: str | Scope = Scope.USER) -> dict[str, Any]:
        """The scope's live facts as a portable payload (format, snapshot_id, rows, content_sha256)."""
        namespace = self.identity.namespace(scope)  # type: ignore[attr-defined]
        now = self._memory.clock.now()
        rows = snapshot_rows(self._memory.store.namespace_states(namespace), now)
        return snapshot_payload(uuid.uuid4().hex, now, namespace.tenant, namespace.scope.value, rows)

    def restore_snapshot(self, payload: Any, *, scope: str | Scope = Scope.USER) -> WriteResult:
        """Write a snapshot's facts into this scope; a second restore of the same snapshot_id here
        writes nothing (verdict ``already_restored``)."""
        rows = check_payload(payload)
        namespace = self.identity.namespace(scope)  # type: ignore[attr-defined]
        memory = self._memory
        if memory.store.snapshot_restored(payload["snapshot_id"], namespace):
            return WriteResult("already_restored", "*", ())
        now, provenance = memory.clock.now(), self._provenance()  # type: ignore[attr-defined]
        entries = [
            {
                "key": r["key"],
                "value": r["value"],
                "kind": r["kind"],
                "memory_type": r["memory_type"],
                "valid_at": r["valid_at"],
                "invalid_at": r["invalid_at"],
                "observed_at": r["observed_at"],
                "subject": r["subject"],
                "context": r["context"],
                "sensitivity": r["sensitivity"],
                "pin": r["pinned"],
                "proposed": r["status"] == "proposed",
                "confidence": r["confidence"],
                "on_expire": r["on_expire"],
            }
            for r in rows
        ]
        requests = [entry_request(namespace, i, e, provenance, now) for i, e in enumerate(entries)]
        result = run_bulk(
            memory.write_context(),
            requests,
            check_cap=0,
            operation="restore_snapshot",
            snapshot=(payload["snapshot_id"], len(rows)),
        )
        return WriteResult(
            "restored", "*", result.written, {"keys": len(rows), "skipped_unchanged": len(result.skipped_unchanged)}
        )

    def rollback(self, to: datetime | str, *, scope: str | Scope = Scope.USER, apply: bool = False) -> dict[str, Any]:
        """Put every key of the scope back to what the store held at ``to``: a new version per
        changed fact, keys absent then tombstoned. A dry run (the default) returns the plan only."""
        instant = parse_instant(to, "to")
        if instant is None:
            raise InvalidInput("rollback needs the instant to roll back to", field="to")
        memory = self._memory
        namespace = self.identity.namespace(scope)  # type: ignore[attr-defined]
        with memory.store.locked():
            now = memory.clock.now()
            then = memory.store.states_known_at(namespace, instant)
            current = memory.store.namespace_states(namespace)
            steps = [
                plan_rollback(
                    KeyOp(namespace, key, tuple(current.get(key, ())), self.identity.actor, now, memory._new_id),
                    then.get(key, ()),
                )
                for key in sorted(set(current) | set(then))
            ]
            changed = [s for s in steps if s.rows]
            if apply and changed:
                rows = [r for s in changed for r in s.rows]
                audit = audit_entry(
                    namespace, "*", "rollback", rows, None, self.identity.actor, max(r.created_at for r in rows)
                )
                memory.store.apply(WriteBatch(tuple(KeyChange(namespace, s.key, s.rows) for s in changed), (audit,)))
                after_write(memory.write_context(), namespace, rows, {})
        return {
            "to": instant.isoformat(),
            "applied": bool(apply and changed),
            "steps": [s.to_dict() for s in steps if s.action != "unchanged"],
            "unchanged": sum(1 for s in steps if s.action == "unchanged"),
        }
