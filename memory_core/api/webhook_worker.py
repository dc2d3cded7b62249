"""Change webhooks' delivery on a thread of its own: one delivery pass every ``interval_s``
seconds (``Memory.deliver_webhooks``). ``memcore serve`` runs one; on Dagster the
``webhook_delivery_sensor`` launches the same pass where no service holds the home. A worker
stopped mid-pass leaves the events it leased to be sent again once their leases end.

A home with no active webhook has nothing to send: an event is queued only for a webhook active
when its write commits. So once a pass found nothing to do while none was active, the rounds
after it skip the pass (three statements to the store, 6 ms of its lock a second at 100,000
facts, measured 2026-12-07) until a webhook is active again, but for one pass every
``IDLE_PASS_EVERY`` rounds, which dead-letters the events a removed webhook left leased by a
worker that died."""

from __future__ import annotations

import os

from ..webhooks import DeliveryPolicy
from .memory import Memory
from .periodic import Periodic

IDLE_PASS_EVERY = 60


class WebhookWorker(Periodic):
    name = "memcore-webhooks"

    def __init__(self, memory: Memory, interval_s: float, policy: DeliveryPolicy | None = None) -> None:
        super().__init__(interval_s)
        self.memory = memory
        self.policy = policy
        self.worker = f"service-{os.getpid()}"
        self.delivered = 0
        self.attempts_failed = 0  # attempts that did not deliver (retried later, or dead-lettered)
        self.passes = 0  # passes run (rounds that skipped one are not counted)
        self._idle = False  # the last pass found nothing to do, and no webhook was active
        self._skipped = 0  # rounds skipped since the last pass

    def round(self) -> None:
        active = bool(self.memory.store.webhooks.active())  # DuckDB: held in memory, no statement
        if self._idle and not active and self._skipped < IDLE_PASS_EVERY - 1:
            self._skipped += 1
            return
        self._skipped = 0
        counts = self.memory.deliver_webhooks(worker=self.worker, policy=self.policy)
        self.passes += 1
        self.delivered += counts["delivered"]
        self.attempts_failed += counts["pending"] + counts["dead"]
        self._idle = not active and not any(counts.values())
