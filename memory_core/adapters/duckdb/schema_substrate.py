"""The tables of remember's substrate (schema v8): the state-change events every write emits, the
lenses (contracts, preferences, assignments, permission groups), frames, decision traces,
interaction records and issued receipts. Lenses, frames and decision traces are append-only
versions (the newest wins); an assignment is a log of assign / unassign."""

from __future__ import annotations

SUBSTRATE_DDL = """
CREATE TABLE IF NOT EXISTS state_changes (
    seq BIGINT NOT NULL, event_id VARCHAR NOT NULL, event_type VARCHAR NOT NULL, tenant VARCHAR NOT NULL,
    scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, frame_id VARCHAR, body VARCHAR NOT NULL, audit_seq BIGINT,
    row_digest VARCHAR
);
CREATE TABLE IF NOT EXISTS lens_contracts (
    tenant VARCHAR NOT NULL, lens_id VARCHAR NOT NULL, version INTEGER NOT NULL, contract VARCHAR NOT NULL,
    defined_at TIMESTAMPTZ NOT NULL, defined_by VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS lens_preferences (
    tenant VARCHAR NOT NULL, lens_id VARCHAR NOT NULL, version INTEGER NOT NULL, preferences VARCHAR NOT NULL,
    defined_at TIMESTAMPTZ NOT NULL, defined_by VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS lens_assignments (
    tenant VARCHAR NOT NULL, lens_id VARCHAR NOT NULL, consumer VARCHAR NOT NULL, version INTEGER NOT NULL,
    assigned BOOLEAN NOT NULL, assigned_at TIMESTAMPTZ NOT NULL, actor VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS permission_groups (
    tenant VARCHAR NOT NULL, group_name VARCHAR NOT NULL, version INTEGER NOT NULL, permissions VARCHAR NOT NULL,
    defined_at TIMESTAMPTZ NOT NULL, defined_by VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS frames (
    tenant VARCHAR NOT NULL, frame_id VARCHAR NOT NULL, version INTEGER NOT NULL, consumer VARCHAR NOT NULL,
    scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, intent VARCHAR NOT NULL, goal VARCHAR NOT NULL,
    tags VARCHAR NOT NULL, lenses VARCHAR NOT NULL, next_steps VARCHAR NOT NULL, suppressed VARCHAR NOT NULL,
    status VARCHAR NOT NULL, opened_at TIMESTAMPTZ NOT NULL, changed_at TIMESTAMPTZ NOT NULL,
    closed_at TIMESTAMPTZ, summary VARCHAR
);
CREATE TABLE IF NOT EXISTS decision_traces (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, decision_id VARCHAR NOT NULL,
    version INTEGER NOT NULL, decision VARCHAR NOT NULL, rationale VARCHAR NOT NULL, inputs VARCHAR NOT NULL,
    outcome VARCHAR, frame_id VARCHAR, lens_id VARCHAR, intent VARCHAR, tags VARCHAR NOT NULL, actor VARCHAR NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS interactions (
    tenant VARCHAR NOT NULL, interaction_id VARCHAR NOT NULL, consumer VARCHAR NOT NULL, kind VARCHAR NOT NULL,
    lenses VARCHAR NOT NULL, frame_id VARCHAR, query VARCHAR, refs VARCHAR NOT NULL, receipt_id VARCHAR,
    feedback VARCHAR, asked_at TIMESTAMPTZ NOT NULL, detail VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS receipts (
    tenant VARCHAR NOT NULL, receipt_id VARCHAR NOT NULL, kind VARCHAR NOT NULL, consumer VARCHAR NOT NULL,
    frame_id VARCHAR, issued_at TIMESTAMPTZ NOT NULL, store_seq BIGINT NOT NULL, key_id VARCHAR NOT NULL,
    body VARCHAR NOT NULL
);
"""

# An event's columns are what a read filters on; the rest is one JSON body. Each column a
# point write appends to costs it (a 20-column event table cost 1.2-2.6 ms per write on this
# host against 0.5-0.7 ms for a narrow one: docs/benchmarks.md, "The event stream's cost").
EVENT_COLUMNS = ("seq", "event_id", "event_type", "tenant", "scope", "owner_id", "frame_id", "body", "audit_seq")
LENS_COLUMNS = ("tenant", "lens_id", "version", "contract", "defined_at", "defined_by")
PREFERENCE_COLUMNS = ("tenant", "lens_id", "version", "preferences", "defined_at", "defined_by")
ASSIGNMENT_COLUMNS = ("tenant", "lens_id", "consumer", "version", "assigned", "assigned_at", "actor")
GROUP_COLUMNS = ("tenant", "group_name", "version", "permissions", "defined_at", "defined_by")
FRAME_COLUMNS = (
    "tenant",
    "frame_id",
    "version",
    "consumer",
    "scope",
    "owner_id",
    "intent",
    "goal",
    "tags",
    "lenses",
    "next_steps",
    "suppressed",
    "status",
    "opened_at",
    "changed_at",
    "closed_at",
    "summary",
)
DECISION_COLUMNS = (
    "tenant",
    "scope",
    "owner_id",
    "decision_id",
    "version",
    "decision",
    "rationale",
    "inputs",
    "outcome",
    "frame_id",
    "lens_id",
    "intent",
    "tags",
    "actor",
    "recorded_at",
)
INTERACTION_COLUMNS = (
    "tenant",
    "interaction_id",
    "consumer",
    "kind",
    "lenses",
    "frame_id",
    "query",
    "refs",
    "receipt_id",
    "feedback",
    "asked_at",
    "detail",
)
RECEIPT_COLUMNS = ("tenant", "receipt_id", "kind", "consumer", "frame_id", "issued_at", "store_seq", "key_id", "body")
