"""``LineageStore`` over a PostgreSQL authority: ``belief_sources`` and ``session_summaries``.

The DuckDB adapter's statements are plain SQL but for list membership (``= ANY``); a summary's
replacement is one transaction, and a unique index on (namespace, session) keeps one row each
(``postgres/schema.py``), so the class is the DuckDB one over the authority's pool."""

from __future__ import annotations

from ..duckdb.lineage import DuckDBLineage
from .connection import PgConnection


class PgLineage(DuckDBLineage):
    """``LineageStore`` over the authority's pool."""

    _in = "{} = ANY(?)"

    def __init__(self, db: PgConnection) -> None:
        super().__init__(db)  # type: ignore[arg-type]  # the same reads and transactions
