"""The point reads of the Memory tool: ``get``, ``list`` and ``history``."""

from __future__ import annotations

from datetime import datetime

from ..errors import NotFound
from ..identity import Identity, Scope
from ..model import FactVersion
from ..session import Session
from ..session.reads import fact_at_time, live_keys
from ..write.settle import validate_key

Instant = datetime | str | None


class ReadsService:
    def __init__(self, session: Session, identity: Identity, origin: str) -> None:
        self.session, self.identity, self.origin = session, identity, origin

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
