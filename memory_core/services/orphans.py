"""The orphan reconcile: retrieval-index rows whose fact the store no longer serves (deleted,
rejected, expired, made high, or gone from the log) are dropped from the index. Only the index
changes: the log is the authority, and nothing in it is written (docs/workers.md)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..model import VISIBLE_STATUSES, FactVersion
from ..session import Session

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Orphans:
    """Index rows the store does not serve, by why: ``gone`` (no such fact in the log), ``retired``
    (its latest state is not visible: deleted, rejected, expired, superseded away) and
    ``unservable`` (visible, but the index must not serve it: high, redacted, anonymized, or of a
    type that is not embedded)."""

    index_rows: int
    gone: tuple[str, ...] = ()
    retired: tuple[str, ...] = ()
    unservable: tuple[str, ...] = ()

    @property
    def fact_ids(self) -> tuple[str, ...]:
        return tuple(sorted({*self.gone, *self.retired, *self.unservable}))

    def to_dict(self, removed: int, *, examples: int = 20) -> dict[str, Any]:
        return {
            "index_rows": self.index_rows,
            "orphans": len(self.fact_ids),
            "gone": len(self.gone),
            "retired": len(self.retired),
            "unservable": len(self.unservable),
            "removed": removed,
            "orphan_ids": list(self.fact_ids[:examples]),
        }


def classify_orphans(
    extra: Sequence[str], latest: Sequence[FactVersion], index_rows: int, servable: Callable[[FactVersion], bool]
) -> Orphans:
    """Why each fact the index holds but must not serve (``extra``) is an orphan (pure)."""
    by_fact = {s.fact_id: s for s in latest}
    gone = [f for f in extra if f not in by_fact]
    retired = [f for f in extra if f in by_fact and by_fact[f].status.value not in VISIBLE_STATUSES]
    unservable = [f for f in extra if f in by_fact and f not in retired and not servable(by_fact[f])]
    return Orphans(index_rows, tuple(sorted(gone)), tuple(sorted(retired)), tuple(sorted(unservable)))


class OrphanReconciler:
    def __init__(self, session: Session) -> None:
        self.session = session

    def run(self, *, apply: bool = True) -> dict[str, Any]:
        """Find the orphan index rows and (``apply``) drop them. Returns counts and the first ids.
        A second run finds none: it is idempotent."""
        session = self.session
        index = session.require_index()
        # Under the store's lock from the comparison to the delete: a write landing in between
        # could make a fact servable again, and its new row must not be dropped.
        with session.locked():
            report = index.consistency()
            orphans = classify_orphans(
                report.extra, session.versions.latest_states(list(report.extra)), report.index_rows, session.indexable
            )
            removed = 0
            if apply and orphans.fact_ids and not session.store.read_only:
                # ``forget`` also folds away older versions of the index's files: an orphan may
                # hold the words of a fact that was erased or made high, which must not linger.
                index.forget(orphans.fact_ids)
                removed = len(orphans.fact_ids)
                # A failed index write recorded for these facts is now moot: the index agrees.
                pending = set(session.projections.pending_projection_failures()) & set(orphans.fact_ids)
                if pending:
                    session.projections.resolve_projection_failures(sorted(pending), session.clock.now())
        if removed:
            log.info("orphan reconcile dropped the index rows of %d facts", removed)
        return orphans.to_dict(removed)
