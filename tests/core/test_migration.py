"""A home written by the previous schema (v2) opens under v3 with every row, its history and a
verifying audit chain, and takes new writes."""

from __future__ import annotations

import duckdb
import pytest

from memory_core import Identity, Memory, Status
from memory_core.audit import GENESIS_HASH, AuditEntry, chain
from tests.conftest import T0

V2_DDL = """
CREATE TABLE meta (name VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE memory_versions (
    id VARCHAR NOT NULL, fact_id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL,
    owner_id VARCHAR NOT NULL, key VARCHAR NOT NULL, value_json VARCHAR NOT NULL, content_sha256 VARCHAR NOT NULL,
    kind VARCHAR NOT NULL, memory_type VARCHAR NOT NULL, status VARCHAR NOT NULL, op VARCHAR NOT NULL,
    version BIGINT NOT NULL, change_id VARCHAR NOT NULL, observed_at TIMESTAMPTZ, valid_at TIMESTAMPTZ NOT NULL,
    invalid_at TIMESTAMPTZ, created_at TIMESTAMPTZ NOT NULL, superseded_by VARCHAR,
    reinforcement_count INTEGER NOT NULL, prov_tenant VARCHAR NOT NULL, prov_session VARCHAR, prov_run VARCHAR,
    prov_agent VARCHAR, prov_model VARCHAR, prov_source_quote VARCHAR, prov_origin VARCHAR NOT NULL,
    prov_actor VARCHAR NOT NULL, changed_by VARCHAR NOT NULL, subject VARCHAR, index_context VARCHAR
);
CREATE INDEX memory_versions_by_key ON memory_versions (tenant, scope, owner_id, key);
CREATE TABLE memory_heads (
    tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL, key VARCHAR NOT NULL,
    version BIGINT NOT NULL, status VARCHAR NOT NULL, head_version_id VARCHAR NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (tenant, scope, owner_id, key)
);
CREATE TABLE projection_failures (
    fact_id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL, owner_id VARCHAR NOT NULL,
    key VARCHAR NOT NULL, error VARCHAR NOT NULL, failed_at TIMESTAMPTZ NOT NULL, resolved_at TIMESTAMPTZ
);
CREATE TABLE audit_log (
    seq BIGINT NOT NULL, written_at TIMESTAMPTZ NOT NULL, tenant VARCHAR NOT NULL, scope VARCHAR NOT NULL,
    owner_id VARCHAR NOT NULL, key VARCHAR NOT NULL, op VARCHAR NOT NULL, version_ids VARCHAR NOT NULL,
    content_sha256 VARCHAR, actor VARCHAR NOT NULL, prev_hash VARCHAR NOT NULL, row_hash VARCHAR NOT NULL
);
"""


def write_v2_home(home):
    home.mkdir(parents=True)
    con = duckdb.connect(str(home / "memory.duckdb"))
    con.execute("SET TimeZone = 'UTC'")
    con.execute(V2_DDL)
    common = ["acme", "user", "ana", "city"]
    prov = ["acme", "s1", None, "helper", None, None, "memory.api", "agent:helper", "agent:helper"]
    con.execute(
        "INSERT INTO memory_versions VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'fact', 'general', ?, ?, ?, ?, NULL, "
        "?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'Ana', NULL)",
        [
            "v1",
            "f1",
            *common,
            '"Berlin"',
            "sha-b",
            "superseded",
            "set",
            1,
            "c1",
            T0,
            T0.replace(year=2025),
            T0,
            "v3",
            *prov,
        ],
    )
    con.execute(
        "INSERT INTO memory_versions VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'fact', 'general', ?, ?, ?, ?, NULL, "
        "?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'Ana', NULL)",
        [
            "v3",
            "f3",
            *common,
            '"Paris"',
            "sha-p",
            "active",
            "set",
            3,
            "c2",
            T0.replace(year=2025),
            None,
            T0.replace(year=2025),
            None,
            *prov,
        ],
    )
    con.execute("INSERT INTO memory_heads VALUES ('acme', 'user', 'ana', 'city', 3, 'active', 'v3', ?)", [T0])
    row = chain(
        1,
        AuditEntry(T0, "acme", "user", "ana", "city", "set", "v1", "sha-b", "agent:helper"),
        GENESIS_HASH,
        committed=False,
    )
    e = row.entry
    con.execute(
        "INSERT INTO audit_log VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            1,
            e.at,
            e.tenant,
            e.scope,
            e.owner_id,
            e.key,
            e.op,
            e.version_ids,
            e.content_sha256,
            e.actor,
            row.prev_hash,
            row.row_hash,
        ],
    )
    con.execute("INSERT INTO meta VALUES ('schema_version', '2'), ('audit_head', ?)", [f"1:{row.row_hash}"])
    con.close()


def test_a_v2_home_opens_under_v3_with_its_rows_history_and_audit_chain(home):
    write_v2_home(home)
    with Memory.open(home) as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        assert tool.get("city").value == "Paris"
        assert tool.get("city", as_of=T0).value == "Berlin"
        old = tool.history("city")[0]
        assert old.status is Status.SUPERSEDED and old.subject == "Ana" and old.provenance.session == "s1"
        assert old.source_class == "stated" and not old.pinned and old.confidence == 1.0
        assert memory.verify_audit().ok
        assert tool.set("city", "Lisbon").verdict == "superseded"
        assert memory.verify_audit().ok and [r.version for r in tool.history("city")][-1] == 5
    with Memory.open(home) as memory:  # and again, now at v3
        assert memory.for_run(Identity(tenant="acme", user="ana")).get("city").value == "Lisbon"


def test_a_v4_home_takes_the_graph_time_names_and_answers_as_before(home, clock):
    """v5 renames the graph's time columns and the keys of the relations rows state; a v4 home (its
    layout made back from a v5 one) opens read-only with a typed refusal, then migrates on a
    writable open and answers the same graph reads."""
    from datetime import timedelta

    from memory_core.errors import SchemaOutdated

    with Memory.open(home, clock=clock) as memory:
        ana = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        ana.set(
            "home",
            "I live in London until December",
            relations=[
                {"subject": "I", "relation": "lives in", "object": "London", "invalid_at": "2025-12-01T00:00:00Z"}
            ],
        )
        before = [f.to_dict() for f in ana.list_facts("user", as_of=T0 + timedelta(days=1))]
        history_before = ana.history("home")
    con = duckdb.connect(str(home / "memory.duckdb"))  # back to the v4 layout
    con.execute("ALTER TABLE graph_triples RENAME COLUMN valid_at TO start_at")
    con.execute("ALTER TABLE graph_triples RENAME COLUMN invalid_at TO valid_to")
    con.execute("UPDATE memory_versions SET attrs = replace(attrs, '\"invalid_at\"', '\"valid_to\"')")
    con.execute("UPDATE meta SET value = '4' WHERE name = 'schema_version'")
    assert "valid_to" in con.execute("SELECT attrs FROM memory_versions").fetchall()[0][0]
    con.close()

    with pytest.raises(SchemaOutdated):
        Memory.open(home, read_only=True)
    with Memory.open(home, clock=clock) as memory:
        ana = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        assert [f.to_dict() for f in ana.list_facts("user", as_of=T0 + timedelta(days=1))] == before
        assert ana.history("home") == history_before  # relations read back with their end
        assert before[0]["invalid_at"] == "2025-12-01T00:00:00+00:00"
        found = memory.store.unchecked_sql(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'graph_triples'"
        )
        columns = {r["column_name"] for r in found}
        assert {"valid_at", "invalid_at"} <= columns and not {"start_at", "valid_to"} & columns
