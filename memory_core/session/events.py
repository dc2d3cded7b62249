"""A write's state-change events, decided by ``substrate.events`` from what the write appends and
the states it changes, read under the lock the commit holds (so "before" is the log's own)."""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Callable, Sequence

from ..graph.plan import GraphWrite
from ..identity import Namespace
from ..model import FactVersion
from ..ports import VersionLog
from ..substrate.events import StateChange, events_of, with_graph

STAGED_LISTED = 1000

if TYPE_CHECKING:
    from .core import Commit


def write_events(
    versions: VersionLog,
    new_id: Callable[[], str],
    write: Commit,
    rows: tuple[FactVersion, ...],
    graph: Sequence[GraphWrite] = (),
) -> tuple[StateChange, ...]:
    if write.events is not None:
        return write.events
    return with_graph(_row_events(versions, new_id, write, rows), graph)


def _row_events(
    versions: VersionLog, new_id: Callable[[], str], write: Commit, rows: tuple[FactVersion, ...]
) -> tuple[StateChange, ...]:
    priors = {}
    for row in rows:
        if row.version > 1 and row.fact_id not in priors:
            before = versions.fact_state(Namespace(row.tenant, row.scope, row.owner_id), row.key, row.fact_id)
            if before is not None:
                priors[row.fact_id] = before
    staged, listed = write.staged, []
    if staged is not None:
        # A batch's fresh facts are listed up to a bound; past it the event counts them.
        n = min(staged.count, STAGED_LISTED)
        columns = [
            list(islice(staged.column(name), n)) for name in ("fact_id", "key", "id", "content_sha256", "status")
        ]
        listed = [(f, k, i, c, getattr(s, "value", s)) for f, k, i, c, s in zip(*columns)]
    count = staged.count if staged is not None else 0
    return events_of(write.audits, rows, priors, write.context, new_id, staged=listed, staged_count=count)
