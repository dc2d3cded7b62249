"""The tenant settings tables in a PostgreSQL authority: write configuration and ontologies
(versioned), each change audited in its own transaction.

The DuckDB adapter's statements are plain SQL that PostgreSQL runs as written, and its audited
transaction holds the authority's write lock (``PgAuditChain.transaction``), so the class is the
DuckDB one over the authority's pool: an ontology's next version is read and written under that
lock, so two replicas never number one version twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..duckdb.settings import DuckDBSettings
from .connection import PgConnection

if TYPE_CHECKING:
    from .audit_chain import PgAuditChain


class PgSettings(DuckDBSettings):
    """``TenantSettingsStore`` over the authority's pool."""

    def __init__(self, db: PgConnection, audit: PgAuditChain) -> None:
        super().__init__(db, audit)  # type: ignore[arg-type]  # the same reads and transactions
