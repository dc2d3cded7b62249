"""``UsageStore`` over a PostgreSQL authority: ``usage_exposures`` (a queue the fold consumes),
``usage_folded`` (its cursor in ``interactions``) and ``usage_totals`` (one row per fact, a unique
index). Derived from the records, so not audited.

The DuckDB adapter's statements run as written; what several replicas change:
- they flush their searches' exposures at once, and the fold consumes the queue up to the
  position it read (``seq <= through``), so positions must follow commit order: a flush numbers
  its rows under a lock of the queue's table held until it commits (other flushes wait, readers
  do not), so no row ever commits below a position a fold has already read;
- a fact's totals are replaced by one upsert on its unique id (a delete and an insert would
  collide with another replica's insert);
- the DuckDB adapter keeps a namespace's totals in memory, which another replica's fold would
  make stale: ``totals`` reads the candidates' rows by their fact id instead (one index probe).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Sequence

from ...identity import Namespace
from ...retrieval.usage import Answered, Exposure, UsageTotals
from ..duckdb.connection import NS_WHERE, ns_params
from ..duckdb.usage import DuckDBUsage, totals_columns
from .connection import PgConnection

_TOTALS = ("tenant", "scope", "owner_id", "fact_id", "exposures", "recalls", "negative", "last_seen", "folded_at")
_REPLACED = ", ".join(f"{c} = excluded.{c}" for c in _TOTALS if c != "fact_id")


class PgUsage(DuckDBUsage):
    """``UsageStore`` over the authority's pool."""

    def __init__(self, db: PgConnection) -> None:
        self._db = db  # type: ignore[assignment]  # the same reads; no totals are kept in memory

    def _forget_cache(self) -> None:
        """Nothing to forget (an erasure calls it on every port that keeps rows)."""

    def record_exposures(self, exposures: Sequence[Exposure]) -> None:
        if not exposures:
            return
        with self._db.tx() as tx:
            # Conflicts with itself and with the fold's DELETE, never with a read (see the module).
            tx.execute("LOCK TABLE usage_exposures IN SHARE ROW EXCLUSIVE MODE")
            super().record_exposures(exposures)

    def totals(self, namespace: Namespace, fact_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        if not fact_ids:
            return {}
        rows = self._db.rows(
            f"SELECT fact_id, recalls, negative FROM usage_totals WHERE {NS_WHERE} AND fact_id = ANY(?) "
            "AND (recalls > 0 OR negative > 0)",
            [*ns_params(namespace), list(fact_ids)],
        )
        said = {f: (int(r), int(n)) for f, r, n in rows}
        return {f: said[f] for f in fact_ids if f in said}

    def apply_fold(
        self,
        totals: Sequence[UsageTotals],
        exposures_through: int,
        folded: Sequence[Answered],
        lookback: timedelta,
        at: datetime,
    ) -> None:
        with self._db.tx() as tx:
            if totals:
                tx.execute(
                    f"INSERT INTO usage_totals ({', '.join(_TOTALS)}) SELECT *, ?::TIMESTAMPTZ FROM unnest("
                    "?::VARCHAR[], ?::VARCHAR[], ?::VARCHAR[], ?::VARCHAR[], ?::BIGINT[], ?::BIGINT[], ?::BIGINT[], "
                    f"?::TIMESTAMPTZ[]) ON CONFLICT (fact_id) DO UPDATE SET {_REPLACED}",
                    [at, *totals_columns(totals)],
                )
            # The rest of the fold (the queue consumed, the cursor moved) as DuckDB writes it, in
            # this transaction.
            super().apply_fold((), exposures_through, folded, lookback, at)
