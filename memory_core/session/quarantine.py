"""Negative-outcome quarantine, applied (``lifecycle.quarantine`` decides; the capture service
calls it): once a decision trace holds a bad outcome, each fact it used that the caller could
reject is rejected, one commit per key, each with a hash-only audit row (op ``quarantine``) and
a ``fact.rejected`` event whose evidence is the decision: the trace's version holds the outcome
that is the reason.

Only facts in the namespaces the run may touch are read: a ref to another tenant's fact, or to a
scope the run lacks, is left alone and said nowhere (as missing, never forbidden).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..audit import audit_entry
from ..errors import MemcoreError
from ..identity import Identity, Namespace, Scope
from ..lifecycle.quarantine import AUDIT_OP, decide_quarantine, is_negative, used_fact_ids
from ..ports import KeyChange
from ..substrate.events import EventContext
from ..substrate.refs import ref
from .core import Commit
from .keys import read_key

if TYPE_CHECKING:
    from ..substrate.decisions import DecisionTrace
    from .core import Session


@dataclass(frozen=True, slots=True)
class Quarantine:
    """What one bad outcome did: fact ids rejected, and those left (pinned, locked, not live)."""

    rejected: tuple[str, ...] = ()
    left: tuple[tuple[str, str], ...] = ()  # (fact id, why)


def _reachable(identity: Identity) -> set[Namespace]:
    out = set()
    for scope in (Scope.USER, Scope.AGENT, Scope.TENANT):
        try:
            out.add(identity.namespace(scope))
        except MemcoreError:
            continue  # a scope this run lacks: its facts are not the run's to reject
    return out


def quarantine_inputs(session: Session, identity: Identity, trace: DecisionTrace) -> Quarantine:
    """Reject the facts a decision with a bad outcome used. The caller holds the session's lock."""
    if not is_negative(trace.outcome):
        return Quarantine()
    wanted = used_fact_ids(trace.inputs)
    if not wanted:
        return Quarantine()
    reachable = _reachable(identity)
    found = [
        s for s in session.versions.latest_states(list(wanted)) if Namespace(s.tenant, s.scope, s.owner_id) in reachable
    ]
    context = EventContext(evidence=(ref("decision", trace.decision_id),), event_type="fact.rejected")
    rejected, left = [], []
    now = session.clock.now()
    for state in sorted(found, key=lambda s: (s.scope.value, s.key, s.fact_id)):
        namespace = Namespace(state.tenant, state.scope, state.owner_id)
        op = read_key(session, namespace, state.key, identity.actor, now)
        decision = decide_quarantine(op, state.fact_id)
        if not decision.rows:
            left.append((state.fact_id, decision.verdict))
            continue
        audit = audit_entry(namespace, state.key, AUDIT_OP, decision.rows, None, op.actor, op.created_at)
        session.commit(Commit((KeyChange(namespace, state.key, decision.rows),), (audit,), context=context))
        rejected.append(state.fact_id)
    return Quarantine(tuple(rejected), tuple(left))
