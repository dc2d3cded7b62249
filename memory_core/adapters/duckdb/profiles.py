"""``ProfileSchemaStore`` over the home's DuckDB file: ``profile_schemas``, one row per version of
a namespace's schema. A setting: each version is audited and bound by the audit chain."""

from __future__ import annotations

import dataclasses
import json

from ...audit import AuditEntry
from ...identity import Namespace
from ...profiles import ProfileSchemaInfo, canonical
from .audit_chain import AuditChain
from .connection import NS_WHERE, DuckDBConnection, ns_of, ns_params
from .schema import utc
from .schema_compounding import PROFILE_SCHEMA_COLUMNS

_COLS = ", ".join(PROFILE_SCHEMA_COLUMNS)


def _info(row) -> ProfileSchemaInfo:
    tenant, scope, owner, version, body, digest, actor, at = row
    return ProfileSchemaInfo(tenant, scope, owner, int(version), digest, json.loads(body), actor, utc(at))


class DuckDBProfiles:
    def __init__(self, db: DuckDBConnection, audit: AuditChain) -> None:
        self._db = db
        self._audit = audit

    def put_schema(self, schema: ProfileSchemaInfo, audit: AuditEntry) -> int:
        ns = [schema.tenant, schema.scope, schema.owner_id]
        with self._audit.transaction([audit]) as tx:
            found = tx.execute(f"SELECT coalesce(max(version), 0) FROM profile_schemas WHERE {NS_WHERE}", ns)
            version = int(found.fetchall()[0][0]) + 1
            stored = dataclasses.replace(schema, version=version)
            tx.execute(
                f"INSERT INTO profile_schemas ({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [*ns, version, canonical(stored.properties), stored.schema_hash, stored.actor, stored.set_at],
            )
            tx.added("profile_schemas", f"{NS_WHERE} AND version = ?", [*ns, version])
        return version

    def schema(self, namespace: Namespace) -> ProfileSchemaInfo | None:
        rows = self._db.rows(
            f"SELECT {_COLS} FROM profile_schemas WHERE {NS_WHERE} ORDER BY version DESC LIMIT 1", ns_params(namespace)
        )
        return _info(rows[0]) if rows else None

    def schema_versions(self, namespace: Namespace) -> list[ProfileSchemaInfo]:
        rows = self._db.rows(
            f"SELECT {_COLS} FROM profile_schemas WHERE {NS_WHERE} ORDER BY version", ns_params(namespace)
        )
        return [_info(r) for r in rows]

    def schema_namespaces(self) -> list[Namespace]:
        rows = self._db.rows("SELECT DISTINCT tenant, scope, owner_id FROM profile_schemas ORDER BY 1, 2, 3")
        return [ns_of(*r) for r in rows]
