"""Store-wide invariants the platform checks (a mixin of ``DuckDBStore``): every table has a
known role, and no row is reachable from another tenant than its own."""

from __future__ import annotations

from typing import Any

# Every table and view of the home, by role: what it holds and who may rebuild it.
TABLE_CLASSES = {
    "memory_versions": "authoritative: the append-only version log",
    "memory_heads": "view: each key's newest version",
    "audit_log": "audit: hash-chained, hash-only rows",
    "audit_head": "audit: the chain's head",
    "meta": "settings: schema version, watermarks, markers",
    "write_config": "settings: tenant write settings",
    "ontologies": "settings: tenant ontologies (versioned)",
    "graph_entities": "projection: entity graph",
    "graph_triples": "projection: entity graph",
    "graph_links": "projection: entity graph (row links)",
    "projection_failures": "queue: index writes to repair",
    "extraction_queue": "queue: deferred extraction",
    "resolver_marks": "queue: conflict-resolver marks",
    "resolver_records": "records: resolver actions",
    "snapshots_restored": "records: snapshot restores",
    "llm_spend": "records: model spend",
    "erasures": "records: tenant erasure state",
}


class InvariantChecks:
    def unclassified_tables(self) -> list[str]:
        names = [
            r[0]
            for r in self._rows(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1", []
            )
        ]
        return [n for n in names if n not in TABLE_CLASSES]

    def cross_tenant_rows(self) -> list[dict[str, Any]]:
        """Rows reachable across tenants: a version written by another tenant's run, a tenant-scope
        row owned by another tenant, a graph link to a fact of another namespace."""
        problems = self.query(
            "SELECT 'version written by another tenant' AS problem, tenant, scope, owner_id, key FROM memory_versions "
            "WHERE scope <> 'global' AND json_extract_string(attrs, '$.prov_tenant') <> tenant "
            "UNION ALL SELECT 'tenant-scope row owned by another tenant', tenant, scope, owner_id, key "
            "FROM memory_versions WHERE scope = 'tenant' AND owner_id <> tenant "
            "UNION ALL SELECT 'graph link to another namespace', l.tenant, l.scope, l.owner_id, l.key "
            "FROM graph_links l "
            "JOIN memory_versions v ON v.fact_id = l.fact_id WHERE v.tenant <> l.tenant OR v.scope <> l.scope "
            "OR v.owner_id <> l.owner_id LIMIT 50"
        )
        return problems
