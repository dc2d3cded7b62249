"""A round of work on a thread of its own, every ``interval_s`` seconds from ``start`` until
``stop`` (the index upkeep, the webhook delivery worker). A round that raises is counted and
logged, and the next one runs as ever."""

from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)


class Periodic:
    name = "memcore-periodic"

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self.failed = 0  # rounds that raised
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def round(self) -> None:
        raise NotImplementedError

    def start(self) -> "Periodic":
        if self.interval_s > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop after the round in progress."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.round()
            except Exception as exc:  # noqa: BLE001 - the thread must outlive a failed round
                self.failed += 1
                log.warning("%s: a round failed: %s: %s", self.name, type(exc).__name__, exc)
