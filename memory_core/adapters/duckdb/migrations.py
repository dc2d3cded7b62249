"""The schema's versions and the migrations between them: any older home is brought to the current
schema when a writer opens it, in one transaction."""

from __future__ import annotations

import json

import duckdb

from .audit_chain import COMMIT_FLOOR
from .connection import DuckDBConnection
from .schema import COLS, DDL, HEADS_VIEW
from .schema_compounding import COMPOUNDING_DDL
from .schema_erasure import ERASURE_DDL
from .schema_keys import API_KEYS_DDL
from .schema_substrate import SUBSTRATE_DDL
from .schema_surface import SURFACE_DDLS

SCHEMA_VERSION = "11"


def stored_schema_version(con: duckdb.DuckDBPyConnection) -> str | None:
    if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta'").fetchall()[0][0]:
        return None
    found = con.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchall()
    return found[0][0] if found else None


def _v2_to_v3(con: duckdb.DuckDBPyConnection, version: str) -> None:
    """v3: rarely-filtered fields move into ``attrs``, a global sequence, heads become a view,
    and the audit head moves to its own one-row table."""
    if version == "1":  # v2 added subject and index_context
        con.execute("ALTER TABLE memory_versions ADD COLUMN IF NOT EXISTS subject VARCHAR")
        con.execute("ALTER TABLE memory_versions ADD COLUMN IF NOT EXISTS index_context VARCHAR")
    con.execute("DROP INDEX IF EXISTS memory_versions_by_key")
    con.execute("ALTER TABLE memory_versions RENAME TO memory_versions_v2")
    con.execute(DDL)
    con.execute(f"""
        INSERT INTO memory_versions ({COLS})
        SELECT row_number() OVER (ORDER BY created_at, version, id), id, fact_id, tenant, scope, owner_id, key,
               value_json, content_sha256, kind, memory_type, status, op, version, change_id, observed_at, valid_at,
               invalid_at, created_at, superseded_by, 'stated', 'normal', NULL, NULL,
               json_object('reinforcement_count', reinforcement_count, 'changed_by', changed_by,
                           'subject', subject, 'index_context', index_context, 'on_expire', 'tombstone',
                           'locked', false, 'pinned', false, 'confidence', 1.0, 'conflict_with', json_array(),
                           'prov_tenant', prov_tenant, 'prov_session', prov_session, 'prov_run', prov_run,
                           'prov_agent', prov_agent, 'prov_model', prov_model,
                           'prov_source_quote', prov_source_quote, 'prov_origin', prov_origin,
                           'prov_actor', prov_actor)::VARCHAR
        FROM memory_versions_v2""")
    con.execute("DROP TABLE memory_versions_v2")
    con.execute("DROP TABLE IF EXISTS memory_heads")
    found = con.execute("SELECT value FROM meta WHERE name = 'audit_head'").fetchall()
    if found:
        seq, _, digest = found[0][0].partition(":")
        con.execute("INSERT INTO audit_head (seq, row_hash) VALUES (?, ?)", [int(seq), digest])
        con.execute("DELETE FROM meta WHERE name = 'audit_head'")


def _v4_to_v5(con: duckdb.DuckDBPyConnection) -> None:
    """v5: the graph takes the facts' time names. An observation's start and stated end
    (``start_at``, ``valid_to``) become ``valid_at`` and ``invalid_at``, and so do the
    ``valid_from`` / ``valid_to`` of every relation a version row states."""
    columns = {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'graph_triples'"
        ).fetchall()
    }
    if "start_at" in columns:
        con.execute("ALTER TABLE graph_triples RENAME COLUMN start_at TO valid_at")
        con.execute("ALTER TABLE graph_triples RENAME COLUMN valid_to TO invalid_at")
    renamed = {"valid_from": "valid_at", "valid_to": "invalid_at"}
    rows = con.execute(
        "SELECT id, attrs FROM memory_versions WHERE attrs LIKE '%\"valid_from\"%' OR attrs LIKE '%\"valid_to\"%'"
    ).fetchall()
    for row_id, attrs in rows:
        body = json.loads(attrs)
        relations = body.get("relations") or []
        if not any(set(r) & set(renamed) for r in relations):
            continue  # the words were in a value or a context, not a relation
        body["relations"] = [{renamed.get(k, k): v for k, v in r.items()} for r in relations]
        con.execute("UPDATE memory_versions SET attrs = ? WHERE id = ?", [json.dumps(body, ensure_ascii=False), row_id])


def _v5_to_v6(con: duckdb.DuckDBPyConnection) -> None:
    """v6: the audit chain binds data. Version rows gain the digest they were written with, audit
    rows a data root, the head a signature; the ledger table is created with the rest (``DDL``),
    and the home adopts its rows on open."""
    con.execute("ALTER TABLE memory_versions ADD COLUMN IF NOT EXISTS row_digest VARCHAR")
    con.execute("ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS data_root VARCHAR")
    con.execute("ALTER TABLE audit_head ADD COLUMN IF NOT EXISTS signature VARCHAR")
    con.execute("ALTER TABLE audit_head ADD COLUMN IF NOT EXISTS key_id VARCHAR")


def migrate(con: duckdb.DuckDBPyConnection) -> None:
    """Bring any older home to the current schema, in the caller's transaction."""
    version = stored_schema_version(con)
    if version in ("1", "2"):
        _v2_to_v3(con, version)
    if version == "4":
        _v4_to_v5(con)
    if version is not None and version.isdigit() and int(version) < 6:
        _v5_to_v6(con)
    # v4 added the entity graph tables (created below); v3 rows state no relations.
    con.execute(DDL)
    con.execute(API_KEYS_DDL)  # v7
    con.execute(SUBSTRATE_DDL)  # v8: remember's substrate (events, lenses, frames, decisions, receipts)
    con.execute(ERASURE_DDL)  # v9: erasure requests and change webhooks
    con.execute(COMPOUNDING_DDL)  # v10: consolidation runs and lineage, resolver pauses
    for ddl in SURFACE_DDLS:  # v11: the rest of the seed's memory-plane surface
        if ddl.strip():
            con.execute(ddl)
    con.execute(HEADS_VIEW)
    if not con.execute("SELECT count(*) FROM meta WHERE name = ?", [COMMIT_FLOOR]).fetchall()[0][0]:
        # v9: audit rows from here on hash their key as a commitment, so an erasure can drop it.
        first = con.execute("SELECT coalesce(max(seq), 0) + 1 FROM audit_log").fetchall()[0][0]
        DuckDBConnection.set_meta(con, COMMIT_FLOOR, str(first))
    DuckDBConnection.set_meta(con, "schema_version", SCHEMA_VERSION)
