"""A namespace's keys in sorted order, beside the version log's state cache, for prefix lookups.

The key-match leg finds the keys a query's key-like word begins (``deploy_`` → ``deploy_window``).
A scan of every key per lookup costs tens of milliseconds at a million keys; a sorted list and a
bisection cost microseconds. The list is made from the cached states on the first lookup of a
namespace and kept up to date as keys are added: the keys new since the last lookup are merged in
then (keys never leave the cache: a deleted key keeps its tombstone state). A cache entry that
was dropped and loaded again is a new mapping, so its order is made anew.
"""

from __future__ import annotations

import bisect
from typing import Any, Mapping

from ...identity import Namespace

# Up to this many keys new since the last lookup are inserted one by one; more are merged in one sort.
_INSERT_AT_MOST = 64


class KeyOrder:
    """Sorted keys per namespace. The caller holds the cache's lock around every call."""

    def __init__(self) -> None:
        # namespace -> (the cached mapping the order was made from, its keys in order, keys added since)
        self._orders: dict[Namespace, tuple[Mapping[str, Any], list[str], list[str]]] = {}

    def under(self, namespace: Namespace, states: Mapping[str, Any], prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` keys of ``states`` (the namespace's cached states) that begin with
        ``prefix``, in order."""
        held = self._orders.get(namespace)
        if held is None or held[0] is not states:
            keys = sorted(states)
        else:
            keys, added = held[1], held[2]
            if len(added) <= _INSERT_AT_MOST:
                for key in added:
                    bisect.insort(keys, key)
            else:
                keys = sorted([*keys, *added])  # a sorted run and a tail: one merge
        self._orders[namespace] = (states, keys, [])
        found = []
        for key in keys[bisect.bisect_left(keys, prefix) :]:
            if not key.startswith(prefix) or len(found) == limit:
                break
            found.append(key)
        return found

    def added(self, namespace: Namespace, states: Mapping[str, Any], key: str) -> None:
        """``key`` is new in ``states``, the namespace's cached states."""
        held = self._orders.get(namespace)
        if held is not None and held[0] is states:
            held[2].append(key)

    def forget(self) -> None:
        self._orders.clear()
