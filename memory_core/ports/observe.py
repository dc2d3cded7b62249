"""What observation capture keeps beside the log: the sessions ``observe_crystallize`` marked
ready, and the extraction worker's claim on each (the observations are memory rows)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from ..identity import Namespace
from ..temporal import iso


@dataclass(frozen=True, slots=True)
class ObserveSession:
    """A crystallized session: ready, running (claimed under a lease), done or failed."""

    namespace: Namespace
    session: str
    status: str
    observations: int  # counted when it was crystallized
    identity: dict[str, Any]  # the run identity the extraction runs as (``identity_fields``)
    crystallized_at: datetime
    crystallized_by: str
    attempts: int
    finished_at: datetime | None
    result: dict[str, Any] | None
    last_error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "scope": self.namespace.scope.value,
            "status": self.status,
            "observations": self.observations,
            "crystallized_at": iso(self.crystallized_at),
            "crystallized_by": self.crystallized_by,
            "attempts": self.attempts,
            "finished_at": iso(self.finished_at),
            "result": self.result,
            "last_error": self.last_error,
        }


class ObserveStore(Protocol):
    def crystallize(
        self,
        namespace: Namespace,
        session: str,
        *,
        observations: int,
        identity: dict[str, Any],
        actor: str,
        now: datetime,
    ) -> tuple[ObserveSession, bool]:
        """Mark the session ready, once: the row as stored, and whether this call wrote it."""
        ...

    def session(self, namespace: Namespace, session: str) -> ObserveSession | None: ...

    def claim(self, worker: str, now: datetime, *, lease_s: float, limit: int) -> list[ObserveSession]:
        """Take up to ``limit`` ready sessions (or running ones whose lease ran out), oldest first,
        each for one worker only; each claim counts an attempt."""
        ...

    def finish(
        self,
        session: ObserveSession,
        worker: str,
        now: datetime,
        *,
        status: str,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        spent: bool = True,
    ) -> bool:
        """End a claim (``status``: done, failed, or ready again); False when the lease was lost.
        ``spent=False`` gives the claim's attempt back (the provider was never reached)."""
        ...
