"""Maintenance of a home: the expiry sweep (apply ``on_expire`` to every fact past its
``expires_at``), run by a worker or a schedule, never on a caller's path."""

from __future__ import annotations

from ..audit import audit_entry
from ..identity import GLOBAL_TENANT, Namespace, Scope
from ..lifecycle.expiry import decide_expiry
from ..ports import KeyChange
from ..session import Commit, Session
from ..session.holds import held
from ..session.keys import read_key
from ..session.substrate import worker_trace


class ExpiryService:
    def __init__(self, session: Session) -> None:
        self.session = session

    def sweep_expired(self, *, actor: str = "worker:expiry-sweep") -> dict[str, int]:
        """Apply on_expire to every fact whose expires_at has passed. Returns counts by action."""
        session = self.session
        now = session.clock.now()
        counts = {"tombstone": 0, "demote": 0, "anonymize": 0, "keys": 0}
        for ns, keys in session.versions.expired_keys(now).items():
            if held(session.store, ns):
                continue  # an erasure holds it, or it was deleted: its rows wait as they are
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
        if not counts["keys"]:
            # A sweep that found nothing says so: restraint, not a sweep that never ran.
            home = Namespace(GLOBAL_TENANT, Scope.GLOBAL, GLOBAL_TENANT)
            worker_trace(session, home, actor, "no_op", f"expiry sweep at {now.isoformat()}: no fact past its expiry")
        return counts
