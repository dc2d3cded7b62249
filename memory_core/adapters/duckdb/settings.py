"""The tenant settings tables: write configuration and ontologies (versioned). Each change is
audited in its own transaction."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ...audit import AuditEntry
from .audit_chain import AuditChain
from .connection import DuckDBConnection


class DuckDBSettings:
    """``TenantSettingsStore`` over the home's connection."""

    def __init__(self, db: DuckDBConnection, audit: AuditChain) -> None:
        self._db = db
        self._audit = audit

    def write_configs(self, tenant: str) -> dict[str, dict[str, Any]]:
        """The tenant's stored write configuration: '' for the tenant, else one per memory type."""
        rows = self._db.rows("SELECT memory_type, config_json FROM write_config WHERE tenant = ?", [tenant])
        return {memory_type: json.loads(body) for memory_type, body in rows}

    def put_write_config(
        self, tenant: str, memory_type: str, config: dict[str, Any], at: datetime, audit: AuditEntry
    ) -> None:
        where = "tenant = ? AND memory_type = ?"
        with self._audit.transaction([audit]) as tx, tx.touching("write_config", where, [tenant, memory_type]):
            tx.execute(f"DELETE FROM write_config WHERE {where}", [tenant, memory_type])
            tx.execute(
                "INSERT INTO write_config VALUES (?, ?, ?, ?)",
                [tenant, memory_type, json.dumps(config, sort_keys=True), at],
            )

    def ontology(self, tenant: str) -> tuple[int, str] | None:
        """The tenant's newest ontology: (version, markdown)."""
        rows = self._db.rows(
            "SELECT version, markdown FROM ontologies WHERE tenant = ? ORDER BY version DESC LIMIT 1", [tenant]
        )
        return (int(rows[0][0]), rows[0][1]) if rows else None

    def put_ontology(self, tenant: str, markdown: str, sha256: str, at: datetime, actor: str, audit: AuditEntry) -> int:
        """Append a new version of the tenant's ontology (earlier versions are kept)."""
        with self._audit.transaction([audit]) as tx:
            found = tx.execute("SELECT coalesce(max(version), 0) FROM ontologies WHERE tenant = ?", [tenant]).fetchall()
            version = int(found[0][0]) + 1
            tx.execute(
                "INSERT INTO ontologies VALUES (?, ?, ?, ?, ?, ?)", [tenant, version, markdown, sha256, at, actor]
            )
            tx.added("ontologies", "tenant = ? AND version = ?", [tenant, version])
        return version
