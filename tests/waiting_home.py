"""A home with one fact for each of two users, and a lock held by another thread: what the tests
of reads that must not wait (ports/waiting.py) share, in-process and through the service."""

from __future__ import annotations

import threading

from memory_core import FixedClock, Memory
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.identity import Identity
from tests.conftest import T0

ANA = Identity(tenant="acme", user="ana", agent="helper")
BOB = Identity(tenant="acme", user="bob", agent="helper")


def home_with_facts(path) -> None:
    """ana's city is Lisbon, bob's Porto; the home is closed after, so nothing is held in memory."""
    with Memory.open(path, clock=FixedClock(T0), embedder=HashingEmbedder()) as memory:
        memory.for_run(ANA).set("city", "Lisbon")
        memory.for_run(BOB).set("city", "Porto")


class Held:
    """A lock (or any context manager) held by another thread until ``release``."""

    def __init__(self, lock) -> None:
        self._taken, self._done = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._hold, args=(lock,), daemon=True)
        self._thread.start()
        assert self._taken.wait(5)

    def _hold(self, lock) -> None:
        with lock:
            self._taken.set()
            self._done.wait(10)

    def release(self) -> None:
        self._done.set()
        self._thread.join(5)
