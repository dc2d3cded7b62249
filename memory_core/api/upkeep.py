"""Index upkeep on a thread of its own: the index's queue written, settled and folded between
requests (``Memory.tend_index``), so that a search seldom has any of that to do before it can
read. ``memcore serve`` runs one; so may any process that shares one ``Memory`` among threads
(docs/retrieval.md, "Index upkeep")."""

from __future__ import annotations

import logging
import threading

from .memory import Memory

log = logging.getLogger(__name__)


class IndexUpkeep:
    """Tends ``memory``'s index every ``interval_s`` seconds from ``start`` until ``stop``."""

    def __init__(self, memory: Memory, interval_s: float) -> None:
        self.memory = memory
        self.interval_s = interval_s
        self.tended = 0  # rounds that found work
        self.failed = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "IndexUpkeep":
        if self.interval_s > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="memcore-index-upkeep", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop after the round in progress (the home's close writes what is still queued)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                if self.memory.tend_index():
                    self.tended += 1
            except Exception as exc:  # noqa: BLE001 - upkeep must outlive a failed round; searches still write
                self.failed += 1  # the queue themselves, so nothing waits on this thread to be served
                log.warning("index upkeep failed: %s: %s", type(exc).__name__, exc)
