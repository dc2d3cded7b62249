"""The review queue: conflicted rows beside their peers and the judge's reasons, and a person's
decision on a pair (retire the peer in favour of the row, or clear the flag) through the Memory
tool. A retirement is undone with ``restore`` on the peer's key, as the resolver's are.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import InvalidInput, NotFound, PinnedConflict, WrongState
from ..identity import Namespace, Scope
from ..model import FactVersion, Status
from ..resolver.actions import holds
from ..resolver.fold import Action
from ..session import RunService, Session
from ..session.resolution import apply_pair


@dataclass(frozen=True)
class ReviewItem:
    key: str
    fact_id: str
    value: Any
    valid_at: str
    peers: tuple[dict[str, Any], ...]  # {key, fact_id, value, valid_at}
    reasons: tuple[dict[str, Any], ...]  # what the judges said about this row's pairs

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "fact_id": self.fact_id,
            "value": self.value,
            "valid_at": self.valid_at,
            "peers": list(self.peers),
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True)
class ReviewDecision:
    decision: str  # retire_peer | clear
    key: str
    peer_key: str
    rows_written: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "key": self.key,
            "peer_key": self.peer_key,
            "rows_written": self.rows_written,
        }


class ReviewService(RunService):
    def review_queue(self, *, scope: str | Scope) -> list[ReviewItem]:
        """The scope's conflicted rows, each with its flagged peers and what judges said of them."""
        namespace = self.identity.namespace(scope)
        session, now = self.session, self.session.clock.now()
        states = {s.fact_id: s for group in session.versions.namespace_states(namespace).values() for s in group}
        records = session.ledger.resolver_records(namespace)
        out = []
        for state in sorted(states.values(), key=lambda s: s.key):
            if state.status is not Status.CONFLICTED or state.expired(now):
                continue
            peers = tuple(
                {"key": p.key, "fact_id": p.fact_id, "value": p.value, "valid_at": p.valid_at.isoformat()}
                for p in (states.get(f) for f in state.conflict_with)
                if p is not None
            )
            reasons = tuple(
                {
                    "peer_key": r["peer_key"],
                    "action": r["action"],
                    "verdict": r["verdict"],
                    "confidence": r["confidence"],
                    "judge": r["judge"],
                    "reason": r.get("reason") or "",
                }
                for r in records
                if state.fact_id in (r["judged_fact"], r["peer_fact"])
            )
            out.append(ReviewItem(state.key, state.fact_id, state.value, state.valid_at.isoformat(), peers, reasons))
        return out

    def resolve_conflict(self, key: str, peer_key: str, decision: str, *, scope: str | Scope) -> ReviewDecision:
        """A reviewer's decision on a flagged pair: ``retire_peer`` (the peer's value is stale; the
        row's stands) or ``clear`` (both stand). Audited and recorded; ``restore`` undoes a retirement."""
        if decision not in ("retire_peer", "clear"):
            raise InvalidInput("decision must be retire_peer or clear", field="decision")
        session, identity = self.session, self.identity
        namespace = identity.namespace(scope)
        with session.locked():
            now = session.clock.now()
            row, peer = _live(session, namespace, key, now), _live(session, namespace, peer_key, now)
            if peer.fact_id not in row.conflict_with and row.fact_id not in peer.conflict_with:
                raise WrongState(f"{key!r} and {peer_key!r} are not flagged against each other", key=key)
            if row.pinned or peer.pinned:
                raise PinnedConflict("a pinned row is never retired or cleared", key=key)
            action = Action("retire" if decision == "retire_peer" else "clear", f"reviewer: {decision}")
            judge = f"reviewer:{identity.actor}"
            rows = apply_pair(
                session,
                namespace,
                row,
                peer,
                action,
                identity.actor,
                "reviewer",
                1.0,
                judge,
                now,
                decision,
                event_type="review.decided",
            )
        return ReviewDecision(decision, key, peer_key, len(rows))


def _live(session: Session, namespace: Namespace, key: str, now: datetime) -> FactVersion:
    found = [s for s in session.versions.fact_states(namespace, key) if holds(s, now)]
    if not found:
        raise NotFound(f"no live value under {key!r} in scope {namespace.scope.value}", key=key)
    return max(found, key=lambda s: s.version)
