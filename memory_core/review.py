"""The review queue: conflicted rows beside their peers and the judge's reasons, and a person's
decision on a pair (retire the peer in favour of the row, or clear the flag) through the Memory
tool. A retirement is undone with ``restore`` on the peer's key, as the resolver's are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import InvalidInput, NotFound, PinnedConflict, WrongState
from .identity import Scope
from .model import Status
from .resolver.fold import Action
from .resolver.run import apply_pair, holds
from .write.point import after_write

if TYPE_CHECKING:
    from .api import Memory


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


class ReviewOps:
    _memory: "Memory"

    def review_queue(self, *, scope: str | Scope = Scope.USER) -> list[ReviewItem]:
        """The scope's conflicted rows, each with its flagged peers and what judges said of them."""
        namespace = self.identity.namespace(scope)  # type: ignore[attr-defined]
        store, now = self._memory.store, self._memory.clock.now()
        states = {s.fact_id: s for group in store.namespace_states(namespace).values() for s in group}
        records = store.resolver_records(namespace)
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

    def resolve_conflict(self, key: str, peer_key: str, decision: str, *, scope: str | Scope = Scope.USER) -> dict:
        """A reviewer's decision on a flagged pair: ``retire_peer`` (the peer's value is stale; the
        row's stands) or ``clear`` (both stand). Audited and recorded; ``restore`` undoes a retirement."""
        if decision not in ("retire_peer", "clear"):
            raise InvalidInput("decision must be retire_peer or clear", field="decision")
        memory, identity = self._memory, self.identity  # type: ignore[attr-defined]
        namespace = identity.namespace(scope)
        store = memory.store
        with store.locked():
            now = memory.clock.now()
            row, peer = _live(store, namespace, key, now), _live(store, namespace, peer_key, now)
            if peer.fact_id not in row.conflict_with and row.fact_id not in peer.conflict_with:
                raise WrongState(f"{key!r} and {peer_key!r} are not flagged against each other", key=key)
            if row.pinned or peer.pinned:
                raise PinnedConflict("a pinned row is never retired or cleared", key=key)
            action = Action("retire" if decision == "retire_peer" else "clear", f"reviewer: {decision}")
            rows = apply_pair(
                memory,
                namespace,
                row,
                peer,
                action,
                identity.actor,
                "reviewer",
                1.0,
                f"reviewer:{identity.actor}",
                now,
                decision,
            )
        after_write(memory.write_context(), namespace, rows, {})
        return {"decision": decision, "key": key, "peer_key": peer_key, "rows_written": len(rows)}


def conflicted_namespaces(memory: "Memory") -> list[tuple[str, str, str]]:
    """Every (tenant, scope, owner) holding a conflicted row now: where a reviewer has work."""
    rows = memory.store.query(
        "SELECT DISTINCT tenant, scope, owner_id FROM (SELECT tenant, scope, owner_id, status FROM memory_versions "
        "QUALIFY row_number() OVER (PARTITION BY fact_id ORDER BY version DESC) = 1) WHERE status = 'conflicted' "
        "ORDER BY 1, 2, 3"
    )
    return [(r["tenant"], r["scope"], r["owner_id"]) for r in rows]


def reviewer_identity(tenant: str, scope: str, owner_id: str, reviewer: str = "reviewer"):
    """The run identity a reviewer acts as to reach one namespace (recorded as the actor)."""
    from .identity import Identity

    if scope == Scope.AGENT.value:
        return Identity(tenant=tenant, agent=owner_id, user=reviewer, session="review")
    if scope == Scope.USER.value:
        return Identity(tenant=tenant, user=owner_id, agent=reviewer, session="review")
    return Identity(tenant=tenant, user=reviewer, agent=reviewer, session="review")


def _live(store, namespace, key: str, now):
    found = [s for s in store.fact_states(namespace, key) if holds(s, now)]
    if not found:
        raise NotFound(f"no live value under {key!r} in scope {namespace.scope.value}", key=key)
    return max(found, key=lambda s: s.version)
