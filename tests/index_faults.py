"""A retrieval index with faults, for tests: the home's real Lance table, whose writes can be slowed
(to widen a race) or made to fail (a full disk), injected through ``Memory.open(open_index=...)``
(never by patching an adapter's insides).

    lance = IndexFaults(append_delay_s=0.03)
    memory = Memory.open(home, embedder="hashing", open_index=lance.open_index)
    lance.failing = OSError("no space left on device")  # every index write fails until reset
    lance.append_gate = threading.Event()  # index writes wait until it is set
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from memory_core.adapters.lance import IndexProjector, LanceIndex, LanceSearch
from memory_core.api.memory import open_lance_index
from memory_core.session import Session
from memory_core.session.core import IndexPorts


class FaultyLance(LanceIndex):
    """``LanceIndex`` whose appends (a fact's first row) and merges (a later state) wait first,
    and raise ``faults.failing`` while it is set."""

    def __init__(self, *args: Any, faults: IndexFaults, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.faults = faults

    def _before_write(self, delay_s: float) -> None:
        gate = self.faults.append_gate
        if gate is not None:
            self.faults.held.set()
            gate.wait(timeout=30)
        if delay_s:
            time.sleep(delay_s)
        if self.faults.failing is not None:
            raise self.faults.failing

    def add(self, rows: Any) -> None:
        self._before_write(self.faults.append_delay_s)
        super().add(rows)

    def upsert(self, rows: Any) -> None:
        self._before_write(self.faults.merge_delay_s)
        super().upsert(rows)

    def settle(self, *, compact: bool = True) -> int:
        if self.faults.settle_failing is not None:
            raise self.faults.settle_failing
        return super().settle(compact=compact)


class IndexFaults:
    """The switches of a ``FaultyLance`` and the factory that builds it into a session."""

    def __init__(self, *, append_delay_s: float = 0.0, merge_delay_s: float = 0.0) -> None:
        # A slow append beside a quick merge: a later state of a fact could overtake its first row.
        self.append_delay_s, self.merge_delay_s = append_delay_s, merge_delay_s
        self.failing: BaseException | None = None
        self.settle_failing: BaseException | None = None  # settling (deleting replaced rows) raises
        # While set to an unset event, an index write waits for it (``held`` says one is waiting):
        # an index write held open for as long as a test needs.
        self.append_gate: threading.Event | None = None
        self.held = threading.Event()
        self.opened = 0  # how many times a session built its index
        self._count = threading.Lock()

    def open_index(self, session: Session) -> IndexPorts:
        with self._count:
            self.opened += 1
        store, embedder = session.store, session.embedder
        index = FaultyLance(store.home / "lance", embedder.name, embedder.dim, faults=self)
        sink = IndexProjector(session.versions, session.projections, index, embedder, session.clock, session.indexable)
        return sink, LanceSearch(index)


def delayed(open_index: Callable[[Session], IndexPorts] = open_lance_index, *, delay_s: float) -> Callable:
    """``open_index`` that sleeps first and counts its calls (``.calls``): a slow first use, so
    every thread that writes at once asks for the index before it exists."""

    def opening(session: Session) -> IndexPorts:
        with lock:
            opening.calls += 1
        time.sleep(delay_s)
        return open_index(session)

    lock = threading.Lock()
    opening.calls = 0
    return opening
