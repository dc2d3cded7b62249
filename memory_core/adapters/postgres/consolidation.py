"""``ConsolidationStore`` over a PostgreSQL authority: ``consolidation_runs`` (one row a run),
``consolidation_clusters`` (one row a cluster) and ``belief_sources`` (a summary's lineage).

The DuckDB adapter's statements are plain SQL but for list membership (``= ANY``), and each
write is one transaction of rows no other writer touches (a run's id is new), so the class is the
DuckDB one over the authority's pool."""

from __future__ import annotations

from ..duckdb.consolidation import DuckDBConsolidation
from .connection import PgConnection


class PgConsolidation(DuckDBConsolidation):
    """``ConsolidationStore`` over the authority's pool."""

    _in = "{} = ANY(?)"

    def __init__(self, db: PgConnection) -> None:
        super().__init__(db)  # type: ignore[arg-type]  # the same reads and transactions
