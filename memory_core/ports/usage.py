"""What the usage fold keeps (docs/workers.md, usage_fold): the searches' exposures waiting to be
folded, the fold's place in the recorded interactions, and each fact's totals, which a recipe's
``usage_prior`` reads at search time."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol, Sequence

from ..identity import Namespace
from ..retrieval.usage import Answered, Exposure, UsageTotals


class UsageStore(Protocol):
    def record_exposures(self, exposures: Sequence[Exposure]) -> None:
        """Append searches' exposures (counted in memory and flushed) for the next fold."""
        ...

    def waiting_exposures(self) -> tuple[list[Exposure], int]:
        """The exposures not folded yet, and the position up to which they were read (what
        ``apply_fold`` consumes; later ones wait for the next fold)."""
        ...

    def unfolded(self, lookback: timedelta) -> list[Answered]:
        """Views, contexts and retrieval feedback recorded since the fold's cursor (the newest one
        it folded), reading ``lookback`` before it for a late commit, less those already folded."""
        ...

    def totals_of(self, fact_ids: Sequence[str]) -> dict[str, UsageTotals]:
        """The kept totals of these facts (by fact id)."""
        ...

    def totals(self, namespace: Namespace, fact_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        """(recalls, negative) of those of these facts of ``namespace`` that have totals: what a
        search's usage prior reads for its pooled candidates."""
        ...

    def apply_fold(
        self,
        totals: Sequence[UsageTotals],
        exposures_through: int,
        folded: Sequence[Answered],
        lookback: timedelta,
        at: datetime,
    ) -> None:
        """In one transaction: replace these facts' totals, consume the exposures read up to
        ``exposures_through``, and move the cursor past ``folded`` (forgetting the folded ids more
        than ``lookback`` older than the cursor)."""
        ...
