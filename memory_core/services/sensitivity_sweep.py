"""The sensitivity sweep: every visible fact whose stored tier is below what detection says of its
value gets a labelled version (``lifecycle.relabel``), one audited commit per namespace; a fact
made ``high`` leaves the retrieval index, older versions of its files included. Idempotent: a
relabelled fact is labelled right, so a second sweep finds nothing (docs/workers.md).

It reads every latest state, not only recent ones: detection is cheap (guarded patterns, about a
microsecond a value), and a row loaded by other means than the write path has no recent mark."""

from __future__ import annotations

import logging
from typing import Any

from ..audit import audit_entry
from ..identity import Namespace
from ..lifecycle.relabel import decide_relabel, under_labelled
from ..ports import KeyChange
from ..session import Commit, Session
from ..session.keys import read_key

log = logging.getLogger(__name__)


class SensitivitySweep:
    def __init__(self, session: Session) -> None:
        self.session = session

    def run(self, *, apply: bool = True, actor: str = "worker:sensitivity-sweep", examples: int = 20) -> dict[str, Any]:
        """Find the under-labelled facts and (``apply``) relabel them. Counts, and the first ids."""
        session = self.session
        if apply:
            session.refuse_read_only("the sensitivity sweep writes labelled versions")
        found = {s.fact_id: s for s in session.versions.latest_states() if under_labelled(s) is not None}
        keys: dict[Namespace, set[str]] = {}
        for state in found.values():
            keys.setdefault(Namespace(state.tenant, state.scope, state.owner_id), set()).add(state.key)
        out: dict[str, Any] = {"under_labelled": len(found), "relabelled": 0, "keys": 0, "made_high": 0}
        out["fact_ids"] = sorted(found)[:examples]
        if not apply or not found:
            return out
        made_high: list[str] = []
        for ns in sorted(keys, key=lambda n: (n.tenant, n.scope.value, n.owner_id)):
            retention = session.write_config(ns.tenant).tenant.sensitive_retention_days
            with session.locked():  # read and committed with no write in between
                changes, audits = [], []
                for key in sorted(keys[ns]):
                    op = read_key(session, ns, key, actor, session.clock.now())
                    decision = decide_relabel(op, retention)
                    if decision.rows:
                        changes.append(KeyChange(ns, key, decision.rows))
                        audits.append(audit_entry(ns, key, "relabel", decision.rows, None, actor, op.created_at))
                        made_high += [r.fact_id for r in decision.rows if r.sensitivity == "high"]
                if changes:
                    session.commit(Commit(tuple(changes), tuple(audits)))
                    out["relabelled"] += sum(len(c.rows) for c in changes)
                    out["keys"] += len(changes)
        index = session.index
        if made_high and index is not None:
            # The commit's index write already stops serving them; ``forget`` also folds away the
            # older versions of the index's files, which still hold the words.
            index.forget(sorted(set(made_high)))
        out["made_high"] = len(set(made_high))
        if out["relabelled"]:
            log.info("sensitivity sweep relabelled %d facts (%d made high)", out["relabelled"], out["made_high"])
        return out
