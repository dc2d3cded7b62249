"""Change webhooks (admin): register one (webhook-add), rotate its secret, remove it, list them,
run a delivery pass (webhook-deliver) and read every attempt (webhook-deliveries). Through a
memory service (``--url``, an admin key) they act on the service's home, whose worker delivers."""

from __future__ import annotations

from typing import Any

from ..webhooks import Webhook
from .registry import Call, Output, arg, verb


def _line(hook: Webhook, secret: bool = False) -> str:
    text = f"{hook.webhook_id} {hook.tenant} {hook.url} [{', '.join(hook.events)}] {hook.status} v{hook.version}"
    return text + (f"\n  secret: {hook.secret}  (shown once: keep it)" if secret else "")


@verb(
    "webhook-add",
    "register a change webhook of a tenant (admin); prints its signing secret once",
    arg("hook_tenant", metavar="tenant", help="the tenant"),
    arg("hook_url", metavar="url", help="where to POST (http:// or https://)"),
    arg("--event", action="append", dest="events", help="an event to send (repeat; default: every memory.* event)"),
    arg("--secret", dest="hook_secret", help="the signing secret (default: a new random one)"),
    scope=False,
    identity=False,
    writes=True,
    remote=True,
)
def webhook_add(call: Call) -> Output:
    a = call.args
    hook = (call.remote or call.memory).webhook_register(
        a.hook_tenant, a.hook_url, events=a.events, secret=a.hook_secret
    )
    return hook.to_dict(secret=True), _line(hook, secret=True), 0


@verb(
    "webhook-rotate",
    "give a webhook a new signing secret (admin); prints it once",
    arg("hook_tenant", metavar="tenant", help="the tenant"),
    arg("webhook_id", help="the webhook"),
    arg("--secret", dest="hook_secret", help="the new secret (default: a new random one)"),
    scope=False,
    identity=False,
    writes=True,
    remote=True,
)
def webhook_rotate(call: Call) -> Output:
    a = call.args
    hook = (call.remote or call.memory).webhook_rotate(a.hook_tenant, a.webhook_id, secret=a.hook_secret)
    return hook.to_dict(secret=True), _line(hook, secret=True), 0


@verb(
    "webhook-remove",
    "remove a webhook (admin); what it was not sent yet is dead-lettered",
    arg("hook_tenant", metavar="tenant", help="the tenant"),
    arg("webhook_id", help="the webhook"),
    scope=False,
    identity=False,
    writes=True,
    remote=True,
)
def webhook_remove(call: Call) -> Output:
    hook = (call.remote or call.memory).webhook_remove(call.args.hook_tenant, call.args.webhook_id)
    return hook.to_dict(), _line(hook), 0


@verb(
    "webhooks",
    "the change webhooks (of a tenant), removed ones included (admin)",
    arg("hook_tenant", metavar="tenant", nargs="?", help="one tenant"),
    scope=False,
    identity=False,
    remote=True,
)
def webhooks(call: Call) -> Output:
    found = (call.remote or call.memory).webhooks(call.args.hook_tenant)
    return [h.to_dict() for h in found], "\n".join(_line(h) for h in found) or "(no webhooks)", 0


@verb(
    "webhook-deliver",
    "run one delivery pass over the outbox (admin): what a service's worker does every second",
    scope=False,
    identity=False,
    writes=True,
    remote=True,
)
def webhook_deliver(call: Call) -> Output:
    counts = (call.remote or call.memory).deliver_webhooks()
    return counts, ", ".join(f"{k} {v}" for k, v in counts.items()), 0


@verb(
    "webhook-deliveries",
    "every delivery attempt (of a webhook), leases included, oldest first (admin)",
    arg("webhook_id", nargs="?", help="one webhook"),
    scope=False,
    identity=False,
    remote=True,
)
def webhook_deliveries(call: Call) -> Output:
    rows: list[dict[str, Any]] = (call.remote or call.memory).webhook_deliveries(call.args.webhook_id)
    lines = [
        f"{r['attempted_at']} {r['webhook_id']} {r['event_id']} #{r['attempt']} {r['outcome']}"
        + (f" HTTP {r['status_code']}" if r.get("status_code") else "")
        + (f" ({r['error']})" if r.get("error") else "")
        for r in rows
    ]
    return rows, "\n".join(lines) or "(no deliveries)", 0
