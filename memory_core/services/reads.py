"""The point reads of the Memory tool: ``get``, ``list`` and ``history``."""

from __future__ import annotations

from ..errors import NotFound
from ..identity import Scope
from ..model import FactVersion
from ..session import RunService
from ..session.reads import fact_at_time, live_keys
from ..temporal import Instant
from ..write.settle import validate_key


class ReadsService(RunService):
    def get(self, key: str, *, scope: str | Scope, as_of: Instant, known_at: Instant) -> FactVersion | None:
        return fact_at_time(self.session, self.identity.namespace(scope), key, as_of, known_at)

    def list(self, *, scope: str | Scope, as_of: Instant, known_at: Instant) -> list[FactVersion]:
        return live_keys(self.session, self.identity.namespace(scope), as_of, known_at)

    def history(self, key: str, *, scope: str | Scope) -> list[FactVersion]:
        key = validate_key(key)
        namespace = self.identity.namespace(scope)
        rows = self.session.versions.history(namespace, key)
        if not rows:
            raise NotFound(f"no history: no key {key!r} in scope {namespace.scope.value}", key=key)
        return rows
