"""The table of the memory service's API keys (schema v7): one row per key, its secret hashed."""

from __future__ import annotations

API_KEYS_DDL = """
CREATE TABLE IF NOT EXISTS api_keys (
    key_id VARCHAR PRIMARY KEY, secret_sha256 VARCHAR NOT NULL, tenant VARCHAR NOT NULL, user_id VARCHAR,
    agent VARCHAR, memory_scopes VARCHAR NOT NULL, sql_scopes VARCHAR NOT NULL, admin BOOLEAN NOT NULL,
    label VARCHAR, created_at TIMESTAMPTZ NOT NULL, expires_at TIMESTAMPTZ, revoked_at TIMESTAMPTZ,
    created_by VARCHAR NOT NULL
);
"""

API_KEY_COLUMNS = (
    "key_id",
    "secret_sha256",
    "tenant",
    "user_id",
    "agent",
    "memory_scopes",
    "sql_scopes",
    "admin",
    "label",
    "created_at",
    "expires_at",
    "revoked_at",
    "created_by",
)
