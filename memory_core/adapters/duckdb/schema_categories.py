"""Schema v11: a namespace's category taxonomy, the category links of its rows, and operator links between rows."""

from __future__ import annotations

# Each table is a log: a change appends the pair's next version, and the newest version of a
# name, a (key, category) pair or a (fact, fact, relation) edge is its state. A pair that was
# ever stored keeps its rows, so a rescinded category link is told apart from one never made
# (an import adds only pairs never stored).
CATEGORY_COLUMNS = ("tenant", "scope", "owner_id", "name", "version", "description", "actor", "defined_at")
CATEGORY_LINK_COLUMNS = (
    "tenant",
    "scope",
    "owner_id",
    "key",
    "category",
    "version",
    "state",
    "origin",
    "actor",
    "changed_at",
)
MEMORY_LINK_COLUMNS = (
    "tenant",
    "scope",
    "owner_id",
    "fact_id",
    "other_fact_id",
    "relation",
    "version",
    "key",
    "other_key",
    "state",
    "actor",
    "changed_at",
)

CATEGORIES_DDL = """
CREATE TABLE IF NOT EXISTS categories (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, name VARCHAR NOT NULL,
    version INTEGER NOT NULL, description VARCHAR, actor VARCHAR NOT NULL, defined_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS category_links (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, key VARCHAR NOT NULL,
    category VARCHAR NOT NULL, version INTEGER NOT NULL, state VARCHAR NOT NULL, origin VARCHAR NOT NULL,
    actor VARCHAR NOT NULL, changed_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_links (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, fact_id VARCHAR NOT NULL,
    other_fact_id VARCHAR NOT NULL, relation VARCHAR NOT NULL, version INTEGER NOT NULL, key VARCHAR NOT NULL,
    other_key VARCHAR NOT NULL, state VARCHAR NOT NULL, actor VARCHAR NOT NULL, changed_at TIMESTAMPTZ NOT NULL
);
"""
