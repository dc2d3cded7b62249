"""Schema v11: session summaries: a digest per session, written by a worker.

One row per (namespace, session): the digest, what it was built from (``turns_digest``, so the
worker rebuilds it only when the session's kept turns change) and the rows it stands for (the
session's turns and the facts read from them, which the summary leg of a search brings)."""

from __future__ import annotations

SUMMARIES_DDL = """
CREATE TABLE IF NOT EXISTS session_summaries (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, session VARCHAR NOT NULL,
    digest VARCHAR NOT NULL, turns INTEGER NOT NULL, turns_digest VARCHAR NOT NULL, fact_ids VARCHAR NOT NULL,
    summarizer VARCHAR NOT NULL, first_at TIMESTAMPTZ, last_at TIMESTAMPTZ, built_at TIMESTAMPTZ NOT NULL
);
"""
