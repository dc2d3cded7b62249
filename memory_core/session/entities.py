"""The entity names of each scope's graph, held for the graph leg of a search: a query is checked
against them in memory, and only a query that names one reads the graph (under the store's
lock, like every read of the log).

Loaded once per scope (one query), then kept current by the commits: a graph write's new
observations add their entities. A redaction or an erasure drops what is held, so the next search
reads the names anew; an entity whose triples all ended stays until then, which costs a graph read
that finds nothing, never a wrong row.
"""

from __future__ import annotations

from typing import Callable, ContextManager, Iterable

from ..graph.model import DOCUMENTED_IN
from ..graph.plan import GraphWrite
from ..identity import Namespace

LoadNames = Callable[[Namespace], frozenset[str]]


class GraphEntities:
    def __init__(self, load: LoadNames) -> None:
        self._load = load
        self._names: dict[Namespace, frozenset[str]] = {}

    def of(self, namespace: Namespace, locked: Callable[[], ContextManager[None]]) -> frozenset[str]:
        """The scope's entity names; read without the store's lock once held (a commit replaces
        the set whole), ``locked`` is taken to load it."""
        found = self._names.get(namespace)
        if found is None:
            with locked():
                found = self._names.get(namespace)
                if found is None:
                    found = self._names[namespace] = self._load(namespace)
        return found

    def noted(self, writes: Iterable[GraphWrite]) -> None:
        """A commit's graph writes (under the store's lock): their observations' entities join the
        scopes held."""
        for write in writes:
            held = self._names.get(write.namespace)
            if held is None:
                continue
            new = {o.subject for o in write.observations}
            new |= {o.object for o in write.observations if o.relation != DOCUMENTED_IN}
            if not new <= held:
                self._names[write.namespace] = held | new

    def forget(self) -> None:
        self._names.clear()
