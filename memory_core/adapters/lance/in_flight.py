"""Which namespaces' states a flush has taken from the index's queue and not yet written: a
search of one of them must wait for that write (read-your-writes), a search of any other need
not (``IndexProjector.flush``'s ``namespace``)."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Sequence

from ...identity import Namespace
from ...model import FactVersion


def namespace_of(state: FactVersion) -> Namespace:
    return Namespace(state.tenant, state.scope, state.owner_id)


class InFlight:
    """A count of states in flight per namespace; many flushes may write at once."""

    def __init__(self) -> None:
        self._counts: Counter[Namespace] = Counter()
        self._lock = threading.Lock()

    def take_off(self, states: Sequence[FactVersion]) -> Counter[Namespace]:
        """Count ``states`` in flight (before the queue lets go of them); what to ``land`` later."""
        flying = Counter(namespace_of(s) for s in states)
        with self._lock:
            self._counts.update(flying)
        return flying

    def land(self, flying: Counter[Namespace]) -> None:
        """``take_off``'s states are written, or failed (with their failure queued for its note)."""
        with self._lock:
            self._counts.subtract(flying)
            self._counts = +self._counts  # no namespace kept at zero

    def holds(self, namespace: Namespace) -> bool:
        with self._lock:
            return self._counts[namespace] > 0
