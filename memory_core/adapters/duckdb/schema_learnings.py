"""Schema v11: the learnings queue: rules a user states about the agent, filed as candidates with their supporters."""

from __future__ import annotations

# learnings_queue: one row per version of a candidate (pending -> accepted | rejected), in the
# namespace of the agent the rule was said to; ``rule_sha256`` (its normalized words) finds it
# again when the rule is stated anew, even once an erasure blanked ``rule``.
# learnings_supporters: who stated it (the identity tuple), in the supporter's own namespace (the
# user's), so a user's erasure deletes them with the user's rows.
LEARNINGS_DDL = """
CREATE TABLE IF NOT EXISTS learnings_queue (
    learning_id VARCHAR NOT NULL, version INTEGER NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL,
    owner_id VARCHAR NOT NULL, rule VARCHAR NOT NULL, rule_sha256 VARCHAR NOT NULL, status VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL, recorded_at TIMESTAMPTZ NOT NULL, decided_by VARCHAR, decided_at TIMESTAMPTZ
);
CREATE TABLE IF NOT EXISTS learnings_supporters (
    learning_id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    user_id VARCHAR, agent VARCHAR, session VARCHAR, run VARCHAR, turn_id VARCHAR NOT NULL, quote VARCHAR NOT NULL,
    stated_at TIMESTAMPTZ NOT NULL
);
"""
