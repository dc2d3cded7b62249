"""The tables of schema v10: memory that compounds. Consolidation's runs and each cluster's
outcome, the lineage from a summary to the rows it was written from, and the conflict
resolver's namespace pauses (a provider that refused three rows of a namespace in a row)."""

from __future__ import annotations

# profile_schemas' columns in order (its audit-ledger digest names them: audit_ledger.py).
PROFILE_SCHEMA_COLUMNS = ("tenant", "scope", "owner_id", "version", "schema_json", "schema_hash", "actor", "set_at")

COMPOUNDING_DDL = """
CREATE TABLE IF NOT EXISTS consolidation_runs (
    run_id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    actor VARCHAR NOT NULL, merger VARCHAR NOT NULL, started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ NOT NULL, live_before INTEGER NOT NULL, live_after INTEGER NOT NULL,
    clusters INTEGER NOT NULL, merged INTEGER NOT NULL, failed INTEGER NOT NULL, undone_at TIMESTAMPTZ
);
CREATE TABLE IF NOT EXISTS consolidation_clusters (
    run_id VARCHAR NOT NULL, cluster INTEGER NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL,
    owner_id VARCHAR NOT NULL, outcome VARCHAR NOT NULL, summary_key VARCHAR, summary_fact VARCHAR,
    source_facts VARCHAR NOT NULL, left_live VARCHAR NOT NULL, detail VARCHAR
);
CREATE TABLE IF NOT EXISTS belief_sources (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, fact_id VARCHAR NOT NULL,
    key VARCHAR NOT NULL, source_fact VARCHAR NOT NULL, source_key VARCHAR NOT NULL,
    support_type VARCHAR NOT NULL, run_id VARCHAR NOT NULL, recorded_at TIMESTAMPTZ NOT NULL
);

-- The conflict resolver's namespace pauses: the same refusal row after row in a namespace is
-- the request's fault, so its rows wait (owed) until ``until``; one row per namespace.
CREATE TABLE IF NOT EXISTS resolver_pauses (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    paused_at TIMESTAMPTZ NOT NULL, until TIMESTAMPTZ NOT NULL, reason VARCHAR NOT NULL
);

-- Entity communities (the entity_communities worker, docs/workers.md): one row per namespace,
-- derived from its current graph (named by ``graph_digest``) and rebuilt when that changes.
CREATE TABLE IF NOT EXISTS entity_communities (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    graph_digest VARCHAR NOT NULL, algorithm VARCHAR NOT NULL, entities INTEGER NOT NULL,
    edges INTEGER NOT NULL, modularity DOUBLE NOT NULL, communities VARCHAR NOT NULL,
    computed_at TIMESTAMPTZ NOT NULL
);

-- Structured profiles (the structured_profile worker, docs/workers.md): each namespace's profile
-- schema, one row per version (a tenant's applies to each of its users, a user's own replaces it
-- for them). Property names, types, descriptions and what feeds them: no memory content; the
-- profiles themselves are memory rows (memory_type profile).
CREATE TABLE IF NOT EXISTS profile_schemas (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, version INTEGER NOT NULL,
    schema_json VARCHAR NOT NULL, schema_hash VARCHAR NOT NULL, actor VARCHAR NOT NULL, set_at TIMESTAMPTZ NOT NULL
);

-- Dreams (docs/dreams.md): the approval queue of a pass's proposals, one row per version (a new
-- proposal is version 1; each status change, pending -> applied | rejected | stale, appends
-- one). ``dedup`` names the kind and the targets as read: the same proposal is made once.
CREATE TABLE IF NOT EXISTS dream_proposals (
    proposal_id VARCHAR NOT NULL, version INTEGER NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL,
    owner_id VARCHAR NOT NULL, kind VARCHAR NOT NULL, status VARCHAR NOT NULL, dedup VARCHAR NOT NULL,
    targets VARCHAR NOT NULL, change VARCHAR NOT NULL, rationale VARCHAR NOT NULL, confidence DOUBLE NOT NULL,
    pass_id VARCHAR NOT NULL, decision_id VARCHAR NOT NULL, window_start TIMESTAMPTZ NOT NULL,
    window_end TIMESTAMPTZ NOT NULL, recorded_at TIMESTAMPTZ NOT NULL, actor VARCHAR NOT NULL, note VARCHAR,
    applied VARCHAR NOT NULL
);

-- The reflect pipeline (docs/reflect.md). Each phase's position in a tenant's event stream; the
-- inputs reduce read (reduced -> archived); the claims it staged, one row each, updated as the
-- later phases decide (staged -> connected -> planned -> applying -> written | rejected). A
-- plan's action and why are the pipeline's own words, kept apart from its key and value (content).
CREATE TABLE IF NOT EXISTS reflect_cursors (
    tenant VARCHAR NOT NULL, phase VARCHAR NOT NULL, position BIGINT NOT NULL, updated_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS reflect_inputs (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, source_ref VARCHAR NOT NULL,
    source_kind VARCHAR NOT NULL, source_key VARCHAR NOT NULL, source_seq BIGINT NOT NULL, claims INTEGER NOT NULL,
    status VARCHAR NOT NULL, reduced_at TIMESTAMPTZ NOT NULL, archived_at TIMESTAMPTZ
);
CREATE TABLE IF NOT EXISTS reflect_claims (
    claim_id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    source_ref VARCHAR NOT NULL, source_kind VARCHAR NOT NULL, source_seq BIGINT NOT NULL,
    source_fact VARCHAR NOT NULL, source_key VARCHAR NOT NULL, ordinal INTEGER NOT NULL, text VARCHAR NOT NULL,
    key VARCHAR NOT NULL, memory_type VARCHAR NOT NULL, subject VARCHAR, observed_at TIMESTAMPTZ NOT NULL,
    relations VARCHAR NOT NULL, whole BOOLEAN NOT NULL, status VARCHAR NOT NULL, connections VARCHAR NOT NULL,
    plan VARCHAR, plan_action VARCHAR, plan_why VARCHAR, reason VARCHAR, fact_id VARCHAR, fact_key VARCHAR,
    outcome VARCHAR, applying_from BIGINT, archived BOOLEAN NOT NULL, staged_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

-- The usage fold (docs/workers.md, usage_fold). Searches' exposures, counted in memory and flushed
-- here until a fold consumes them; the interactions folded lately (the newest is the fold's cursor;
-- the ids within its lookback keep a late commit from counting twice); each fact's totals, which a
-- recipe's usage_prior reads. Fact ids and counts only: no content.
CREATE TABLE IF NOT EXISTS usage_exposures (
    seq BIGINT NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    fact_id VARCHAR NOT NULL, exposures BIGINT NOT NULL, last_seen TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS usage_folded (
    tenant VARCHAR NOT NULL, interaction_id VARCHAR NOT NULL, asked_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS usage_totals (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, fact_id VARCHAR NOT NULL,
    exposures BIGINT NOT NULL, recalls BIGINT NOT NULL, negative BIGINT NOT NULL, last_seen TIMESTAMPTZ,
    folded_at TIMESTAMPTZ NOT NULL
);
"""
