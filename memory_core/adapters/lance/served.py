"""Which rows of the index a search may serve.

A fact's newer state is appended beside its older row rather than merged over it (a merge cost
about 30 ms per index write at 100,000 rows, an append 6 ms: docs/benchmarks.md, "Memory
service"). The older row stops being served at once and is deleted later, with others, when the
index settles. ``ServedRows`` names, per fact with such a row, the version still served (None:
none of its rows). The map is replaced, never changed in place, under ``lock`` together with the
table version it describes, so a reader takes a version and its map as one.
"""

from __future__ import annotations

import threading
from typing import Any, Mapping

Served = Mapping[str, "str | None"]


def is_served(row: Mapping[str, Any], served: Served) -> bool:
    """Is this row its fact's served one?"""
    fact_id = row["fact_id"]
    return fact_id not in served or served[fact_id] == row["version_id"]


class ServedRows:
    """The map of facts whose older rows wait to be deleted, and the lock every table change that
    moves it (or that a reader must see with it) is made under."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.map: dict[str, str | None] = {}
        self.appends = 0  # appended fragments since the last compaction of small ones

    def mark(self, served: Mapping[str, str | None]) -> None:
        """Serve only these versions of these facts (held: ``lock``)."""
        if served:
            self.map = {**self.map, **served}

    def take(self) -> dict[str, str | None]:
        """The map, emptied (held: ``lock``; its rows are being deleted)."""
        taken, self.map = self.map, {}
        return taken

    def reset(self) -> None:
        self.map, self.appends = {}, 0
