"""The memory service's API keys: one row per key, the secret hashed; every change audited and
bound by the chain (a row edited outside the store breaks ``verify_audit``)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Sequence

from ...access import ApiKey
from ...audit import AuditEntry
from ...identity import Scope
from .audit_chain import AuditChain
from .connection import DuckDBConnection
from .schema import utc
from .schema_keys import API_KEY_COLUMNS

_COLS = ", ".join(API_KEY_COLUMNS)


def _scopes(text: str) -> frozenset[Scope]:
    return frozenset(Scope(s) for s in json.loads(text))


def _record(row: Sequence[Any]) -> ApiKey:
    r = dict(zip(API_KEY_COLUMNS, row))
    return ApiKey(
        key_id=r["key_id"],
        secret_sha256=r["secret_sha256"],
        tenant=r["tenant"],
        user=r["user_id"],
        agent=r["agent"],
        memory_scopes=_scopes(r["memory_scopes"]),
        sql_scopes=_scopes(r["sql_scopes"]),
        admin=bool(r["admin"]),
        label=r["label"],
        created_at=utc(r["created_at"]),
        expires_at=utc(r["expires_at"]),
        revoked_at=utc(r["revoked_at"]),
        created_by=r["created_by"],
    )


class DuckDBApiKeys:
    """``ApiKeyStore`` over the home's connection."""

    def __init__(self, db: DuckDBConnection, audit: AuditChain) -> None:
        self._db = db
        self._audit = audit

    def add(self, key: ApiKey, audit: AuditEntry) -> None:
        marks = ", ".join("?" * len(API_KEY_COLUMNS))
        with self._audit.transaction([audit]) as tx:
            tx.execute(
                f"INSERT INTO api_keys ({_COLS}) VALUES ({marks})",
                [
                    key.key_id,
                    key.secret_sha256,
                    key.tenant,
                    key.user,
                    key.agent,
                    json.dumps(sorted(s.value for s in key.memory_scopes)),
                    json.dumps(sorted(s.value for s in key.sql_scopes)),
                    key.admin,
                    key.label,
                    key.created_at,
                    key.expires_at,
                    key.revoked_at,
                    key.created_by,
                ],
            )
            tx.added("api_keys", "key_id = ?", [key.key_id])

    def find(self, key_id: str) -> ApiKey | None:
        rows = self._db.rows(f"SELECT {_COLS} FROM api_keys WHERE key_id = ?", [key_id])
        return _record(rows[0]) if rows else None

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        where, params = ("WHERE tenant = ?", [tenant]) if tenant is not None else ("", [])
        rows = self._db.rows(f"SELECT {_COLS} FROM api_keys {where} ORDER BY tenant, created_at, key_id", params)
        return [_record(r) for r in rows]

    def revoke(self, key_id: str, at: datetime, audit: AuditEntry) -> bool:
        """Mark the key revoked at ``at``; False when it is unknown or revoked already."""
        if not self._db.rows("SELECT 1 FROM api_keys WHERE key_id = ? AND revoked_at IS NULL", [key_id]):
            return False
        with self._audit.transaction([audit]) as tx, tx.touching("api_keys", "key_id = ?", [key_id]):
            tx.execute("UPDATE api_keys SET revoked_at = ? WHERE key_id = ?", [at, key_id])
        return True
