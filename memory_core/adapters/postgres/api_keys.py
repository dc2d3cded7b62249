"""The memory service's API keys in a PostgreSQL authority: one row per key, the secret hashed,
every change audited and bound by the chain.

Adding, finding and listing are the DuckDB adapter's statements, which PostgreSQL runs as
written. Revoking differs: two replicas may revoke one key at once, so whether it is still
unrevoked is asked again under the audited transaction's write lock, and a revocation that lost
the race rolls back (no audit row) and answers False, as it would have one call later.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from ...audit import AuditEntry
from ..duckdb.api_keys import DuckDBApiKeys
from .connection import PgConnection

if TYPE_CHECKING:
    from .audit_chain import PgAuditChain


class _RevokedMeanwhile(Exception):
    """Rolls back a revocation another process made first."""


class PgApiKeys(DuckDBApiKeys):
    """``ApiKeyStore`` over the authority's pool."""

    def __init__(self, db: PgConnection, audit: PgAuditChain) -> None:
        super().__init__(db, audit)  # type: ignore[arg-type]  # the same reads and transactions

    def revoke(self, key_id: str, at: datetime, audit: AuditEntry) -> bool:
        """Mark the key revoked at ``at``; False when it is unknown or revoked already."""
        live = "key_id = ? AND revoked_at IS NULL"
        if not self._db.rows(f"SELECT 1 FROM api_keys WHERE {live}", [key_id]):
            return False
        try:
            with self._audit.transaction([audit]) as tx, tx.touching("api_keys", "key_id = ?", [key_id]):
                if not tx.execute(
                    f"UPDATE api_keys SET revoked_at = ? WHERE {live} RETURNING key_id", [at, key_id]
                ).fetchall():
                    raise _RevokedMeanwhile(key_id)
        except _RevokedMeanwhile:
            return False
        return True
