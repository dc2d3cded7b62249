"""Change webhooks: which writes announce what (the outbox), the signed body a receiver checks,
and the delivery decisions (retry with backoff and jitter, cool down a failing endpoint,
dead-letter past the deadline). Pure rules; ``services/webhooks.py`` applies them."""

from .delivery import Attempt, DeliveryPolicy, decide, due_after_failure, is_due, past_deadline
from .model import WEBHOOK_EVENTS, OutboxEvent, Webhook, announcements, webhook_event_of
from .signing import SIGNATURE_HEADER, sign, signed_headers, verify

__all__ = [
    "SIGNATURE_HEADER",
    "WEBHOOK_EVENTS",
    "Attempt",
    "DeliveryPolicy",
    "OutboxEvent",
    "Webhook",
    "announcements",
    "decide",
    "due_after_failure",
    "is_due",
    "past_deadline",
    "sign",
    "signed_headers",
    "verify",
    "webhook_event_of",
]
