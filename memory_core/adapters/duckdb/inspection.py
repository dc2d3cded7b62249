"""What the platform reads about a store, by name: counts and summaries for reports, the
invariants the asset checks assert (every table has a known role, no row reachable from another
tenant, no overlapping live intervals), the catalog a reviewer picks a key from, a tenant's
report, and the platform's markers. Assets and notebooks read these; none of them writes SQL."""

from __future__ import annotations

from typing import Any

from ...model import VISIBLE_STATUSES
from .connection import DuckDBConnection
from .erasure_rules import ERASURE_RULES
from .schema import LATEST

# Every table and view of the home, by role: what it holds and who may rebuild it.
TABLE_CLASSES = {
    "memory_versions": "authoritative: the append-only version log",
    "memory_heads": "view: each key's newest version",
    "audit_log": "audit: hash-chained, hash-only rows",
    "audit_head": "audit: the chain's head, signed with the home's key",
    "audit_digests": "audit: digests of the rows each write touched (bound by the chain)",
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
    "erasure_requests": "records: erasure sagas, one version per checkpoint (targets by id, no content)",
    "webhooks": "access: change webhooks per tenant (versioned; the signing secret)",
    "webhook_outbox": "queue: change events to deliver (ids and the identity tuple, no values)",
    "webhook_deliveries": "records: every delivery attempt (event ids and counters)",
    "api_keys": "access: the memory service's API keys (secrets hashed)",
    "state_changes": "substrate: typed state-change events, one per write (hash-only diffs)",
    "lens_contracts": "substrate: lens contracts (versioned)",
    "lens_preferences": "substrate: lens preferences (versioned)",
    "lens_assignments": "substrate: which consumer wears which lens (a log)",
    "permission_groups": "substrate: named capability sets lenses name (versioned)",
    "frames": "substrate: task frames (versioned)",
    "decision_traces": "substrate: decision traces, act / wait / escalate / no_op (versioned)",
    "interactions": "records: who asked what through which lenses, and retrieval feedback",
    "receipts": "records: signed disclosure receipts (ids and hashes, no values)",
    "consolidation_runs": "records: consolidation runs (counts, no values)",
    "consolidation_clusters": "records: each consolidation cluster's outcome (fact ids, the summary's key)",
    "belief_sources": "lineage: the rows that support a fact (turns and chunks it was extracted from, rows merged)",
    "session_summaries": "derived: a digest per conversation session, rebuilt when its kept turns change",
    "entity_communities": "derived: entity communities per namespace, rebuilt from the graph when it changes",
    "observe_sessions": "queue: crystallized observation sessions awaiting (or done with) extraction",
    "profile_schemas": "settings: structured-profile schemas per namespace (versioned; the profiles are memory rows)",
    "resolver_pauses": "queue: conflict-resolver namespace pauses (the refusal, until when)",
    "dream_proposals": "queue: Dreams proposals awaiting approval, one row per status change (versioned)",
    "reflect_cursors": "queue: each reflect phase's position in a tenant's event stream",
    "reflect_inputs": "records: the inputs the reflect pipeline read (reduced, then archived)",
    "reflect_claims": "derived: atomic claims the reflect pipeline read, with connections, plan and verdict",
    "usage_exposures": "queue: searches' exposures (fact ids, counts) waiting for the usage fold",
    "usage_folded": "queue: the interactions the usage fold read lately (ids; the newest is its cursor)",
    "learnings_queue": "queue: rules said about an agent, awaiting review, one row per status change (versioned)",
    "learnings_supporters": "records: who stated each learning's rule (the identity tuple, their quote)",
    "usage_totals": "derived: per-fact exposures, recalls and negative feedback, folded from the records",
    "categories": "settings: each namespace's category taxonomy (versioned)",
    "category_links": "records: which rows (by key) carry which category, assigned or rescinded (a log)",
    "memory_links": "records: operator edges between two rows (by fact id), linked or unlinked (a log)",
    "namespace_states": "records: namespaces soft-deleted and registered again (a log; no content)",
}


class DuckDBInspection:
    """``Inspection`` over the home's connection."""

    # What an engine says its own way: each fact's newest version, a JSON attribute.
    _latest = LATEST
    _prov_tenant = "json_extract_string(attrs, '$.prov_tenant')"

    def __init__(self, db: DuckDBConnection) -> None:
        self._db = db

    def unclassified_tables(self) -> list[str]:
        """Tables without a role, or without an erasure rule (``erasure_rules``): an erasure's
        census could not say it looked there."""
        sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1"
        return [r[0] for r in self._db.rows(sql) if r[0] not in TABLE_CLASSES or r[0] not in ERASURE_RULES]

    def cross_tenant_rows(self) -> list[dict[str, Any]]:
        """Rows reachable across tenants: a version written by another tenant's run, a tenant-scope
        row owned by another tenant, a graph link to a fact of another namespace."""
        return self._db.dicts(
            "SELECT 'version written by another tenant' AS problem, tenant, scope, owner_id, key FROM memory_versions "
            f"WHERE scope <> 'global' AND {self._prov_tenant} <> tenant "
            "UNION ALL SELECT 'tenant-scope row owned by another tenant', tenant, scope, owner_id, key "
            "FROM memory_versions WHERE scope = 'tenant' AND owner_id <> tenant "
            "UNION ALL SELECT 'graph link to another namespace', l.tenant, l.scope, l.owner_id, l.key "
            "FROM graph_links l "
            "JOIN memory_versions v ON v.fact_id = l.fact_id WHERE v.tenant <> l.tenant OR v.scope <> l.scope "
            "OR v.owner_id <> l.owner_id LIMIT 50"
        )

    def overlapping_intervals(self) -> list[dict[str, Any]]:
        """Every pair of visible facts of one key whose valid intervals overlap (should be none)."""
        latest = self._latest.format(cols="*", where="TRUE")
        sql = f"""
        WITH latest AS ({latest}),
        vis AS (SELECT * FROM latest WHERE status IN {VISIBLE_STATUSES!r}
                AND (invalid_at IS NULL OR invalid_at > valid_at))
        SELECT a.tenant, a.scope, a.owner_id, a.key, a.fact_id, b.fact_id
        FROM vis a JOIN vis b ON a.tenant = b.tenant AND a.scope = b.scope AND a.owner_id = b.owner_id
            AND a.key = b.key AND a.fact_id < b.fact_id
        WHERE a.valid_at < coalesce(b.invalid_at, 'infinity'::TIMESTAMPTZ)
          AND b.valid_at < coalesce(a.invalid_at, 'infinity'::TIMESTAMPTZ)
        ORDER BY 1, 2, 3, 4
        """
        cols = ("tenant", "scope", "owner_id", "key", "fact_id", "other_fact_id")
        return [dict(zip(cols, r)) for r in self._db.rows(sql)]

    def table_counts(self) -> dict[str, int]:
        return {
            table: int(self._db.one(f"SELECT count(*) FROM {table}"))
            for table in ("memory_versions", "memory_heads", "audit_log", "projection_failures")
        }

    def summary(self) -> dict[str, Any]:
        """Counts a report or an asset prints: tables, namespaces, ops, current states."""
        latest = self._latest.format(cols="status", where="TRUE")
        tables = self.table_counts()
        # One scan of the heads view for all four counts (each view scan is a window query).
        tenants, owners, keys, tombstoned = self._db.rows(
            "SELECT count(DISTINCT tenant), count(DISTINCT (tenant, scope, owner_id)), count(*), "
            "count(*) FILTER (WHERE status = 'tombstoned') FROM memory_heads"
        )[0]
        return {
            "tables": tables,
            "tenants": int(tenants),
            "owners": int(owners),
            "keys": int(keys),
            "tombstoned_keys": int(tombstoned),
            "versions_by_op": dict(self._db.rows("SELECT op, count(*) FROM memory_versions GROUP BY op ORDER BY op")),
            "facts_by_status": dict(
                self._db.rows(f"SELECT status, count(*) FROM ({latest}) l GROUP BY status ORDER BY status")
            ),
        }

    def catalog(self) -> list[tuple[str, str, str, str]]:
        """Every (tenant, scope, owner_id, key) the store holds, sorted: what a reviewer picks from."""
        return [
            tuple(r) for r in self._db.rows("SELECT tenant, scope, owner_id, key FROM memory_heads ORDER BY 1, 2, 3, 4")
        ]

    def tenants(self) -> list[str]:
        return [r[0] for r in self._db.rows("SELECT DISTINCT tenant FROM memory_versions ORDER BY 1")]

    def tenant_report(self, tenant: str) -> dict[str, Any]:
        """One tenant's counts: facts by status (latest state), owners and keys per scope, graph
        triples, queued extraction jobs, owed resolver marks."""
        latest = self._latest.format(cols="status", where="tenant = ?")
        status = {
            s: int(n) for s, n in self._db.rows(f"SELECT status, count(*) FROM ({latest}) l GROUP BY status", [tenant])
        }
        scopes = self._db.dicts(
            "SELECT scope, count(DISTINCT owner_id) AS owners, count(DISTINCT key) AS keys FROM memory_versions "
            "WHERE tenant = ? GROUP BY scope ORDER BY scope",
            [tenant],
        )
        return {
            "facts_by_status": status,
            "scopes": scopes,
            "graph_triples": int(self._db.one("SELECT count(*) FROM graph_triples WHERE tenant = ?", [tenant])),
            "extraction_queued": int(
                self._db.one(
                    "SELECT count(*) FROM extraction_queue WHERE tenant = ? AND status IN ('pending', 'running')",
                    [tenant],
                )
            ),
            "resolver_owed": int(
                self._db.one("SELECT count(*) FROM resolver_marks WHERE tenant = ? AND mark = 'owed'", [tenant])
            ),
        }

    def marker(self, name: str) -> str | None:
        """A named note the platform keeps about the store (a corpus loaded, ...)."""
        return self._db.meta(f"marker:{name}")

    def set_marker(self, name: str, value: str) -> None:
        with self._db.tx() as con:
            self._db.set_meta(con, f"marker:{name}", value)

    def tables(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, sorted: two equal answers mean nothing was written between."""
        names = [r[0] for r in self._db.rows("SELECT table_name FROM information_schema.tables ORDER BY 1")]
        return {t: sorted(map(tuple, self._db.rows(f"SELECT * FROM {t}")), key=repr) for t in names}
