"""What the platform reads about a PostgreSQL authority (``PgInspection``): the counts, the
invariants the asset checks assert, and ``tables()``, whose equality proves nothing was written."""

from __future__ import annotations

import dataclasses
import threading
from datetime import timedelta
from pathlib import Path

from memory_core.adapters.duckdb.inspection import TABLE_CLASSES
from memory_core.adapters.postgres.connection import PgConnection
from memory_core.adapters.postgres.consolidation import PgConsolidation
from memory_core.adapters.postgres.inspection import PgInspection
from memory_core.consolidation import ClusterOutcome, ConsolidationRun
from memory_core.identity import Namespace, Scope
from memory_core.model import Provenance, Status
from tests.conftest import T0
from tests.postgres.conftest import connect
from tests.postgres.log_kit import NS, batch, log, version

BOB = Namespace("acme", Scope.USER, "bob")
TEAM = Namespace("acme", Scope.TENANT, "acme")


def test_a_new_authority_is_classified_and_empty(pg_db: PgConnection) -> None:
    inspection = PgInspection(pg_db)
    assert inspection.unclassified_tables() == []
    assert inspection.table_counts() == {
        "memory_versions": 0,
        "memory_heads": 0,
        "audit_log": 0,
        "projection_failures": 0,
    }
    assert inspection.summary()["keys"] == 0 and inspection.catalog() == [] and inspection.tenants() == []
    assert inspection.cross_tenant_rows() == [] and inspection.overlapping_intervals() == []
    tables = inspection.tables()
    assert set(tables) == set(TABLE_CLASSES) and tables["memory_heads"] == []  # the view too, as DuckDB's
    with pg_db.tx() as tx:
        tx.execute("CREATE TABLE stray (a INTEGER)")
    assert inspection.unclassified_tables() == ["stray"]


def test_counts_reports_and_invariants(pg_db: PgConnection, tmp_path: Path) -> None:
    versions, inspection = log(pg_db, tmp_path / "keys"), PgInspection(pg_db)
    versions.apply(batch([version("v1", key="city", fact_id="f1", i=1)], "city"))
    versions.apply(batch([version("v2", key="city", fact_id="f1", v=2, i=2)], "city"))
    versions.apply(batch([version("v3", key="gone", i=3, status=Status.TOMBSTONED)], "gone"))
    versions.apply(batch([version("b1", key="city", ns=BOB, i=4)], "city", BOB))
    # Two live facts of one key whose valid intervals overlap, one of them written by another tenant.
    stranger = Provenance(tenant="globex", actor="agent:x", origin="tool")
    overlap = [version("t1", key="plan", ns=TEAM, i=5), version("t2", key="plan", ns=TEAM, i=6, provenance=stranger)]
    versions.apply(batch(overlap, "plan", TEAM))

    assert inspection.table_counts() == {
        "memory_versions": 6,
        "memory_heads": 4,
        "audit_log": 5,
        "projection_failures": 0,
    }
    summary = inspection.summary()
    assert {k: summary[k] for k in ("tenants", "owners", "keys", "tombstoned_keys")} == {
        "tenants": 1,
        "owners": 3,
        "keys": 4,
        "tombstoned_keys": 1,
    }
    assert summary["versions_by_op"] == {"restate": 1, "set": 5}
    assert summary["facts_by_status"] == {"active": 4, "tombstoned": 1}
    assert inspection.catalog() == [
        ("acme", "tenant", "acme", "plan"),
        ("acme", "user", "ana", "city"),
        ("acme", "user", "ana", "gone"),
        ("acme", "user", "bob", "city"),
    ]
    assert inspection.tenants() == ["acme"]
    report = inspection.tenant_report("acme")
    assert report["facts_by_status"] == {"active": 4, "tombstoned": 1}
    assert report["scopes"] == [{"scope": "tenant", "owners": 1, "keys": 1}, {"scope": "user", "owners": 2, "keys": 2}]
    assert (report["graph_triples"], report["extraction_queued"], report["resolver_owed"]) == (0, 0, 0)
    assert inspection.tenant_report("nobody")["facts_by_status"] == {}
    assert inspection.overlapping_intervals() == [
        {
            "tenant": "acme",
            "scope": "tenant",
            "owner_id": "acme",
            "key": "plan",
            "fact_id": "f-t1",
            "other_fact_id": "f-t2",
        }
    ]
    assert [(r["problem"], r["key"]) for r in inspection.cross_tenant_rows()] == [
        ("version written by another tenant", "plan")
    ]


def test_markers(pg_db: PgConnection) -> None:
    inspection = PgInspection(pg_db)
    assert inspection.marker("corpus") is None
    inspection.set_marker("corpus", "locomo@1")
    inspection.set_marker("corpus", "locomo@2")
    assert inspection.marker("corpus") == "locomo@2" and PgInspection(pg_db).marker("other") is None


def test_tables_are_equal_across_reads_and_differ_after_a_write(pg_db: PgConnection, tmp_path: Path) -> None:
    versions, inspection = log(pg_db, tmp_path / "keys"), PgInspection(pg_db)
    for i in range(6):
        versions.apply(batch([version(f"v{i}", key=f"k{i % 3}", i=i)], f"k{i % 3}"))
    before = inspection.tables()
    inspection.summary(), inspection.catalog(), inspection.tenant_report("acme"), inspection.overlapping_intervals()
    versions.history(NS, "k1"), versions.verify_audit()
    assert inspection.tables() == before  # reads wrote nothing
    assert len(before["memory_versions"]) == 6 and len(before["memory_heads"]) == 3
    # Ordered by every column: the rows as PostgreSQL sorts them, whatever order they were stored in.
    assert before["memory_versions"] == pg_db.rows("SELECT * FROM memory_versions ORDER BY id")
    with pg_db.tx():  # inside a caller's transaction: its view of the rows
        assert inspection.tables() == before
    inspection.set_marker("seen", "1")
    after = inspection.tables()
    assert after != before and {t for t in after if after[t] != before[t]} == {"meta"}
    versions.apply(batch([version("v9", key="k9", i=9)], "k9"))
    changed = {t for t, rows in inspection.tables().items() if rows != after[t]}
    assert {"memory_versions", "memory_heads", "audit_log"} <= changed


def test_tables_read_one_snapshot_while_another_process_writes(pg_url: str, pg_db: PgConnection) -> None:
    """Each run's row and its cluster rows commit together: every answer holds both or neither."""
    writer, inspection, stop = connect(pg_url), PgInspection(pg_db), threading.Event()
    run = ConsolidationRun(
        "r", "acme", "user", "ana", "a", "rules", T0, T0, 2, 1, (ClusterOutcome(0, "merged", ("f",)),)
    )

    def write() -> None:
        store = PgConsolidation(writer)
        n = 0
        while not stop.is_set():
            store.record_run(dataclasses.replace(run, run_id=f"r{n}", started_at=T0 + timedelta(seconds=n)))
            n += 1

    thread = threading.Thread(target=write)
    thread.start()
    try:
        seen = [inspection.tables() for _ in range(15)]
    finally:
        stop.set()
        thread.join()
        writer.close()
    assert all(len(t["consolidation_runs"]) == len(t["consolidation_clusters"]) for t in seen)
    assert len(seen[-1]["consolidation_runs"]) > 0
