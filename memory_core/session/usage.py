"""What searches showed, on its way to the usage fold: counted in memory as searches answer
(``SearchMemo.exposures``) and written to the store's exposure queue (``UsageStore``) in one
statement when the counts grow large, when a fold runs and when the home closes. Counts not yet
written when a process dies are lost: they are statistics, and a search must not pay a write."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Sequence

from ..identity import Namespace

if TYPE_CHECKING:
    from .core import Session

log = logging.getLogger(__name__)


def record_exposures(session: Session, namespace: Namespace, fact_ids: Sequence[str], at: datetime) -> None:
    """Count a search's hits as shown; write the counts once they grow past the memo's bound. A
    read-only home counts nothing (it could never write them)."""
    if session.store.read_only or not fact_ids:
        return
    if session.searches.exposures.add(namespace, list(fact_ids), at):
        try:
            flush_exposures(session)
        # The search has its answer; counts it could not write stay in memory for the next flush.
        except Exception as exc:  # noqa: BLE001 - statistics must never fail a search
            log.warning("could not write the searches' exposures; kept for the next flush: %s", exc)


def flush_exposures(session: Session) -> int:
    """Write the counted exposures to the store's queue; how many facts' counts were written. On
    a failure the counts are kept in memory and the error raised."""
    if session.store.read_only:
        return 0
    taken = session.searches.exposures.take()
    if not taken:
        return 0
    try:
        session.store.usage.record_exposures(taken)
    except BaseException:
        session.searches.exposures.put_back(taken)
        raise
    return len(taken)
