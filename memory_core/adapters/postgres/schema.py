"""The PostgreSQL schema of an authority and its migrations.

The tables are the DuckDB home's, column for column: the DDL is the DuckDB adapter's, with the
one type PostgreSQL spells differently translated (``DOUBLE``). So a row means the same on both
engines and a port can be checked against either. PostgreSQL adds what several writers need
and one embedded writer did not: indexes for the point reads (a DuckDB home keeps the heads in
memory instead), unique sequence numbers, and the heads view written without ``QUALIFY``.

Versions count on their own (``PG_SCHEMA_VERSION``); a migration runs in one transaction under
an advisory lock, so replicas starting together migrate once.
"""

from __future__ import annotations

import re

from ..duckdb.schema import DDL
from ..duckdb.schema_compounding import COMPOUNDING_DDL
from ..duckdb.schema_erasure import ERASURE_DDL
from ..duckdb.schema_keys import API_KEYS_DDL
from ..duckdb.schema_substrate import SUBSTRATE_DDL
from ..duckdb.schema_surface import SURFACE_DDLS
from .connection import MIGRATE_LOCK, PgConnection, Tx

PG_SCHEMA_VERSION = "2"

_TYPES = ((re.compile(r"\bDOUBLE\b(?! PRECISION)"), "DOUBLE PRECISION"),)


def translated(duckdb_ddl: str) -> list[str]:
    """The DuckDB DDL as PostgreSQL statements, one per element."""
    duckdb_ddl = re.sub(r"--[^\n]*", "", duckdb_ddl)  # comments may hold a ';'
    for pattern, replacement in _TYPES:
        duckdb_ddl = pattern.sub(replacement, duckdb_ddl)
    return [s.strip() for s in duckdb_ddl.split(";") if s.strip()]


# What several writers read by (a DuckDB home answers these from memory or by scanning).
INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS memory_versions_seq ON memory_versions (seq)",
    "CREATE UNIQUE INDEX IF NOT EXISTS memory_versions_id ON memory_versions (id)",
    "CREATE INDEX IF NOT EXISTS memory_versions_key ON memory_versions (tenant, scope, owner_id, key, version)",
    "CREATE INDEX IF NOT EXISTS memory_versions_fact ON memory_versions (fact_id, version)",
    "CREATE INDEX IF NOT EXISTS memory_versions_audit ON memory_versions (audit_seq)",
    "CREATE UNIQUE INDEX IF NOT EXISTS audit_log_seq ON audit_log (seq)",
    "CREATE INDEX IF NOT EXISTS audit_digests_seq ON audit_digests (seq)",
    "CREATE UNIQUE INDEX IF NOT EXISTS state_changes_seq ON state_changes (seq)",
    "CREATE INDEX IF NOT EXISTS extraction_queue_claim ON extraction_queue (status, next_attempt_at)",
    "CREATE UNIQUE INDEX IF NOT EXISTS extraction_queue_id ON extraction_queue (queue_id)",
    "CREATE INDEX IF NOT EXISTS resolver_marks_fact ON resolver_marks (fact_id)",
    "CREATE INDEX IF NOT EXISTS graph_links_fact ON graph_links (fact_id)",
    "CREATE INDEX IF NOT EXISTS graph_triples_subject ON graph_triples (tenant, scope, owner_id, subject)",
    # The resolver ledger's upserts (one row per key, whichever replica writes it) and the counts
    # every search reads.
    "CREATE UNIQUE INDEX IF NOT EXISTS llm_spend_key ON llm_spend (tenant, scope, owner_id, day, purpose)",
    "CREATE UNIQUE INDEX IF NOT EXISTS resolver_pauses_ns ON resolver_pauses (tenant, scope, owner_id)",
    "CREATE UNIQUE INDEX IF NOT EXISTS erasures_tenant ON erasures (tenant)",
    "CREATE INDEX IF NOT EXISTS extraction_queue_unfinished ON extraction_queue (tenant, scope, owner_id) "
    "WHERE status IN ('pending', 'running')",
    # Each replica keeps its own index, so a failed index write is its replica's to repair (the
    # one column a PostgreSQL table has beyond its DuckDB twin; see ``projections.PgProjections``).
    "ALTER TABLE projection_failures ADD COLUMN IF NOT EXISTS replica VARCHAR",
    "CREATE INDEX IF NOT EXISTS projection_failures_open ON projection_failures (replica, tenant, scope, owner_id) "
    "WHERE resolved_at IS NULL",
    # Memory that compounds: one row per key below, which the upserts of several writers rely on.
    "CREATE UNIQUE INDEX IF NOT EXISTS usage_totals_fact ON usage_totals (fact_id)",
    "CREATE UNIQUE INDEX IF NOT EXISTS usage_exposures_seq ON usage_exposures (seq)",
    "CREATE UNIQUE INDEX IF NOT EXISTS usage_folded_id ON usage_folded (tenant, interaction_id)",
    "CREATE UNIQUE INDEX IF NOT EXISTS reflect_cursors_phase ON reflect_cursors (tenant, phase)",
    "CREATE UNIQUE INDEX IF NOT EXISTS reflect_claims_id ON reflect_claims (claim_id)",
    "CREATE INDEX IF NOT EXISTS reflect_claims_seq ON reflect_claims (tenant, source_seq)",
    "CREATE UNIQUE INDEX IF NOT EXISTS reflect_inputs_ref ON reflect_inputs (tenant, source_ref)",
    "CREATE UNIQUE INDEX IF NOT EXISTS entity_communities_ns ON entity_communities (tenant, scope, owner_id)",
    "CREATE INDEX IF NOT EXISTS belief_sources_fact ON belief_sources (tenant, scope, owner_id, fact_id)",
    "CREATE UNIQUE INDEX IF NOT EXISTS session_summaries_ns ON session_summaries (tenant, scope, owner_id, session)",
    "CREATE UNIQUE INDEX IF NOT EXISTS profile_schemas_version ON profile_schemas (tenant, scope, owner_id, version)",
    "CREATE UNIQUE INDEX IF NOT EXISTS namespace_states_seq ON namespace_states (tenant, scope, owner_id, seq)",
    "CREATE UNIQUE INDEX IF NOT EXISTS dream_proposals_version ON dream_proposals (tenant, proposal_id, version)",
    "CREATE UNIQUE INDEX IF NOT EXISTS learnings_queue_version ON learnings_queue (tenant, learning_id, version)",
    "CREATE INDEX IF NOT EXISTS learnings_supporters_learning ON learnings_supporters (tenant, learning_id)",
    # observation capture: one row per crystallized session, whichever replica crystallizes it
    "CREATE UNIQUE INDEX IF NOT EXISTS observe_sessions_ns ON observe_sessions (tenant, scope, owner_id, session)",
    # Categories and links (schema_categories): one version of a name, a pair or an edge each.
    "CREATE UNIQUE INDEX IF NOT EXISTS categories_version ON categories (tenant, scope, owner_id, name, version)",
    "CREATE UNIQUE INDEX IF NOT EXISTS category_links_version "
    "ON category_links (tenant, scope, owner_id, key, category, version)",
    "CREATE UNIQUE INDEX IF NOT EXISTS memory_links_version "
    "ON memory_links (tenant, scope, owner_id, fact_id, other_fact_id, relation, version)",
    "CREATE INDEX IF NOT EXISTS consolidation_clusters_run ON consolidation_clusters (run_id, cluster)",
    # Webhooks: the outbox numbered by several writers (a seq twice is an error, never a
    # duplicate), a claim's row lock and its look at the pair's attempts; the holds every write
    # reads; the substrate's point reads.
    "CREATE UNIQUE INDEX IF NOT EXISTS webhook_outbox_seq ON webhook_outbox (seq)",
    "CREATE INDEX IF NOT EXISTS webhook_outbox_pair ON webhook_outbox (event_id, webhook_id)",
    "CREATE INDEX IF NOT EXISTS webhook_deliveries_pair ON webhook_deliveries (event_id, webhook_id)",
    "CREATE INDEX IF NOT EXISTS erasure_requests_id ON erasure_requests (request_id, version)",
    "CREATE INDEX IF NOT EXISTS frames_id ON frames (tenant, frame_id, version)",
    "CREATE INDEX IF NOT EXISTS interactions_frame ON interactions (tenant, frame_id)",
    "CREATE INDEX IF NOT EXISTS state_changes_frame ON state_changes (tenant, frame_id)",
)

HEADS_VIEW = """
CREATE OR REPLACE VIEW memory_heads AS
SELECT DISTINCT ON (tenant, scope, owner_id, key)
    tenant, scope, owner_id, key, version, status, id AS head_version_id, created_at AS updated_at
FROM memory_versions
ORDER BY tenant, scope, owner_id, key, version DESC
"""

# An audit row's key is hashed as a commitment from the first seq on (see the DuckDB migrations,
# v9); a PostgreSQL authority is born with it.
COMMIT_FLOOR = "audit_key_commit_from"


def stored_schema_version(db: PgConnection) -> str | None:
    if not db.one(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = 'meta'", [db.schema]
    ):
        return None
    return db.meta("schema_version")


def migrate(db: PgConnection) -> None:
    """Create the schema (and its tables) or bring it to the current version, once across
    processes."""
    with db.tx() as tx:
        tx.execute("SELECT pg_advisory_xact_lock(hashtext(?), ?)", [db.schema, MIGRATE_LOCK])
        tx.execute(f'CREATE SCHEMA IF NOT EXISTS "{db.schema}"')
        stored = stored_schema_version(db)
        if stored == PG_SCHEMA_VERSION:
            return
        _create(tx, born=stored is None)


def _create(tx: Tx, *, born: bool) -> None:
    """Every table, index and view, each created only where missing: an older authority (v1)
    gains the surface tables of v2 and keeps its commit floor."""
    for ddl in (DDL, API_KEYS_DDL, SUBSTRATE_DDL, ERASURE_DDL, COMPOUNDING_DDL, *SURFACE_DDLS):
        for statement in translated(ddl):
            tx.execute(statement)
    for statement in INDEXES:
        tx.execute(statement)
    tx.execute(HEADS_VIEW)
    if born:
        PgConnection.set_meta(tx, COMMIT_FLOOR, "1")
    PgConnection.set_meta(tx, "schema_version", PG_SCHEMA_VERSION)
