"""A webhook (one tenant's registered endpoint), the change events it can take, and which events
a write announces: one outbox row per event and webhook, holding ids and the identity tuple,
never a value."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Sequence

from ..errors import InvalidInput
from ..substrate.events import StateChange

WEBHOOK_EVENTS = (
    "memory.written",
    "memory.revised",
    "memory.tombstoned",
    "memory.restored",
    "memory.redacted",
    "memory.erased",
)

# A state change's webhook event, where its type alone says it. Records (lenses, frames,
# decisions) change no memory and announce nothing.
_BY_TYPE = {
    "fact.created": "memory.written",
    "batch.written": "memory.written",
    "document.put": "memory.written",
    "snapshot.restored": "memory.written",
    "fact.superseded": "memory.revised",
    "fact.restated": "memory.revised",
    "fact.merged": "memory.revised",
    "fact.flagged": "memory.revised",
    "fact.locked": "memory.revised",
    "fact.unlocked": "memory.revised",
    "fact.pinned": "memory.revised",
    "fact.unpinned": "memory.revised",
    "fact.promoted": "memory.revised",
    "fact.demoted": "memory.revised",
    "fact.rejected": "memory.revised",
    "fact.rolled_back": "memory.revised",
    "fact.relabelled": "memory.revised",
    "fact.updated": "memory.revised",
    "fact.verified": "memory.revised",
    "resolver.acted": "memory.revised",
    "review.decided": "memory.revised",
    "fact.deleted": "memory.tombstoned",
    "document.deleted": "memory.tombstoned",
    "fact.restored": "memory.restored",
    "fact.redacted": "memory.redacted",
}


def webhook_event_of(change: StateChange) -> str | None:
    """The webhook event a state change announces (None: it changed no memory)."""
    if change.event_type == "fact.expired":  # the sweep tombstones, demotes or anonymizes
        statuses = {c.after for f in change.facts for c in f.changes if c.field == "status"}
        return "memory.tombstoned" if "tombstoned" in statuses else "memory.revised"
    return _BY_TYPE.get(change.event_type)


@dataclass(frozen=True, slots=True)
class Webhook:
    tenant: str
    webhook_id: str
    version: int
    url: str
    events: tuple[str, ...]
    secret: str
    status: str  # active | removed
    changed_at: datetime
    actor: str

    def takes(self, event_type: str) -> bool:
        return self.status == "active" and event_type in self.events

    def to_dict(self, *, secret: bool = False) -> dict[str, Any]:
        body: dict[str, Any] = {
            "tenant": self.tenant,
            "webhook_id": self.webhook_id,
            "version": self.version,
            "url": self.url,
            "events": list(self.events),
            "status": self.status,
            "changed_at": self.changed_at.isoformat(),
            "actor": self.actor,
        }
        return body | ({"secret": self.secret} if secret else {})


def checked_events(events: Iterable[str] | None) -> tuple[str, ...]:
    chosen = tuple(WEBHOOK_EVENTS if events is None else events)
    unknown = [e for e in chosen if e not in WEBHOOK_EVENTS]
    if unknown or not chosen:
        raise InvalidInput(
            f"a webhook takes some of {', '.join(WEBHOOK_EVENTS)}; not {', '.join(unknown) or 'none'}",
            field="events",
        )
    return tuple(sorted(set(chosen), key=WEBHOOK_EVENTS.index))


def checked_url(url: str) -> str:
    if not isinstance(url, str) or not url.startswith(("http://", "https://")) or len(url) > 2000:
        raise InvalidInput("a webhook URL is http:// or https:// (at most 2,000 characters)", field="url")
    return url


@dataclass(frozen=True, slots=True)
class OutboxEvent:
    """One event to deliver to one webhook."""

    event_id: str  # the same for every webhook: what a receiver deduplicates on
    webhook_id: str
    event_type: str
    tenant: str
    scope: str
    owner_id: str
    body: str  # the JSON a receiver gets: ids and the identity tuple, never a value
    occurred_at: datetime
    seq: int = 0


def event_body(
    event_id: str,
    event_type: str,
    occurred_at: datetime,
    identity: tuple[str, str, str, str | None],
    facts: Sequence[dict[str, Any]] = (),
) -> str:
    tenant, scope, owner_id, key = identity
    body = {
        "event_id": event_id,
        "type": event_type,
        "occurred_at": occurred_at.isoformat(),
        "tenant": tenant,
        "scope": scope,
        "owner_id": owner_id,
        "key": key,
        "facts": list(facts),
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def announcements(changes: Sequence[StateChange], hooks: Sequence[Webhook]) -> list[OutboxEvent]:
    """The outbox rows a write's state changes make: one per change and webhook of its tenant
    that takes the change's event, in the changes' order."""
    out: list[OutboxEvent] = []
    for change in changes:
        event_type = webhook_event_of(change)
        takers = [h for h in hooks if h.tenant == change.tenant and event_type and h.takes(event_type)]
        if not takers or event_type is None:
            continue
        facts = [{"fact_id": f.fact_id, "version_id": f.after_version_id} for f in change.facts]
        identity = (change.tenant, change.scope, change.owner_id, change.key)
        body = event_body(change.event_id, event_type, change.recorded_at, identity, facts)
        out.extend(
            OutboxEvent(
                change.event_id,
                h.webhook_id,
                event_type,
                change.tenant,
                change.scope,
                change.owner_id,
                body,
                change.recorded_at,
            )
            for h in takers
        )
    return out


def erased_announcements(
    request_id: str,
    tenant: str,
    pairs: Sequence[tuple[str, str]] | None,
    at: datetime,
    hooks: Sequence[Webhook],
) -> list[OutboxEvent]:
    """``memory.erased``, once an erasure's census verified: one event per namespace it erased
    (one for a whole tenant), ids stable per request so announcing again adds nothing."""
    takers = [h for h in hooks if h.tenant == tenant and h.takes("memory.erased")]
    out: list[OutboxEvent] = []
    for i, (scope, owner) in enumerate(pairs or [("tenant", tenant)]):
        event_id = f"{request_id}-{i}"
        body = event_body(event_id, "memory.erased", at, (tenant, scope, owner, None))
        out.extend(OutboxEvent(event_id, h.webhook_id, "memory.erased", tenant, scope, owner, body, at) for h in takers)
    return out
