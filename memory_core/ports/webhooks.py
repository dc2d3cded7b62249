"""The ports change webhooks run through: the registry, outbox and delivery attempts in the store,
and the HTTP transport that POSTs a signed body."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping, Protocol, Sequence

from ..audit import AuditEntry
from ..webhooks import OutboxEvent, Webhook


class WebhookStore(Protocol):
    def put(self, webhook: Webhook, audit: AuditEntry) -> None: ...

    def webhooks(self, tenant: str | None = None) -> list[Webhook]: ...

    def active(self) -> tuple[Webhook, ...]:
        """The webhooks whose newest version is active (the ones an event is queued for)."""
        ...

    def append_committed(self, events: Sequence[OutboxEvent]) -> int: ...

    def heads(self) -> list[dict[str, Any]]: ...

    def unsettled(self) -> list[dict[str, Any]]: ...

    def claim(
        self, event_id: str, webhook_id: str, worker: str, now: datetime, lease_until: datetime
    ) -> int | None: ...

    def record(
        self,
        event_id: str,
        webhook_id: str,
        attempt: int,
        outcome: str,
        worker: str,
        at: datetime,
        next_attempt_at: datetime | None = None,
        status_code: int | None = None,
        error: str | None = None,
    ) -> None: ...

    def deliveries(self, webhook_id: str | None = None) -> list[dict[str, Any]]: ...

    def outbox(self, webhook_id: str | None = None) -> list[OutboxEvent]: ...


class WebhookTransport(Protocol):
    def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float
    ) -> tuple[int | None, str | None]:
        """POST ``body``; answers the HTTP status (None when no answer came) and an error text
        (None on a 2xx)."""
        ...
