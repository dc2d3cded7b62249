"""The version log of a PostgreSQL authority: rows read back as written, every read answers from
the database (another process's writes included), and seqs stay unique and contiguous when
several processes append at once."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from memory_core.adapters.postgres.connection import PgConnection
from memory_core.adapters.postgres.versions import COPY_ABOVE
from memory_core.audit import audit_entry
from memory_core.identity import Namespace, Scope
from memory_core.model import Status
from tests.conftest import T0
from tests.postgres.conftest import connect
from tests.postgres.log_kit import NS, Staged, batch, log, version


def test_append_head_history_and_point_reads(pg_db: PgConnection, tmp_path: Path) -> None:
    versions = log(pg_db, tmp_path / "keys")
    assert versions.last_seq == 0 and versions.head(NS, "k") is None and not versions.has_key(NS, "k")
    first = version("v1", key="deploy_window", fact_id="f1", i=1)
    versions.apply(batch([first], "deploy_window"))
    second = version("v2", key="deploy_window", fact_id="f1", v=2, i=2)
    closed = version("v1b", key="deploy_window", fact_id="f1", v=1, i=1, status=Status.SUPERSEDED)
    versions.apply(batch([second, version("v3", key="deploy_zone", i=3)], "deploy_window"))

    head = versions.head(NS, "deploy_window")
    assert head is not None and (head.version, head.head_version_id, head.status) == (2, "v2", "active")
    assert head.updated_at == second.created_at
    assert versions.history(NS, "deploy_window") == [first, second]
    assert versions.fact_states(NS, "deploy_window") == [second]
    assert versions.fact_states(NS, "deploy_window", known_at=first.created_at) == [first]
    assert versions.fact_state(NS, "deploy_window", "f1") == second
    assert versions.has_key(NS, "deploy_zone") and not versions.has_key(NS, "deploy")
    assert versions.keys(NS) == ["deploy_window", "deploy_zone"]
    assert versions.keys_under(NS, "deploy_w", 10) == ["deploy_window"]
    assert versions.keys_under(NS, "deploy_", 1) == ["deploy_window"]
    assert set(versions.namespace_states(NS)) == {"deploy_window", "deploy_zone"}
    assert versions.last_seq == 3
    assert [(s, r.id) for s, r in versions.changes_since(1, 10)] == [(2, "v2"), (3, "v3")]
    assert [s for s, _ in versions.changes_since(0, 2)] == [1, 2]
    assert [r.id for _, r in versions.new_statements(0)] == ["v1", "v3"]
    assert sorted(versions.rows_since(1)) == ["f-v3", "f1"] and versions.rows_since(1, 1) == []
    assert versions.version_rows(["v3", "nope"]) == [versions.history(NS, "deploy_zone")[0]]
    assert [r.id for r in versions.latest_states(["f1"])] == ["v2"] and versions.latest_states([]) == []
    assert closed.id not in {r.id for r in versions.latest_states()}
    other = Namespace("acme", Scope.USER, "bob")
    assert versions.keys(other) == [] and versions.head(other, "deploy_window") is None
    assert versions.verify_audit().ok


@pytest.mark.parametrize("n", [3, COPY_ABOVE + 5])
def test_rows_read_back_field_for_field(pg_db: PgConnection, tmp_path: Path, n: int) -> None:
    """A few rows (each digested by its insert) and many (one COPY) store the same fields."""
    versions = log(pg_db, tmp_path / "keys")
    rows = [version(f"v{i:03d}", key=f"k{i % 7}", i=i) for i in range(n)]
    versions.apply(batch(rows))
    assert sorted(versions.version_rows([r.id for r in rows]), key=lambda r: r.id) == rows
    assert [s for s, _ in versions.changes_since(0, 1000)] == list(range(1, n + 1))
    report = versions.verify_audit()
    assert report.ok, report


def test_staged_rows_are_appended_after_the_batch(pg_db: PgConnection, tmp_path: Path) -> None:
    versions = log(pg_db, tmp_path / "keys")
    fresh = [version(f"s{i}", key=f"fresh{i}", i=i) for i in range(5)]
    versions.apply(batch([version("v0")]), staged=Staged(fresh))
    assert [r.id for _, r in versions.changes_since(0, 10)] == ["v0", "s0", "s1", "s2", "s3", "s4"]
    assert versions.version_rows([r.id for r in fresh]) == fresh
    versions.remember(fresh)  # nothing to keep: every read asks the database
    assert versions.verify_audit().ok


def test_a_failed_commit_writes_nothing(pg_db: PgConnection, tmp_path: Path) -> None:
    versions = log(pg_db, tmp_path / "keys")

    def refuse() -> None:
        raise RuntimeError("index down")

    with pytest.raises(RuntimeError):
        versions.apply(batch([version("v1")]), before_commit=refuse)
    assert versions.last_seq == 0 and versions.audit_rows() == []
    versions.apply(batch([version("v1")]), snapshot=("snap-1", 1))
    assert versions.snapshot_restored("snap-1", NS) and not versions.snapshot_restored("snap-2", NS)
    assert versions.last_seq == 1 and [r.seq for r in versions.audit_rows()] == [1]


def test_reads_of_the_log(pg_db: PgConnection, tmp_path: Path) -> None:
    versions = log(pg_db, tmp_path / "keys")
    note = version("n1", key="n1", i=0)  # a note of session s1, with index context "moving house"
    later = version("n2", key="n2", i=3, index_context="about the moving house")
    gone = version("e1", key="old", i=5, expires_at=T0 + timedelta(days=1))
    ended = version("x1", key="ended", i=1, valid_at=T0, invalid_at=T0 + timedelta(days=2))
    fight = version("c1", key="fight", i=1, status=Status.CONFLICTED)
    versions.apply(batch([note, later, gone, ended, fight]))

    assert [r.id for r in versions.session_notes(NS, "s1", 10)] == ["n1", "n2"]
    assert [r.id for r in versions.session_notes(NS, "s1", 1)] == ["n2"]
    assert [r.id for r in versions.notes_quoting(NS, "n1", "s1", "moving")] == ["n2"]
    live = {r.id for r in versions.live_facts(NS, T0 + timedelta(days=3))}
    assert "x1" not in live and "c1" in live
    assert "x1" in {r.id for r in versions.live_facts(NS, T0 + timedelta(days=1))}
    assert versions.live_facts(NS, T0 + timedelta(days=3), known_at=T0 - timedelta(days=1)) == []
    assert set(versions.states_known_at(NS, T0 + timedelta(days=1))) == {"n1", "n2", "old", "ended", "fight"}
    assert versions.expired_keys(T0 + timedelta(days=2)) == {NS: ["old"]}
    assert versions.expired_keys(T0) == {}
    assert versions.conflicted_namespaces() == [("acme", "user", "ana")]


def test_redact_rewrites_in_place_and_stays_verified(pg_db: PgConnection, tmp_path: Path) -> None:
    versions = log(pg_db, tmp_path / "keys")
    secret = version("v1", i=1)
    quoting = version("v2", key="other", i=3, index_context="quotes the secret")
    versions.apply(batch([secret, quoting]))
    entry = audit_entry(NS, "k", "redact", [secret], None, "agent:a", T0)
    versions.redact(
        [secret], '"[redacted]"', "0" * 64, entry, requoted=[replace(quoting, index_context="quotes the [redacted]")]
    )
    (row,) = versions.version_rows(["v1"])
    assert row.value_json == '"[redacted]"' and row.provenance.source_quote is None
    assert versions.version_rows(["v2"])[0].index_context == "quotes the [redacted]"
    assert versions.last_seq == 2  # redact appends no version row
    assert versions._graph.forgotten == ["f-v1"]  # type: ignore[attr-defined]
    report = versions.verify_audit()
    assert report.ok, report


def test_another_process_sees_every_write_at_once(pg_url: str, tmp_path: Path) -> None:
    """No process caches rows: a second connection's log reads what the first just wrote."""
    one, two = connect(pg_url), connect(pg_url)
    try:
        a, b = log(one, tmp_path / "keys"), log(two, tmp_path / "keys")
        assert b.namespace_states(NS) == {}
        a.apply(batch([version("v1")]))
        assert b.head(NS, "k") is not None and b.last_seq == 1 and b.keys(NS) == ["k"]
        b.apply(batch([version("v2", fact_id="f-v1", v=2)]))
        assert [r.id for r in a.fact_states(NS, "k")] == ["v2"] and a.last_seq == 2
        assert a.verify_audit().ok and b.verify_audit().ok
    finally:
        one.close()
        two.close()


def test_two_processes_appending_at_once_get_contiguous_seqs(pg_url: str, tmp_path: Path) -> None:
    """Two "processes" (their own connections) run read-decide-commit on one key at once: every
    version number is taken once, seqs are unique and contiguous, and the chain verifies."""
    writes = 15
    dbs = [connect(pg_url), connect(pg_url)]
    try:
        logs = [log(db, tmp_path / "keys") for db in dbs]
        errors: list[BaseException] = []
        start = threading.Barrier(2)

        def run(name: str, versions: object) -> None:
            try:
                start.wait()
                for i in range(writes):
                    with versions.locked():  # type: ignore[attr-defined]
                        head = versions.head(NS, "shared")  # type: ignore[attr-defined]
                        v = (head.version if head else 0) + 1
                        rows = [version(f"{name}-{i}", key="shared", fact_id="f-shared", v=v, i=i)]
                        rows += [version(f"{name}-{i}-{j}", key=f"{name}-{i}-{j}", i=j) for j in range(i % 3)]
                        versions.apply(batch(rows, "shared"))  # type: ignore[attr-defined]
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(n, v)) for n, v in zip("ab", logs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        seqs = [s for s, _ in logs[0].changes_since(0, 10_000)]
        assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) == 2 * sum(1 + i % 3 for i in range(writes))
        assert [r.version for r in logs[1].history(NS, "shared")] == list(range(1, 2 * writes + 1))
        audit = logs[1].audit_rows()
        assert [r.seq for r in audit] == list(range(1, 2 * writes + 1))
        for versions in logs:
            report = versions.verify_audit()
            assert report.ok and report.signed, report
    finally:
        for db in dbs:
            db.close()
