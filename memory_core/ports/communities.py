"""What the entity communities worker keeps: one derived result per namespace, named by the
digest of the graph it was computed from (``graph.communities``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from ..graph.communities import Communities
from ..identity import Namespace


class CommunityStore(Protocol):
    def graph_namespaces(self) -> list[Namespace]:
        """Every namespace with a graph triple or a stored result (one whose graph emptied too)."""
        ...

    def stored(self, namespace: Namespace) -> dict[str, Any] | None:
        """The namespace's result as kept (``graph_digest``, ``algorithm``, counts, ``communities``,
        ``computed_at``), or None."""
        ...

    def put(self, namespace: Namespace, result: Communities, algorithm: str, at: datetime) -> None:
        """Replace the namespace's result."""
        ...
