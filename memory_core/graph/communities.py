"""Entity communities: groups of entities that the namespace's graph ties together more than to
the rest, found with Louvain modularity (networkx, seeded). Pure: edges in, groups out.

The graph is the namespace's current observations (subject -- object, relation aside; each
distinct triple one unit of weight), undirected. A digest of those triples names the graph a
result was computed from: the worker recomputes a namespace only when it changed, and a check
calls a result stale when it no longer matches (docs/workers.md).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Iterable

from ..errors import InvalidInput

ALGORITHM = "louvain"
SEED = 7  # Louvain visits nodes in a random order: seeded (and fed sorted) it is deterministic
RESOLUTION = 1.0


@dataclass(frozen=True, slots=True)
class Communities:
    digest: str  # of the triples they were computed from (``graph_digest``)
    entities: int
    edges: int
    groups: tuple[tuple[str, ...], ...]  # each sorted; the largest first, then by first name
    modularity: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "digest": self.digest,
            "entities": self.entities,
            "edges": self.edges,
            "communities": [list(g) for g in self.groups],
            "modularity": self.modularity,
        }


def graph_digest(triples: Iterable[tuple[str, str, str]]) -> str:
    """A digest of the distinct (subject, relation, object) triples, in any order."""
    h = hashlib.sha256()
    for triple in sorted(set(triples)):
        h.update("\x1f".join(triple).encode("utf-8", "surrogatepass") + b"\x1e")
    return h.hexdigest()


def detect_communities(triples: Iterable[tuple[str, str, str]], seed: int = SEED) -> Communities:
    """The communities of the graph the triples draw (a self-loop ties nothing and is left out)."""
    try:
        import networkx as nx  # the platform's dependency: imported only when communities are asked for
    except ImportError:  # pragma: no cover - the platform extra installs it
        raise InvalidInput(
            "entity communities need networkx: pip install 'memory_core[platform]'", field="networkx"
        ) from None
    distinct = sorted(set(triples))
    weights: dict[tuple[str, str], int] = {}
    for subject, _relation, obj in distinct:
        if subject != obj:
            pair = (subject, obj) if subject < obj else (obj, subject)
            weights[pair] = weights.get(pair, 0) + 1
    graph = nx.Graph()
    graph.add_nodes_from(sorted({name for pair in weights for name in pair}))
    graph.add_weighted_edges_from((a, b, w) for (a, b), w in sorted(weights.items()))
    found = (
        nx.community.louvain_communities(graph, weight="weight", resolution=RESOLUTION, seed=seed) if weights else []
    )
    groups = sorted((tuple(sorted(c)) for c in found), key=lambda g: (-len(g), g))
    modularity = nx.community.modularity(graph, found, weight="weight") if weights else 0.0
    return Communities(
        graph_digest(distinct), graph.number_of_nodes(), len(weights), tuple(groups), round(modularity, 4)
    )
