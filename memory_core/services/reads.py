"""The point reads of the Memory tool: ``get``, ``list`` and ``history``."""

from __future__ import annotations

from ..errors import NotFound
from ..identity import Namespace, Scope
from ..model import FactVersion
from ..session import RunService
from ..session.holds import soft_deleted
from ..session.reads import fact_at_time, live_keys
from ..temporal import Instant
from ..write.settle import validate_key


class ReadsService(RunService):
    # A namespace ``namespace_delete`` soft-deleted reads as empty: nothing in it is found, nothing
    # of it is destroyed (``namespace_register`` brings it back).
    def _deleted(self, namespace: Namespace) -> bool:
        return soft_deleted(self.session.store, namespace)

    def get(self, key: str, *, scope: str | Scope, as_of: Instant, known_at: Instant) -> FactVersion | None:
        namespace = self.identity.namespace(scope)
        found = fact_at_time(self.session, namespace, key, as_of, known_at)
        return None if self._deleted(namespace) else found

    def list(self, *, scope: str | Scope, as_of: Instant, known_at: Instant) -> list[FactVersion]:
        namespace = self.identity.namespace(scope)
        return [] if self._deleted(namespace) else live_keys(self.session, namespace, as_of, known_at)

    def history(self, key: str, *, scope: str | Scope) -> list[FactVersion]:
        key = validate_key(key)
        namespace = self.identity.namespace(scope)
        rows = [] if self._deleted(namespace) else self.session.versions.history(namespace, key)
        if not rows:
            raise NotFound(f"no history: no key {key!r} in scope {namespace.scope.value}", key=key)
        return rows
