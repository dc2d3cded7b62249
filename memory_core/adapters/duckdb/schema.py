"""The DuckDB schema of the memory home, its migrations, and the row <-> record mapping."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Sequence

from ...graph.model import Relation
from ...identity import Scope
from ...model import FactVersion, Kind, Op, Provenance, Status

# Columns a query filters or orders on. Everything else about a version lives in ``attrs`` (one
# JSON column): each physical column costs every point write (docs/benchmarks.md, "One attrs
# JSON column").
VERSION_COLUMNS = (
    "seq",
    "id",
    "fact_id",
    "tenant",
    "scope",
    "owner_id",
    "key",
    "value_json",
    "content_sha256",
    "kind",
    "memory_type",
    "status",
    "op",
    "version",
    "change_id",
    "observed_at",
    "valid_at",
    "invalid_at",
    "created_at",
    "superseded_by",
    "source_class",
    "sensitivity",
    "expires_at",
    "audit_seq",
    "attrs",
)
COLS = ", ".join(VERSION_COLUMNS)

# What an observation (a graph_triples row) holds beyond its namespace.
TRIPLE_COLUMNS = (
    "triple_id",
    "subject",
    "relation",
    "object",
    "valid_at",
    "dated",
    "invalid_at",
    "seen_at",
    "ended_at",
    "end_reason",
    "origin",
    "restore_id",
    "fact_class",
)

# The latest state of every fact, optionally as the store held it at a transaction time.
LATEST = """
SELECT {cols} FROM memory_versions
WHERE {where}
QUALIFY row_number() OVER (PARTITION BY fact_id ORDER BY version DESC) = 1
"""

ATTRS = (
    "reinforcement_count",
    "changed_by",
    "subject",
    "index_context",
    "on_expire",
    "locked",
    "pinned",
    "confidence",
    "conflict_with",
    "prov_tenant",
    "prov_session",
    "prov_run",
    "prov_agent",
    "prov_model",
    "prov_source_quote",
    "prov_origin",
    "prov_actor",
    "relations",
    "prov_source_turn",
    "prov_source_span",
    "prov_compaction_generation",
)
JSON_ATTRS = ("relations", "prov_source_span")  # staged as JSON text, stored as JSON

DDL = """
CREATE TABLE IF NOT EXISTS meta (name VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS memory_versions (
    seq BIGINT NOT NULL, id VARCHAR NOT NULL, fact_id VARCHAR NOT NULL,
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, key VARCHAR NOT NULL,
    value_json VARCHAR NOT NULL, content_sha256 VARCHAR NOT NULL, kind VARCHAR NOT NULL,
    memory_type VARCHAR NOT NULL, status VARCHAR NOT NULL, op VARCHAR NOT NULL,
    version BIGINT NOT NULL, change_id VARCHAR NOT NULL,
    observed_at TIMESTAMPTZ, valid_at TIMESTAMPTZ NOT NULL, invalid_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL, superseded_by VARCHAR, source_class VARCHAR NOT NULL,
    sensitivity VARCHAR NOT NULL, expires_at TIMESTAMPTZ, audit_seq BIGINT, attrs VARCHAR NOT NULL,
    row_digest VARCHAR
);
CREATE TABLE IF NOT EXISTS audit_head (
    seq BIGINT NOT NULL, row_hash VARCHAR NOT NULL, signature VARCHAR, key_id VARCHAR
);
CREATE TABLE IF NOT EXISTS projection_failures (
    fact_id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    key VARCHAR NOT NULL, error VARCHAR NOT NULL, failed_at TIMESTAMPTZ NOT NULL, resolved_at TIMESTAMPTZ
);
CREATE TABLE IF NOT EXISTS audit_log (
    seq BIGINT NOT NULL, written_at TIMESTAMPTZ NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL,
    owner_id VARCHAR NOT NULL, key VARCHAR NOT NULL, op VARCHAR NOT NULL, version_ids VARCHAR NOT NULL,
    content_sha256 VARCHAR, actor VARCHAR NOT NULL, prev_hash VARCHAR NOT NULL, row_hash VARCHAR NOT NULL,
    data_root VARCHAR
);
CREATE TABLE IF NOT EXISTS audit_digests (
    seq BIGINT NOT NULL, tbl VARCHAR NOT NULL, row_key VARCHAR NOT NULL, digest VARCHAR NOT NULL,
    change VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS write_config (
    tenant VARCHAR NOT NULL, memory_type VARCHAR NOT NULL, config_json VARCHAR NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS ontologies (
    tenant VARCHAR NOT NULL, version INTEGER NOT NULL, markdown VARCHAR NOT NULL, sha256 VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL, actor VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS graph_entities (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, entity_id VARCHAR NOT NULL,
    entity_type VARCHAR, first_seen_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS graph_triples (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, triple_id VARCHAR NOT NULL,
    subject VARCHAR NOT NULL, relation VARCHAR NOT NULL, object VARCHAR NOT NULL,
    valid_at TIMESTAMPTZ NOT NULL, dated BOOLEAN NOT NULL, invalid_at TIMESTAMPTZ, seen_at TIMESTAMPTZ NOT NULL,
    ended_at TIMESTAMPTZ, end_reason VARCHAR, origin VARCHAR NOT NULL, restore_id VARCHAR, fact_class VARCHAR
);
CREATE TABLE IF NOT EXISTS graph_links (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, triple_id VARCHAR NOT NULL,
    fact_id VARCHAR NOT NULL, key VARCHAR NOT NULL, content_sha256 VARCHAR NOT NULL, link_kind VARCHAR NOT NULL,
    linked_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS extraction_queue (
    queue_id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    requested_by VARCHAR NOT NULL, kind VARCHAR NOT NULL, payload VARCHAR NOT NULL, status VARCHAR NOT NULL,
    attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL, next_attempt_at TIMESTAMPTZ NOT NULL,
    lease_owner VARCHAR, lease_expires_at TIMESTAMPTZ, last_error VARCHAR, created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL, result VARCHAR
);
CREATE TABLE IF NOT EXISTS resolver_marks (
    fact_id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    key VARCHAR NOT NULL, content_sha256 VARCHAR NOT NULL, seq BIGINT NOT NULL, mark VARCHAR NOT NULL,
    reason VARCHAR, attempts INTEGER NOT NULL, marked_at TIMESTAMPTZ NOT NULL, judged_at TIMESTAMPTZ,
    errored BOOLEAN NOT NULL
);
CREATE TABLE IF NOT EXISTS resolver_records (
    record_id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    action VARCHAR NOT NULL, judged_fact VARCHAR NOT NULL, peer_fact VARCHAR NOT NULL, peer_key VARCHAR NOT NULL,
    verdict VARCHAR NOT NULL, confidence DOUBLE NOT NULL, judge VARCHAR NOT NULL, recorded_at TIMESTAMPTZ NOT NULL,
    reason VARCHAR
);
CREATE TABLE IF NOT EXISTS llm_spend (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, day DATE NOT NULL,
    purpose VARCHAR NOT NULL, calls INTEGER NOT NULL, cost_usd DOUBLE NOT NULL
);
CREATE TABLE IF NOT EXISTS erasures (
    tenant VARCHAR NOT NULL, status VARCHAR NOT NULL, requested_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshots_restored (
    snapshot_id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    restored_at TIMESTAMPTZ NOT NULL, keys INTEGER NOT NULL
);
"""


# The newest row of every key: a view, so a point write appends and never updates a head row.
HEADS_VIEW = """
CREATE OR REPLACE VIEW memory_heads AS
SELECT tenant, scope, owner_id, key, version, status, id AS head_version_id, created_at AS updated_at
FROM memory_versions
QUALIFY row_number() OVER (PARTITION BY tenant, scope, owner_id, key ORDER BY version DESC) = 1
"""


def utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(timezone.utc)


def row_to_version(row: Sequence[Any]) -> FactVersion:
    r = dict(zip(VERSION_COLUMNS, row))
    a = json.loads(r["attrs"])
    return FactVersion(
        id=r["id"],
        fact_id=r["fact_id"],
        tenant=r["tenant"],
        scope=Scope(r["scope"]),
        owner_id=r["owner_id"],
        key=r["key"],
        value_json=r["value_json"],
        content_sha256=r["content_sha256"],
        kind=Kind(r["kind"]),
        memory_type=r["memory_type"],
        status=Status(r["status"]),
        op=Op(r["op"]),
        version=int(r["version"]),
        change_id=r["change_id"],
        observed_at=utc(r["observed_at"]),
        valid_at=utc(r["valid_at"]),
        invalid_at=utc(r["invalid_at"]),
        created_at=utc(r["created_at"]),
        superseded_by=r["superseded_by"],
        reinforcement_count=int(a["reinforcement_count"]),
        provenance=Provenance(
            tenant=a["prov_tenant"],
            session=a["prov_session"],
            run=a["prov_run"],
            agent=a["prov_agent"],
            model=a["prov_model"],
            source_quote=a["prov_source_quote"],
            origin=a["prov_origin"],
            actor=a["prov_actor"],
            source_turn=a.get("prov_source_turn"),
            source_span=tuple(a["prov_source_span"]) if a.get("prov_source_span") else None,
            compaction_generation=a.get("prov_compaction_generation"),
            lens_id=a.get("prov_lens"),
            frame_id=a.get("prov_frame"),
            actor_chain=tuple(a.get("prov_actor_chain") or ()),
            author=a.get("prov_author"),
            source=a.get("prov_source"),
            judged_by=a.get("prov_judged_by"),
            judged_at=_instant(a.get("prov_judged_at")),
        ),
        changed_by=a["changed_by"],
        subject=a["subject"],
        index_context=a["index_context"],
        source_class=r["source_class"],
        sensitivity=r["sensitivity"],
        expires_at=utc(r["expires_at"]),
        on_expire=a["on_expire"],
        locked=bool(a["locked"]),
        pinned=bool(a["pinned"]),
        confidence=float(a["confidence"]),
        conflict_with=tuple(a["conflict_with"]),
        relations=tuple(Relation.from_json(r) for r in a.get("relations") or ()),
    )


def attrs_json(v: FactVersion) -> str:
    p = v.provenance
    body = {
        "reinforcement_count": v.reinforcement_count,
        "changed_by": v.changed_by,
        "subject": v.subject,
        "index_context": v.index_context,
        "on_expire": v.on_expire,
        "locked": v.locked,
        "pinned": v.pinned,
        "confidence": v.confidence,
        "conflict_with": list(v.conflict_with),
        "prov_tenant": p.tenant,
        "prov_session": p.session,
        "prov_run": p.run,
        "prov_agent": p.agent,
        "prov_model": p.model,
        "prov_source_quote": p.source_quote,
        "prov_origin": p.origin,
        "prov_actor": p.actor,
        "relations": [r.to_json() for r in v.relations],
        "prov_source_turn": p.source_turn,
        "prov_source_span": list(p.source_span) if p.source_span else None,
        "prov_compaction_generation": p.compaction_generation,
    }
    # A capture's envelope, only where there is one: every other row's attrs (and digest) stay as before.
    for name, value in (
        ("prov_lens", p.lens_id),
        ("prov_frame", p.frame_id),
        ("prov_actor_chain", list(p.actor_chain)),
        ("prov_author", p.author),
        ("prov_source", p.source),
    ):
        if value:
            body[name] = value
    if p.judged_by:  # a reviewer's affirmation (``verify``), only where there is one
        body["prov_judged_by"] = p.judged_by
        body["prov_judged_at"] = p.judged_at.astimezone(timezone.utc).isoformat() if p.judged_at else None
    return json.dumps(body, ensure_ascii=False)


def _instant(text: str | None) -> datetime | None:
    return None if not text else datetime.fromisoformat(text).astimezone(timezone.utc)


def version_params(seq: int, v: FactVersion, audit_seq: int | None) -> list[Any]:
    return [
        seq,
        v.id,
        v.fact_id,
        v.tenant,
        v.scope.value,
        v.owner_id,
        v.key,
        v.value_json,
        v.content_sha256,
        v.kind.value,
        v.memory_type,
        v.status.value,
        v.op.value,
        v.version,
        v.change_id,
        v.observed_at,
        v.valid_at,
        v.invalid_at,
        v.created_at,
        v.superseded_by,
        v.source_class,
        v.sensitivity,
        v.expires_at,
        audit_seq,
        attrs_json(v),
    ]
