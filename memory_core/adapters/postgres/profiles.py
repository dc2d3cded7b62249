"""``ProfileSchemaStore`` over a PostgreSQL authority: ``profile_schemas``, one row per version of
a namespace's schema, each version audited and bound by the audit chain.

The DuckDB adapter's statements are plain SQL that PostgreSQL runs as written, and its audited
transaction holds the authority's write lock (``PgAuditChain.transaction``), so the class is the
DuckDB one over the authority's pool: a namespace's next version is read and taken by one writer
at a time across replicas (and a unique index keeps it so)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..duckdb.profiles import DuckDBProfiles
from .connection import PgConnection

if TYPE_CHECKING:
    from .audit_chain import PgAuditChain


class PgProfiles(DuckDBProfiles):
    """``ProfileSchemaStore`` over the authority's pool."""

    def __init__(self, db: PgConnection, audit: PgAuditChain) -> None:
        super().__init__(db, audit)  # type: ignore[arg-type]  # the same reads and transactions
