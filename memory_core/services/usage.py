"""The usage fold (docs/workers.md): what retrieval showed and what callers said of it, folded
into per-fact totals (``usage_totals``), which the ``usage_prior`` of a recipe reads.

It reads what was recorded since it last ran: the searches' exposures (counted in memory,
written to a queue it consumes) and remember's interactions (views and contexts, whose refs were
shown, and retrieval feedback, on those or on a search's hits) past its cursor. The decision is
``retrieval.usage.fold_usage``; the totals, the consumed queue and the moved cursor are written
in one transaction, so a second run folds nothing new."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from ..identity import Namespace
from ..retrieval.usage import fold_usage, named_facts
from ..session import Session
from ..session.usage import flush_exposures

log = logging.getLogger(__name__)

# How far before its cursor the fold looks again: an interaction stamped before the newest one
# folded but committed after that fold (two threads) is still counted, once.
LOOKBACK = timedelta(hours=1)


class UsageFold:
    def __init__(self, session: Session) -> None:
        self.session = session

    def run(self, *, apply: bool = True) -> dict[str, Any]:
        """Fold what waits (``apply``), or say what waits. Counts, and the first fact ids."""
        session, usage = self.session, self.session.store.usage
        if apply:
            session.refuse_read_only("the usage fold writes its totals")
            flush_exposures(session)  # this process's searches first
        with session.locked():  # one fold at a time; a search's flush only adds after what it read
            exposures, through = usage.waiting_exposures()
            answered = usage.unfolded(LOOKBACK)
            ids = sorted({e.fact_id for e in exposures} | set(named_facts(answered)))
            states = session.versions.latest_states(ids) if ids else []
            namespace_of = {s.fact_id: Namespace(s.tenant, s.scope, s.owner_id) for s in states}
            totals = fold_usage(exposures, answered, namespace_of, usage.totals_of(sorted(namespace_of)))
            if apply and (exposures or answered):
                usage.apply_fold(totals, through, answered, LOOKBACK, session.clock.now())
        feedback = [a for a in answered if a.kind == "feedback"]
        report = {
            "exposures": sum(e.count for e in exposures),
            "buffered": len(session.searches.exposures),  # counted by searches, not yet written
            "interactions": len(answered) - len(feedback),
            "useful": sum(1 for a in feedback if a.feedback == "useful"),
            "not_useful": sum(1 for a in feedback if a.feedback == "not_useful"),
            "unknown_facts": len(set(ids) - namespace_of.keys()),
            "facts": len(totals),
            "folded": len(totals) if apply else 0,
            "fact_ids": [t.fact_id for t in totals[:20]],
        }
        # Records a run would fold: none left once it ran, but what searches counted meanwhile.
        report["waiting"] = report["buffered"] + (0 if apply else len(exposures) + len(answered))
        if apply and totals:
            log.info("usage fold: %d facts' totals from %d records", len(totals), len(exposures) + len(answered))
        return report
