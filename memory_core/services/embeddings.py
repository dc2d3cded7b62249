"""The embedding worker (docs/workers.md): indexable live facts whose index row (their vector)
is missing or stale are written anew, a bounded batch per run.

It is built on the index's own mechanism, not beside it. The projector already catches up, at its
first write, every row appended while no embedder was open (past the index watermark), and
records every index write that failed, vector included (``projection_failures``). What is left
is what this worker does: find the facts the index lacks or holds stale (the consistency report)
and those failed writes, and write them in batches of ``limit`` (``IndexSink.fill``), a fact whose
vector cannot be made failing alone. A fact that failed ``max_attempts`` times is parked for
``PARKED_FOR`` after its last failure (reported, and still tried by ``repair_projections``), so a
value the embedder keeps refusing takes no batch's place run after run, nor grows its failures
without end; then it is tried once more, last in its batch."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Mapping

from ..ports import IndexConsistency
from ..session import Session

EXAMPLES = 20
PARKED_FOR = timedelta(days=1)


@dataclass(frozen=True)
class FillPlan:
    behind: tuple[str, ...]  # indexable live facts without a current index row (missing or stale)
    batch: tuple[str, ...]  # what this run writes: fewest failures first, then by fact id
    parked: tuple[str, ...]  # behind, failed max_attempts times, the last time within PARKED_FOR
    left: int  # ready, but past this run's limit


def plan_fill(
    report: IndexConsistency,
    attempts: Mapping[str, tuple[int, datetime]],
    now: datetime,
    limit: int,
    max_attempts: int,
) -> FillPlan:
    """What a run writes (pure). A recorded failure whose fact the index now holds as it should
    (a later write made it) is in the batch too, to be resolved."""
    behind = {*report.missing, *report.stale}
    failures = {f: n for f, (n, _) in attempts.items()}
    parked = sorted(f for f in behind if failures.get(f, 0) >= max_attempts and now - attempts[f][1] < PARKED_FOR)
    ready = sorted((behind | set(report.pending_repair)) - set(parked), key=lambda f: (failures.get(f, 0), f))
    return FillPlan(tuple(sorted(behind)), tuple(ready[:limit]), tuple(parked), max(0, len(ready) - limit))


class EmbeddingWorker:
    def __init__(self, session: Session) -> None:
        self.session = session

    def run(self, *, apply: bool = True, limit: int = 256, max_attempts: int = 3) -> dict[str, Any]:
        """Write one batch (``apply``), or say what is behind. Counts, and the first fact ids."""
        session = self.session
        index = session.require_index()
        caught_up = 0
        if apply:
            session.refuse_read_only("the embedding worker writes the index")
            caught_up = index.flush()  # the queue, and rows written while no embedder was open
        report = index.consistency()  # read-only: nothing is written, so those rows show as missing
        attempts = session.projections.failure_attempts()
        plan = plan_fill(report, attempts, session.clock.now(), limit, max_attempts)
        filled, failed = index.fill(plan.batch) if apply and plan.batch else ([], {})
        return {
            "indexable": report.indexable,
            "index_rows": report.index_rows,
            "missing": len(report.missing),
            "stale": len(report.stale),
            "failed_writes": len(report.pending_repair),
            "caught_up": caught_up,
            "batch": len(plan.batch),
            "filled": len(filled),
            "failed": len(failed),
            "untried": len(plan.batch) - len(filled) - len(failed) if apply else 0,
            "parked": len(plan.parked),
            "left": plan.left,
            "fact_ids": list(plan.batch[:EXAMPLES]),
            "failed_ids": sorted(failed)[:EXAMPLES],
            "parked_ids": list(plan.parked[:EXAMPLES]),
            "errors": sorted(set(failed.values()))[:5],
        }
