"""What happens after a POST: delivered, tried again later (exponential backoff with jitter, and
a cooldown once an endpoint has failed several times running), or dead-lettered once the event
has waited past the deadline."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True, slots=True)
class DeliveryPolicy:
    timeout_s: float = 5.0  # one POST's deadline
    backoff_base_s: float = 1.0
    backoff_factor: float = 2.0
    backoff_max_s: float = 300.0
    jitter: float = 0.2  # +- this share of the delay, so failing endpoints are not retried in step
    cooldown_after: int = 5  # consecutive failures before the endpoint cools down
    cooldown_s: float = 600.0
    deadline_s: float = 2.75 * 86400  # an event not delivered by then is dead
    lease_s: float = 60.0  # a worker's claim on an event; a worker that dies lets it go after this
    posts_per_pass: int = 100


@dataclass(frozen=True, slots=True)
class Attempt:
    outcome: str  # delivered | pending | dead
    next_attempt_at: datetime | None
    error: str | None = None


def is_due(outcome: str | None, next_attempt_at: datetime | None, now: datetime) -> bool:
    """Whether an unsettled event may be sent now: never tried, or its retry time (a failure's
    backoff, a worker's lease) has come."""
    return outcome is None or next_attempt_at is None or next_attempt_at <= now


def past_deadline(policy: DeliveryPolicy, occurred_at: datetime, now: datetime) -> bool:
    return now >= occurred_at + timedelta(seconds=policy.deadline_s)


def due_after_failure(policy: DeliveryPolicy, failures: int, now: datetime, unit: float) -> datetime:
    """When a failed event is tried again: ``failures`` so far (1 after the first), ``unit`` a
    number in [0, 1) for the jitter (the caller's random source, so a test can fix it)."""
    delay = min(policy.backoff_max_s, policy.backoff_base_s * policy.backoff_factor ** (failures - 1))
    delay *= 1 + policy.jitter * (2 * unit - 1)
    if failures >= policy.cooldown_after:
        delay = max(delay, policy.cooldown_s)
    return now + timedelta(seconds=delay)


def decide(
    policy: DeliveryPolicy,
    *,
    ok: bool,
    failures: int,
    occurred_at: datetime,
    now: datetime,
    unit: float,
    error: str | None = None,
) -> Attempt:
    """The outcome of one POST. ``failures``: the event's failed attempts before this one."""
    if ok:
        return Attempt("delivered", None)
    if past_deadline(policy, occurred_at, now):
        return Attempt("dead", None, f"not delivered in time: {error}")
    return Attempt("pending", due_after_failure(policy, failures + 1, now, unit), error)
