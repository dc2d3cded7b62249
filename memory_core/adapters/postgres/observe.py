"""``ObserveStore`` over a PostgreSQL authority: the DuckDB adapter's statements, which
PostgreSQL runs as written, over the authority's pool. A claim's conditional ``UPDATE`` waits on
a row another replica is claiming and then finds it no longer ready, so a session is replayed by
one worker; a unique index keeps one row per session (``schema.INDEXES``)."""

from __future__ import annotations

from ..duckdb.observe import DuckDBObserve
from .connection import PgConnection


class PgObserve(DuckDBObserve):
    """``ObserveStore`` over the authority's pool."""

    _on_conflict = " ON CONFLICT DO NOTHING"  # two replicas crystallizing at once: one row

    def __init__(self, db: PgConnection) -> None:
        super().__init__(db)  # type: ignore[arg-type]  # the same reads and transactions
