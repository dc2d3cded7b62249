"""What the store keeps of namespaces themselves: which are soft-deleted (``namespace_delete``)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from ..identity import Namespace


class NamespaceStore(Protocol):
    def deleted(self) -> frozenset[Namespace]:
        """Every namespace whose newest state is ``deleted`` (read on every write: kept cheap)."""
        ...

    def set_state(self, namespace: Namespace, state: str, actor: str, at: datetime) -> bool:
        """Append ``state`` (``deleted`` or ``registered``) for the namespace unless it already
        stands there; answers whether a row was appended."""
        ...
