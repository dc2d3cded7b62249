"""The tables of schema v9: erasure requests (a saga's checkpoints, one version per step) and the
change webhooks (the registry, the outbox a write appends to, and every delivery attempt)."""

from __future__ import annotations

ERASURE_DDL = """
CREATE TABLE IF NOT EXISTS erasure_requests (
    request_id VARCHAR NOT NULL, version INTEGER NOT NULL, tenant VARCHAR NOT NULL, target VARCHAR NOT NULL,
    status VARCHAR NOT NULL, steps VARCHAR NOT NULL, attempts INTEGER NOT NULL, actor VARCHAR NOT NULL,
    requested_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL, residue_count BIGINT,
    residue VARCHAR, verified_at TIMESTAMPTZ, error VARCHAR
);
CREATE TABLE IF NOT EXISTS webhooks (
    tenant VARCHAR NOT NULL, webhook_id VARCHAR NOT NULL, version INTEGER NOT NULL, url VARCHAR NOT NULL,
    events VARCHAR NOT NULL, secret VARCHAR NOT NULL, status VARCHAR NOT NULL, changed_at TIMESTAMPTZ NOT NULL,
    actor VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_outbox (
    seq BIGINT NOT NULL, event_id VARCHAR NOT NULL, webhook_id VARCHAR NOT NULL, event_type VARCHAR NOT NULL,
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, body VARCHAR NOT NULL,
    occurred_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    event_id VARCHAR NOT NULL, webhook_id VARCHAR NOT NULL, attempt INTEGER NOT NULL, outcome VARCHAR NOT NULL,
    worker VARCHAR NOT NULL, attempted_at TIMESTAMPTZ NOT NULL, next_attempt_at TIMESTAMPTZ, status_code INTEGER,
    error VARCHAR
);
"""

REQUEST_COLUMNS = (
    "request_id",
    "version",
    "tenant",
    "target",
    "status",
    "steps",
    "attempts",
    "actor",
    "requested_at",
    "updated_at",
    "residue_count",
    "residue",
    "verified_at",
    "error",
)
WEBHOOK_COLUMNS = ("tenant", "webhook_id", "version", "url", "events", "secret", "status", "changed_at", "actor")
