"""The entity graph's tables in a PostgreSQL authority: the follow's reads, the graph write applied
inside the write's audited transaction, and the graph reads.

The statements are the DuckDB adapter's (``DuckDBGraph``), but for the words PostgreSQL says its
own way: list membership (``= ANY``), the latest state of facts (``DISTINCT ON``), and a list of
(subject, relation) pairs (two parallel arrays). No process keeps a copy of the links: ``linked``
asks the database (one indexed probe), since another replica may have linked a fact since. The
follow's reads take no lock of their own: its caller holds the store's lock
(``session.graph``), the one every graph write takes, so they read one state of the graph.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any, Sequence

from ..duckdb.graph import DuckDBGraph
from ..duckdb.schema import COLS
from .connection import PgConnection


class PgGraph(DuckDBGraph):
    """``GraphStore`` over the authority's pool."""

    _in = "{} = ANY(?::text[])"
    _latest_of = (
        f"SELECT DISTINCT ON (fact_id) {COLS} FROM memory_versions WHERE fact_id = ANY(?::text[]) "
        "ORDER BY fact_id, version DESC"
    )

    def __init__(self, db: PgConnection) -> None:
        super().__init__(db)  # type: ignore[arg-type]  # the same reads; no link cache is kept

    def linked(self, fact_ids: Sequence[str]) -> bool:
        if not fact_ids:
            return False
        return bool(
            self._db.one("SELECT EXISTS (SELECT 1 FROM graph_links WHERE fact_id = ANY(?::text[]))", [list(fact_ids)])
        )

    def _forget_cache(self) -> None:
        pass  # nothing kept

    def _reads(self) -> AbstractContextManager[Any]:
        return nullcontext()

    def _subjects_or_groups(self, subjects: list[str], pairs: list[tuple[str, str]]) -> tuple[str, list[Any]]:
        where = (
            "((ended_at IS NULL AND subject = ANY(?::text[])) OR EXISTS (SELECT 1 FROM "
            "unnest(?::text[], ?::text[]) AS p(s, r) WHERE p.s = t.subject AND p.r = t.relation))"
        )
        return where, [subjects, [p[0] for p in pairs], [p[1] for p in pairs]]
