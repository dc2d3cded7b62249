"""The lifecycle ops of the Memory tool: delete, restore, lock, pin, promote, demote, reject,
delete_version, redact, snapshot / restore_snapshot and rollback. Each decides with a pure
function (``lifecycle.flags``, ``lifecycle.history``) and commits its rows with one audit row."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from ..audit import audit_entry
from ..errors import InvalidInput
from ..identity import Namespace, Scope
from ..lifecycle.flags import KeyOp, decide_delete, decide_delete_version, decide_flag, decide_restore
from ..lifecycle.history import (
    REDACTED_JSON,
    RollbackPlan,
    check_payload,
    plan_rollback,
    redaction_targets,
    snapshot_payload,
    snapshot_rows,
)
from ..model import FactVersion, Kind, Op, Provenance, WriteResult
from ..ports import KeyChange
from ..resolver.undo import unsupersede_records
from ..session import Commit, RunService, Session
from ..session.bulk import run_bulk
from ..session.keys import commit_decision, decide_key, key_op
from ..temporal import parse_instant
from ..texts import value_text
from ..values import content_sha256
from ..write.conversation import requoted
from ..write.settle import entry_request


class LifecycleService(RunService):
    def flag(self, key: str, *, scope: str | Scope, kind: Op) -> WriteResult:
        """lock, unlock, pin, unpin, promote, demote, reject."""
        return decide_key(self.session, self.identity, key, scope, lambda op: decide_flag(op, kind), kind.value)

    def delete(self, key: str, *, scope: str | Scope) -> WriteResult:
        return decide_key(self.session, self.identity, key, scope, decide_delete, "delete")

    def delete_version(self, key: str, version: int, *, scope: str | Scope) -> WriteResult:
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise InvalidInput("version must be a positive integer (the version a read returned)", field="version")
        decide = lambda op: decide_delete_version(op, version)  # noqa: E731
        return decide_key(self.session, self.identity, key, scope, decide, "delete_version")

    def restore(self, key: str, *, scope: str | Scope) -> WriteResult:
        """Undo the key's latest retiring change. An Undo of a recorded retirement (the
        resolver's, a reviewer's) first writes an ``unsupersede`` record naming it: when that
        record cannot be written, nothing is restored (resolver/undo.py)."""
        session = self.session
        with session.locked():
            op = key_op(session, self.identity, key, scope)
            decision = decide_restore(op, session.versions.history(op.namespace, op.key))
            current = {s.fact_id: s for s in op.states}
            undone = [current[r.fact_id] for r in decision.rows if r.fact_id in current]
            records = session.ledger.resolver_records(op.namespace) if any(s.op is Op.SUPERSEDE for s in undone) else []
            for record in unsupersede_records(undone, records, session.new_id, op.actor, op.created_at):
                session.refuse_read_only("restore")
                session.ledger.record_resolution(record)
            return commit_decision(session, op, decision, "restore")

    def redact(self, key: str, version_id: str, *, scope: str | Scope) -> WriteResult:
        session = self.session
        with session.locked():
            op = key_op(session, self.identity, key, scope)
            targets = redaction_targets(session.versions.history(op.namespace, op.key), version_id)
            audit = audit_entry(op.namespace, op.key, "redact", targets, None, op.actor, op.created_at)
            quoting = _quoting(session, op.namespace, targets)
            session.redact(tuple(targets), REDACTED_JSON, content_sha256(REDACTED_JSON), audit, quoting)
        details = {"versions_redacted": len(targets), "contexts_requoted": len(quoting)}
        return WriteResult("redacted", op.key, (), details)

    def snapshot(self, *, scope: str | Scope) -> dict[str, Any]:
        """The payload, and one hash-only audit row (op ``snapshot``, key ``snapshot:<id>``, the
        payload's content_sha256): who took which scope's facts out, and when. A home opened
        read-only answers the payload with no audit row: it cannot record one, and whoever can
        open it can read every row of it anyway, so a refusal would protect nothing."""
        namespace = self.identity.namespace(scope)
        session = self.session
        with session.locked():
            now = session.clock.now()
            rows = snapshot_rows(session.versions.namespace_states(namespace), now)
            payload = snapshot_payload(session.new_id(), now, namespace.tenant, namespace.scope.value, rows)
            if not session.store.read_only:
                key = f"snapshot:{payload['snapshot_id']}"
                sha = payload["content_sha256"]
                audit = audit_entry(namespace, key, "snapshot", (), sha, self.identity.actor, now)
                session.commit(Commit((), (audit,), events=()))  # a read: no state changed, no event
        return payload

    def restore_snapshot(self, payload: Any, *, scope: str | Scope) -> WriteResult:
        rows = check_payload(payload)
        namespace = self.identity.namespace(scope)
        session = self.session
        if session.versions.snapshot_restored(payload["snapshot_id"], namespace):
            return WriteResult("already_restored", "*", ())
        now, provenance = session.clock.now(), Provenance.of(self.identity, self.origin)
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
            session,
            requests,
            check_cap=0,
            operation="restore_snapshot",
            snapshot=(payload["snapshot_id"], len(rows)),
        )
        return WriteResult(
            "restored", "*", result.written, {"keys": len(rows), "skipped_unchanged": len(result.skipped_unchanged)}
        )

    def rollback(self, to: datetime | str, *, scope: str | Scope, apply: bool) -> RollbackPlan:
        instant = parse_instant(to, "to")
        if instant is None:
            raise InvalidInput("rollback needs the instant to roll back to", field="to")
        session = self.session
        namespace = self.identity.namespace(scope)
        actor = self.identity.actor
        with session.locked():
            now = session.clock.now()
            then = session.versions.states_known_at(namespace, instant)
            current = session.versions.namespace_states(namespace)
            steps = [
                plan_rollback(
                    KeyOp(namespace, key, tuple(current.get(key, ())), actor, now, session.new_id), then.get(key, ())
                )
                for key in sorted(set(current) | set(then))
            ]
            changed = [s for s in steps if s.rows]
            if apply and changed:
                rows = [r for s in changed for r in s.rows]
                audit = audit_entry(namespace, "*", "rollback", rows, None, actor, max(r.created_at for r in rows))
                session.commit(Commit(tuple(KeyChange(namespace, s.key, s.rows) for s in changed), (audit,)))
        return RollbackPlan(
            instant,
            bool(apply and changed),
            tuple(s for s in steps if s.action != "unchanged"),
            sum(1 for s in steps if s.action == "unchanged"),
        )


def _quoting(session: Session, namespace: Namespace, targets: Sequence[FactVersion]) -> tuple[FactVersion, ...]:
    """The rows of later notes of a run session whose index context quoted the redacted words
    (``write.conversation``), with those words taken out."""
    if not targets:
        return ()
    text = value_text(targets[0].value)  # every target holds the same value
    found = [
        row
        for target in targets
        if target.kind is Kind.NOTE and target.provenance.session is not None
        for row in session.versions.notes_quoting(namespace, target.id, target.provenance.session, text)
        if row.fact_id != target.fact_id
    ]
    return tuple(requoted(found, text))
