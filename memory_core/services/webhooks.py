"""Change webhooks: the per-tenant registry (register, rotate the secret, remove; audited) and
the delivery worker. A pass dead-letters what can no longer be sent, then POSTs each webhook's
oldest event that is due, one at a time per webhook (so its events arrive in order) and webhooks
side by side; each POST runs under a lease, so two workers never send one event at once, and a
worker that dies lets its events go when the lease ends (delivery is at least once; the event id
is stable, for the receiver to deduplicate)."""

from __future__ import annotations

import dataclasses
import random
import secrets
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any, Callable

from ..audit import AuditEntry
from ..errors import InvalidInput, WebhookNotFound
from ..ports import WebhookStore, WebhookTransport
from ..session import Session
from ..webhooks import DeliveryPolicy, Webhook, decide, is_due, past_deadline, signed_headers
from ..webhooks.model import checked_events, checked_url


def _secret(given: str | None) -> str:
    if given is None:
        return "whsec_" + secrets.token_urlsafe(32)
    if not isinstance(given, str) or len(given) < 16 or len(given) > 200:
        raise InvalidInput("a webhook secret is 16 to 200 characters", field="secret")
    return given


class WebhookRegistry:
    def __init__(self, session: Session) -> None:
        self.session = session

    @property
    def _store(self) -> WebhookStore:
        return self.session.store.webhooks

    def _put(self, hook: Webhook, op: str) -> Webhook:
        self.session.refuse_read_only("webhooks write to it")
        entry = AuditEntry(
            hook.changed_at, hook.tenant, "tenant", hook.tenant, f"webhook:{hook.webhook_id}", op, "", None, hook.actor
        )
        self._store.put(hook, entry)
        return hook

    def register(
        self, tenant: str, url: str, *, events: list[str] | None = None, secret: str | None = None, actor: str
    ) -> Webhook:
        """A new webhook of ``tenant`` taking ``events`` (default: all). The answer holds the
        secret: keep it, it is not shown again."""
        hook = Webhook(
            tenant,
            self.session.new_id(),
            1,
            checked_url(url),
            checked_events(events),
            _secret(secret),
            "active",
            self.session.clock.now(),
            actor,
        )
        return self._put(hook, "webhook_register")

    def _current(self, tenant: str, webhook_id: str) -> Webhook:
        found = [w for w in self._store.webhooks(tenant) if w.webhook_id == webhook_id and w.status == "active"]
        if not found:
            raise WebhookNotFound(f"no webhook {webhook_id} in {tenant}", webhook_id=webhook_id)
        return found[0]

    def rotate(self, tenant: str, webhook_id: str, *, secret: str | None = None, actor: str) -> Webhook:
        """A new secret; deliveries from now on are signed with it."""
        old = self._current(tenant, webhook_id)
        hook = dataclasses.replace(
            old, version=old.version + 1, secret=_secret(secret), changed_at=self.session.clock.now(), actor=actor
        )
        return self._put(hook, "webhook_rotate")

    def remove(self, tenant: str, webhook_id: str, *, actor: str) -> Webhook:
        """Removed: its events not yet delivered are dead-lettered by the next pass."""
        old = self._current(tenant, webhook_id)
        hook = dataclasses.replace(
            old, version=old.version + 1, status="removed", changed_at=self.session.clock.now(), actor=actor
        )
        return self._put(hook, "webhook_remove")

    def list(self, tenant: str | None = None) -> list[Webhook]:
        return self._store.webhooks(tenant)


class WebhookDelivery:
    def __init__(
        self,
        session: Session,
        transport: WebhookTransport,
        policy: DeliveryPolicy | None = None,
        unit: Callable[[], float] = random.random,
    ) -> None:
        self.session = session
        self.transport = transport
        self.policy = policy or DeliveryPolicy()
        self.unit = unit  # the jitter's random source

    @property
    def _store(self) -> WebhookStore:
        return self.session.store.webhooks

    def run_pass(self, *, worker: str) -> dict[str, int]:
        """One delivery pass; counts by outcome (``dead`` includes what was dead-lettered
        without a POST)."""
        self.session.refuse_read_only("webhooks write to it")  # a delivery records its attempts
        counts = {"delivered": 0, "pending": 0, "dead": 0}
        hooks = {w.webhook_id: w for w in self._store.webhooks()}
        counts["dead"] += self._dead_letter(hooks, worker)
        budget = self.policy.posts_per_pass
        with ThreadPoolExecutor(max_workers=4) as pool:
            while budget > 0:
                runs = self._due(hooks, budget)
                if not runs:
                    break
                outcomes = [o for run in pool.map(lambda r: self._send_run(*r, worker), runs) for o in run]
                for outcome in outcomes:
                    counts[outcome] += 1
                budget -= len(outcomes)
                if not outcomes or any(o != "delivered" for o in outcomes):
                    break  # a failed event waits for its backoff: the next pass looks again
        return counts

    def _send_run(self, events: list[dict[str, Any]], hook: Webhook, worker: str) -> list[str]:
        """A webhook's next events, one at a time and in order, until one is not delivered."""
        outcomes: list[str] = []
        for event in events:
            outcome = self._send(event, hook, worker)
            if outcome is None:
                break
            outcomes.append(outcome)
            if outcome != "delivered":
                break
        return outcomes

    def _dead_letter(self, hooks: dict[str, Webhook], worker: str) -> int:
        now, dead = self.session.clock.now(), 0
        for event in self._store.unsettled():
            if event["outcome"] == "leased" and not is_due(event["outcome"], event["next_attempt_at"], now):
                continue  # a worker is sending it now: its outcome decides
            hook = hooks.get(event["webhook_id"])
            if hook is None or hook.status != "active":
                why = "the webhook was removed"
            elif past_deadline(self.policy, event["occurred_at"], now):
                why = "not delivered in time"
            else:
                continue
            attempt = event["attempts"] + 1
            self._store.record(event["event_id"], event["webhook_id"], attempt, "dead", worker, now, error=why)
            dead += 1
        return dead

    def _due(self, hooks: dict[str, Webhook], budget: int) -> list[tuple[list[dict[str, Any]], Webhook]]:
        """For each webhook whose oldest unsettled event is due (not waiting for a retry, not
        leased by a worker), its next events in order, at most ``budget`` in all."""
        now = self.session.clock.now()
        per_webhook: dict[str, list[dict[str, Any]]] = {}
        for event in self._store.heads(per_webhook=min(budget, 20)):
            per_webhook.setdefault(event["webhook_id"], []).append(event)
        runs = []
        for webhook_id, events in per_webhook.items():
            hook, first = hooks.get(webhook_id), events[0]
            due = is_due(first["outcome"], first["next_attempt_at"], now)
            if hook is not None and hook.status == "active" and due and budget > 0:
                runs.append((events[:budget], hook))
                budget -= len(runs[-1][0])
        return runs

    def _send(self, head: dict[str, Any], hook: Webhook, worker: str) -> str | None:
        now = self.session.clock.now()
        lease_until = now + timedelta(seconds=self.policy.lease_s)
        attempt = self._store.claim(head["event_id"], hook.webhook_id, worker, now, lease_until)
        if attempt is None:
            return None  # another worker has it, or it settled since it was read
        body = head["body"].encode("utf-8")
        stamp = int(now.timestamp())
        headers = signed_headers(hook.secret, stamp, body, head["event_id"], head["event_type"])
        status, error = self.transport.post(hook.url, body, headers, self.policy.timeout_s)
        after = self.session.clock.now()
        outcome = decide(
            self.policy,
            ok=error is None,
            failures=head["failures"],
            occurred_at=head["occurred_at"],
            now=after,
            unit=self.unit(),
            error=error,
        )
        event_id, next_at = head["event_id"], outcome.next_attempt_at
        self._store.record(
            event_id, hook.webhook_id, attempt, outcome.outcome, worker, after, next_at, status, outcome.error
        )
        return outcome.outcome
