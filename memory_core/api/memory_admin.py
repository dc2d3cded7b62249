"""Memory's operator ops that are not a run's: erasure (``docs/erasure.md``) and change webhooks
(``docs/webhooks.md``). Plain functions, bound as ``Memory``'s methods (``memory.erase(...)``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..adapters.webhook_http import HttpTransport
from ..erasure import ErasureRequest, ErasureTarget
from ..ports import WebhookTransport
from ..services.erasure import ErasureService
from ..services.webhooks import WebhookDelivery, WebhookRegistry
from ..webhooks import DeliveryPolicy, Webhook

if TYPE_CHECKING:
    from .memory import Memory


# -- erasure -------------------------------------------------------------------------------------


def erase(
    self: Memory,
    tenant: str,
    *,
    user: str | None = None,
    agent: str | None = None,
    namespaces: Sequence[str] | None = None,
    actor: str = "admin",
    observer: Callable[[str], None] | None = None,
) -> ErasureRequest:
    """Erase a user, an agent, ``scope/owner`` namespaces or (none named) a whole tenant from
    every plane of the home, and prove it with a residue census (``docs/erasure.md``)."""
    target = ErasureTarget.of(tenant, user=user, agent=agent, namespaces=namespaces)
    try:
        return ErasureService(self.session, observer).request(target, actor=actor)
    finally:
        self.keys.forget()  # the service's looked-up API keys: an erased person's may be gone


def erasures(self: Memory, request_id: str | None = None) -> list[ErasureRequest]:
    """Every erasure request as it stands now (or one: ``ErasureNotFound`` if unknown)."""
    service = ErasureService(self.session)
    return [service.get(request_id)] if request_id is not None else service.list()


def recover_erasures(
    self: Memory,
    *,
    max_attempts: int = 3,
    actor: str = "worker:erasure-recovery",
    observer: Callable[[str], None] | None = None,
) -> dict[str, int]:
    """Resume every erasure a stopped process left unfinished; abandon one after
    ``max_attempts`` runs. Counts by outcome."""
    try:
        return ErasureService(self.session, observer).recover(max_attempts=max_attempts, actor=actor)
    finally:
        self.keys.forget()


# -- change webhooks -----------------------------------------------------------------------------


def webhook_register(
    self: Memory,
    tenant: str,
    url: str,
    *,
    events: Sequence[str] | None = None,
    secret: str | None = None,
    actor: str = "admin",
) -> Webhook:
    """Register a webhook of ``tenant`` for ``events`` (default: every memory event). The answer
    carries the signing secret (generated unless given): it is not shown again."""
    chosen = list(events) if events is not None else None
    return WebhookRegistry(self.session).register(tenant, url, events=chosen, secret=secret, actor=actor)


def webhook_rotate(
    self: Memory, tenant: str, webhook_id: str, *, secret: str | None = None, actor: str = "admin"
) -> Webhook:
    """A new signing secret for a webhook (generated unless given)."""
    return WebhookRegistry(self.session).rotate(tenant, webhook_id, secret=secret, actor=actor)


def webhook_remove(self: Memory, tenant: str, webhook_id: str, *, actor: str = "admin") -> Webhook:
    """Remove a webhook; its events not yet delivered are dead-lettered."""
    return WebhookRegistry(self.session).remove(tenant, webhook_id, actor=actor)


def webhooks(self: Memory, tenant: str | None = None) -> list[Webhook]:
    """Every webhook (of a tenant), removed ones included (``to_dict()`` leaves the secret out)."""
    return WebhookRegistry(self.session).list(tenant)


def deliver_webhooks(
    self: Memory,
    *,
    worker: str | None = None,
    policy: DeliveryPolicy | None = None,
    transport: WebhookTransport | None = None,
) -> dict[str, int]:
    """One delivery pass (what the service's worker and the Dagster sensor run); counts by
    outcome."""
    delivery = WebhookDelivery(self.session, transport or HttpTransport(), policy)
    return delivery.run_pass(worker=worker or f"worker-{os.getpid()}")


def webhook_deliveries(self: Memory, webhook_id: str | None = None) -> list[dict[str, Any]]:
    """Every delivery attempt (leases included), oldest first."""
    return self.store.webhooks.deliveries(webhook_id)
