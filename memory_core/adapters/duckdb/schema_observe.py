"""Schema v11: the sessions ``observe_crystallize`` marked ready for the observation extraction.

The observations themselves are memory rows (``memory_type`` episodic, written through the write
path), so reads, audit, erasure and isolation treat them as every other row; this table keeps
only each crystallized session's state: ready, then running under a lease, then done or failed,
with the identity the extraction runs as and what it wrote (fact keys and counts). One row per
session of a namespace (a unique index on PostgreSQL; the home's one writer on DuckDB)."""

from __future__ import annotations

OBSERVE_SESSION_COLUMNS = (
    "tenant",
    "scope",
    "owner_id",
    "session",
    "status",
    "observations",
    "identity",
    "crystallized_at",
    "crystallized_by",
    "lease_owner",
    "lease_expires_at",
    "attempts",
    "finished_at",
    "result",
    "last_error",
)

OBSERVE_DDL = """
CREATE TABLE IF NOT EXISTS observe_sessions (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, session VARCHAR NOT NULL,
    status VARCHAR NOT NULL, observations INTEGER NOT NULL, identity VARCHAR NOT NULL,
    crystallized_at TIMESTAMPTZ NOT NULL, crystallized_by VARCHAR NOT NULL, lease_owner VARCHAR,
    lease_expires_at TIMESTAMPTZ, attempts INTEGER NOT NULL, finished_at TIMESTAMPTZ, result VARCHAR,
    last_error VARCHAR
);
"""
