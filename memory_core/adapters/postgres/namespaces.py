"""``NamespaceStore`` over a PostgreSQL authority: the DuckDB adapter's statements run as written;
other replicas delete and register too, so the deleted set is read anew, never kept."""

from __future__ import annotations

from ..duckdb.namespaces import DuckDBNamespaces
from .connection import PgConnection


class _Fresh:
    """Where the DuckDB adapter keeps its copy: here each read asks the authority."""

    def __init__(self, load) -> None:
        self.get = load

    def drop(self) -> None:
        pass


class PgNamespaces(DuckDBNamespaces):
    def __init__(self, db: PgConnection) -> None:
        self._db = db  # type: ignore[assignment]  # the same reads and transactions
        self._deleted = _Fresh(self._load)
