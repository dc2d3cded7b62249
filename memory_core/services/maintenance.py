"""Maintenance of a home: the expiry sweep (apply ``on_expire`` to every fact past its
``expires_at``), run by a worker or a schedule, never on a caller's path."""

from __future__ import annotations

from ..audit import audit_entry
from ..lifecycle.expiry import decide_expiry
from ..ports import KeyChange
from ..session import Commit, Session
from ..session.keys import read_key


class ExpiryService:
    def __init__(self, session: Session) -> None:
        self.session = session

    def sweep_expired(self, *, actor: str = "worker:expiry-sweep") -> dict[str, int]:
        """Apply on_expire to every fact whose expires_at has passed. Returns counts by action."""
        session = self.session
        now = session.clock.now()
        counts = {"tombstone": 0, "demote": 0, "anonymize": 0, "keys": 0}
        for ns, keys in session.versions.expired_keys(now).items():
            changes, audits = [], []
            with session.locked():
                for key in keys:
                    op = read_key(session, ns, key, actor, now)
                    decision = decide_expiry(op)
                    if decision.rows:
                        changes.append(KeyChange(ns, key, decision.rows))
                        audits.append(audit_entry(ns, key, "expire", decision.rows, None, actor, op.created_at))
                        for row in decision.rows:
                            counts[row.on_expire] += 1
                if changes:
                    session.commit(Commit(tuple(changes), tuple(audits)))
            counts["keys"] += len(changes)
        return counts
