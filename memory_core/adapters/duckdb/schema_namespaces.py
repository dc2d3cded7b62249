"""Schema v11: namespaces soft-deleted by namespace_delete (reads and workers skip them).

``namespace_states`` is a log: one row per delete or register of a namespace, never rewritten.
A namespace is deleted while its newest row says so; nothing else of it is touched."""

from __future__ import annotations

NAMESPACES_DDL = """
CREATE TABLE IF NOT EXISTS namespace_states (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, seq INTEGER NOT NULL,
    state VARCHAR NOT NULL, changed_at TIMESTAMPTZ NOT NULL, actor VARCHAR NOT NULL
);
"""
