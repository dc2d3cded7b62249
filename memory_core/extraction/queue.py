"""Deferred extraction: a conversation queued now, read later by a worker.

``enqueue_extraction`` validates the transcript and queues it (nothing is extracted on the
caller's path); ``Memory.run_extraction_queue`` leases due jobs and runs ``set_from_messages``
for each as the identity that queued it. A job whose worker dies returns to the line when its
lease runs out; an unreachable provider spends no attempt; a refusal or an unusable answer fails
the job at once; other failures wait with exponential backoff until ``max_attempts``.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..errors import InvalidInput, MemcoreError
from ..identity import Identity, Scope
from ..llm.port import LLMMalformed, LLMRefused, LLMUnavailable
from ..store.queue_tables import QueueRow
from ..temporal import iso, parse_instant
from .model import parse_messages

if TYPE_CHECKING:
    from ..api import Memory


class ExtractionQueueOps:
    _memory: "Memory"

    def enqueue_extraction(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        session: str | None = None,
        session_date: datetime | str | None = None,
        scope: str | Scope = Scope.USER,
        max_attempts: int = 5,
    ) -> str:
        """Queue a transcript for extraction later; returns the queue id."""
        identity: Identity = self.identity  # type: ignore[attr-defined]
        namespace = identity.namespace(scope)
        session = session or identity.session or "session"
        parse_messages(messages, session=session)  # refuse a bad transcript now, not in the worker
        when = parse_instant(session_date, "session_date")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or not 1 <= max_attempts <= 50:
            raise InvalidInput("max_attempts must be an integer from 1 to 50", field="max_attempts")
        memory = self._memory
        queue_id = "xq-" + memory._new_id()[:16]
        memory.store.enqueue(
            queue_id,
            namespace,
            identity.actor,
            "extract",
            {
                "messages": list(messages),
                "session": session,
                "session_date": iso(when),
                "identity": _identity_fields(identity),
            },
            memory.clock.now(),
            max_attempts=max_attempts,
        )
        return queue_id

    def extraction_status(
        self, queue_ids: Sequence[str] | None = None, *, scope: str | Scope = Scope.USER
    ) -> list[dict[str, Any]]:
        """The caller's own queued jobs (all, or the named ones) in the scope."""
        identity: Identity = self.identity  # type: ignore[attr-defined]
        rows = self._memory.store.queue_rows(identity.namespace(scope), identity.actor, queue_ids)
        return [r.to_dict() for r in rows]

    def extraction_queue_status(self, *, scope: str | Scope = Scope.USER) -> dict[str, int]:
        """How many jobs of the scope are pending, running, done and failed."""
        return self._memory.store.queue_counts(self.identity.namespace(scope))  # type: ignore[attr-defined]

    def retry_extraction(self, queue_ids: Sequence[str] | None = None, *, scope: str | Scope = Scope.USER) -> list[str]:
        """Put the caller's own failed jobs back in line."""
        identity: Identity = self.identity  # type: ignore[attr-defined]
        return self._memory.store.retry_failed(
            identity.namespace(scope), identity.actor, queue_ids, self._memory.clock.now()
        )


def _identity_fields(identity: Identity) -> dict[str, Any]:
    return {
        "tenant": identity.tenant,
        "user": identity.user,
        "agent": identity.agent,
        "session": identity.session,
        "run": identity.run,
        "model": identity.model,
        "memory_scopes": sorted(s.value for s in identity.memory_scopes),
        "sql_scopes": sorted(s.value for s in identity.sql_scopes),
        "isolated": identity.isolated,
    }


def identity_from(fields: dict[str, Any]) -> Identity:
    return Identity(
        tenant=fields["tenant"],
        user=fields.get("user"),
        agent=fields.get("agent"),
        session=fields.get("session"),
        run=fields.get("run"),
        model=fields.get("model"),
        memory_scopes=frozenset(fields.get("memory_scopes") or ("agent", "user", "tenant")),
        sql_scopes=frozenset(fields.get("sql_scopes") or ("agent", "user", "tenant")),
        isolated=bool(fields.get("isolated")),
    )


Handler = Callable[["Memory", QueueRow], dict[str, Any]]


def run_extract_job(memory: "Memory", row: QueueRow) -> dict[str, Any]:
    body = row.payload
    tool = memory.for_run(identity_from(body["identity"]), origin="worker:extraction")
    result = tool.set_from_messages(
        body["messages"], session=body["session"], session_date=body["session_date"], scope=row.namespace.scope
    )
    return result.to_dict()


def run_queue(
    memory: "Memory", handlers: dict[str, Handler], *, worker: str, limit: int, lease_s: float, kinds: Sequence[str]
) -> dict[str, int]:
    """Lease up to ``limit`` due jobs and run each; returns counts by outcome."""
    store, counts = memory.store, {"done": 0, "failed": 0, "waiting": 0, "lease_lost": 0, "claimed": 0}
    for row in store.claim(worker, memory.clock.now(), lease_s=lease_s, limit=limit, kinds=kinds):
        counts["claimed"] += 1
        try:
            result = handlers[row.kind](memory, row)
        except LLMUnavailable as exc:
            kept = store.fail(row.queue_id, worker, memory.clock.now(), exc.message, spent=exc.reached)
            outcome = "waiting"
        except (LLMRefused, LLMMalformed, InvalidInput) as exc:
            kept = store.fail(
                row.queue_id, worker, memory.clock.now(), f"{exc.code}: {exc.message}", spent=True, permanent=True
            )
            outcome = "failed"
        except MemcoreError as exc:
            kept = store.fail(row.queue_id, worker, memory.clock.now(), f"{exc.code}: {exc.message}", spent=True)
            outcome = "waiting"
        else:
            kept = store.complete(row.queue_id, worker, memory.clock.now(), result)
            outcome = "done"
        counts[outcome if kept else "lease_lost"] += 1
    return counts
