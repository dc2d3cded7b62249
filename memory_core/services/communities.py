"""Entity communities: for each namespace with a graph, Louvain communities of its current
observations (``graph.communities``), kept one row per namespace. A namespace whose graph is as
it was at the last run (the same digest of its current triples) is not recomputed: a second run
does nothing, and a result is stale exactly when the graph changed since (docs/workers.md)."""

from __future__ import annotations

from typing import Any

from ..graph.communities import ALGORITHM, detect_communities, graph_digest
from ..identity import Namespace
from ..session import Session


def _name(ns: Namespace) -> str:
    return f"{ns.tenant}/{ns.scope.value}/{ns.owner_id}"


class CommunityService:
    def __init__(self, session: Session) -> None:
        self.session = session

    def run(self, *, apply: bool = True, examples: int = 20) -> dict[str, Any]:
        """Recompute (``apply``) the namespaces whose graph changed since their result. Counts by
        status before the run (``current``, ``stale``, ``absent``), how many were computed, and the
        namespaces that were behind."""
        session = self.session
        store = session.store.communities
        counts = {"namespaces": 0, "current": 0, "stale": 0, "absent": 0, "computed": 0, "communities": 0}
        behind: list[str] = []
        for ns in store.graph_namespaces():
            # Under the store's lock: the graph read and the result kept describe the same graph.
            with session.locked():
                now = session.clock.now()
                triples = [(o.subject, o.relation, o.object) for o in session.graph.current_observations(ns, now)]
                stored = store.stored(ns)
                counts["namespaces"] += 1
                if stored is not None and stored["algorithm"] == ALGORITHM:
                    status = "current" if stored["graph_digest"] == graph_digest(triples) else "stale"
                else:
                    status = "absent"
                counts[status] += 1
                if status == "current":
                    continue
                behind.append(_name(ns))
                if apply:
                    session.refuse_read_only("entity communities keep their results in the home")
                    result = detect_communities(triples)
                    store.put(ns, result, ALGORITHM, now)
                    counts["computed"] += 1
                    counts["communities"] += len(result.groups)
        return {**counts, "behind": behind[:examples]}

    def of(self, namespace: Namespace) -> dict[str, Any] | None:
        """The namespace's communities as kept (None: never computed)."""
        return self.session.store.communities.stored(namespace)
