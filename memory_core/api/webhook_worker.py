"""Change webhooks' delivery on a thread of its own: one delivery pass every ``interval_s``
seconds (``Memory.deliver_webhooks``). ``memcore serve`` runs one; on Dagster the
``webhook_delivery_sensor`` launches the same pass where no service holds the home. A worker
stopped mid-pass leaves the events it leased to be sent again once their leases end."""

from __future__ import annotations

import os

from ..webhooks import DeliveryPolicy
from .memory import Memory
from .periodic import Periodic


class WebhookWorker(Periodic):
    name = "memcore-webhooks"

    def __init__(self, memory: Memory, interval_s: float, policy: DeliveryPolicy | None = None) -> None:
        super().__init__(interval_s)
        self.memory = memory
        self.policy = policy
        self.worker = f"service-{os.getpid()}"
        self.delivered = 0
        self.attempts_failed = 0  # attempts that did not deliver (retried later, or dead-lettered)

    def round(self) -> None:
        counts = self.memory.deliver_webhooks(worker=self.worker, policy=self.policy)
        self.delivered += counts["delivered"]
        self.attempts_failed += counts["pending"] + counts["dead"]
