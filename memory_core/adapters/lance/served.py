"""Which rows of the index a search may serve.

A fact's newer state is appended beside its older row rather than merged over it (a merge cost
about 30 ms per index write at 100,000 rows, an append 6 ms: docs/benchmarks.md, "Memory
service under load, second pass"). The older row stops being served at once and is deleted
later, with others, when the index settles. ``Served`` names, per fact with such rows, the version
still served (None: none of its rows), and bounds how many rows it hides. ``ServedRows`` replaces
it, never changes it in place, under ``lock`` together with the table version it describes, so a
reader takes a version and its ``Served`` as one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Served:
    """``versions``: fact id -> the version served (None: no row of the fact). ``hidden``: at least
    as many as the rows the table holds that are not served (each marking hides at most one more
    row: the one served before it), so a leg that asks for ``hidden`` more rows than it needs gets
    as many served ones as the table has."""

    versions: Mapping[str, str | None] = field(default_factory=dict)
    hidden: int = 0

    def admits(self, row: Mapping[str, Any]) -> bool:
        """Is this row its fact's served one?"""
        fact_id = row["fact_id"]
        return fact_id not in self.versions or self.versions[fact_id] == row["version_id"]


NOTHING_HIDDEN = Served()


class ServedRows:
    """The published ``Served``, and the lock every table change that moves it (or that a reader
    must see with it) is made under."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.current = NOTHING_HIDDEN
        self.appends = 0  # appended fragments since the last fold of small ones

    def mark(self, served: Mapping[str, str | None]) -> None:
        """Serve only these versions of these facts (held: ``lock``)."""
        if served:
            now = self.current
            self.current = Served({**now.versions, **served}, now.hidden + len(served))

    def forget(self, fact_ids: Any) -> None:
        """Serve these facts' rows again as they come (held: ``lock``; their rows were deleted, and
        a row appended next, a state another process wrote, must not be hidden behind the old
        mark)."""
        now, gone = self.current, set(fact_ids)
        if gone & now.versions.keys():
            self.current = Served({k: v for k, v in now.versions.items() if k not in gone}, now.hidden)

    def take(self) -> None:
        """Publish nothing hidden (held: ``lock``; the hidden rows are gone)."""
        self.current = NOTHING_HIDDEN

    def reset(self) -> None:
        self.current, self.appends = NOTHING_HIDDEN, 0
