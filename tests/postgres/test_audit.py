"""The audit chain of a PostgreSQL authority: digests computed by PostgreSQL at write and verify
time alike, every edit by hand reported with the row it broke, one chain across processes (each
write chains onto the head the database holds), and a verify that reads one snapshot without
stopping writers."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memory_core.adapters.duckdb.audit_chain import AUDIT_COLUMNS, audit_params
from memory_core.adapters.home_key import HomeKey
from memory_core.adapters.postgres.audit_chain import PgAuditChain
from memory_core.adapters.postgres.audit_ledger import BOUND, insert_self_bound
from memory_core.adapters.postgres.connection import PgConnection
from memory_core.audit import GENESIS_HASH, AuditEntry, chain
from tests.conftest import T0
from tests.postgres.conftest import connect
from tests.postgres.log_kit import NS, batch, log, version


def entry(key: str = "k", op: str = "set") -> AuditEntry:
    return AuditEntry(T0, NS.tenant, NS.scope.value, NS.owner_id, key, op, "", None, "agent:a")


def test_a_row_edited_by_hand_is_reported(pg_db: PgConnection, tmp_path: Path) -> None:
    versions = log(pg_db, tmp_path / "keys")
    versions.apply(batch([version("v1", i=1), version("v2", key="other", i=2)]))
    assert versions.verify_audit().ok
    pg_db.rows("UPDATE memory_versions SET value_json = '\"forged\"' WHERE id = 'v1'")
    report = versions.verify_audit()
    assert not report.ok and report.table == "memory_versions" and report.row_key == '["v1"]'
    assert "edited" in (report.problem or "") and report.seq == 1


@pytest.mark.parametrize(
    ("tamper", "words"),
    [
        ("DELETE FROM memory_versions WHERE id = 'v2'", "is gone"),
        ("UPDATE memory_versions SET created_at = created_at + interval '1 microsecond' WHERE id = 'v2'", "edited"),
        ("UPDATE memory_versions SET attrs = attrs || ' ' WHERE id = 'v2'", "edited"),
        ("UPDATE audit_log SET actor = 'someone' WHERE seq = 1", "audit row was edited"),
        ("DELETE FROM audit_log WHERE seq = 2", "audit row 2"),
        ("DELETE FROM audit_head", "signed head is missing"),
    ],
)
def test_every_kind_of_tampering_is_caught(pg_db: PgConnection, tmp_path: Path, tamper: str, words: str) -> None:
    versions = log(pg_db, tmp_path / "keys")
    versions.apply(batch([version("v1", i=1)]))
    versions.apply(batch([version("v2", key="k2", i=2)], "k2"))
    assert versions.verify_audit().ok
    pg_db.rows(tamper)
    report = versions.verify_audit()
    assert not report.ok and words in (report.problem or ""), report


def test_recorded_lines_bind_any_bound_table(pg_db: PgConnection, tmp_path: Path) -> None:
    """``added`` / ``touching`` record a table's rows; an edit by hand of one is reported by key."""
    audit = PgAuditChain(pg_db, None, new_key_dir=tmp_path / "keys")
    with audit.transaction([entry()]) as tx:
        tx.execute("INSERT INTO write_config VALUES (?, ?, ?, ?)", ["acme", "note", '{"limit": 0.1}', T0])
        tx.added("write_config", "tenant = ?", ["acme"])
        event = [1, "e1", "memory.set", "acme", "user", "ana", None, '{"a": "é"}', tx.seq]
        tx.lines.extend(insert_self_bound(tx.con, "state_changes", [event]))
    with audit.transaction([entry(), entry()]) as tx:
        with tx.touching("write_config", "tenant = ?", ["acme"]):
            tx.execute("UPDATE write_config SET config_json = ?", ['{"limit": 0.3}'])
    report = audit.verify()
    assert report.ok and report.rows == 3 and report.signed, report
    stored = pg_db.rows(f"SELECT row_digest, {BOUND['state_changes'].digest_sql} FROM state_changes")
    assert stored[0][0] == stored[0][1]  # the digest written is the one recomputed from the row
    assert pg_db.one(f"SELECT {BOUND['state_changes'].digest_of_params}", event) == stored[0][0]
    pg_db.rows("UPDATE write_config SET updated_at = updated_at + interval '1 second'")
    report = audit.verify()
    assert not report.ok and report.table == "write_config" and report.row_key == '["acme", "note"]', report


def test_the_head_is_one_signed_row(pg_db: PgConnection, tmp_path: Path) -> None:
    audit = PgAuditChain(pg_db, None, new_key_dir=tmp_path / "keys")
    assert audit.signed_head() is None and audit.head == (0, GENESIS_HASH)
    for _ in range(3):
        with audit.transaction([entry()]):
            pass
    assert pg_db.one("SELECT count(*) FROM audit_head") == 1
    head = audit.signed_head()
    assert head is not None and head.seq == 3 and audit.head == (3, head.row_hash)
    assert head.key_id == HomeKey.load(tmp_path / "keys", private=False).key_id  # type: ignore[union-attr]
    assert [r.seq for r in audit.rows()] == [1, 2, 3] and all(r.committed for r in audit.rows())
    # A chain recomputed and signed with another key does not verify with the authority's.
    other = PgAuditChain(pg_db, HomeKey.create(tmp_path / "other"))
    with other.transaction([entry()]):
        pass
    report = audit.verify()
    assert not report.ok and "signature" in (report.problem or ""), report


def test_a_write_that_fails_moves_nothing(pg_db: PgConnection, tmp_path: Path) -> None:
    audit = PgAuditChain(pg_db, None, new_key_dir=tmp_path / "keys")
    with pytest.raises(RuntimeError):
        with audit.transaction([entry()]) as tx:
            tx.execute("INSERT INTO write_config VALUES (?, ?, ?, ?)", ["acme", "note", "{}", T0])
            raise RuntimeError("refused")
    assert audit.rows() == [] and audit.signed_head() is None
    assert pg_db.one("SELECT count(*) FROM write_config") == 0


def test_adopt_binds_an_unbound_chain_once(pg_db: PgConnection, tmp_path: Path) -> None:
    audit = PgAuditChain(pg_db, None, new_key_dir=tmp_path / "keys")
    assert not audit.adopt(entry("*", "adopt"))  # a new authority: its first write starts the chain
    # A chain written before it bound data: a row without a data root, and rows no line records.
    old = chain(1, entry(), GENESIS_HASH, None, True)
    pg_db.rows(f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ({', '.join('?' * 13)})", audit_params(old))
    pg_db.rows("INSERT INTO write_config VALUES ('acme', 'note', '{}', ?)", [T0])
    assert audit.adopt(entry("*", "adopt"))
    assert not audit.adopt(entry("*", "adopt"))
    report = audit.verify()
    assert report.ok and report.rows == 2, report


def test_two_processes_chain_onto_the_head_the_database_holds(pg_url: str, tmp_path: Path) -> None:
    """Two chains over their own connections (two replicas sharing one key directory, neither
    holding a key yet) write in turn: each write reads the head from the database, so the
    chain is one line, and the two make one key between them."""
    dbs = [connect(pg_url), connect(pg_url)]
    try:
        chains = [PgAuditChain(db, None, new_key_dir=tmp_path / "keys") for db in dbs]
        for i in range(6):
            with chains[i % 2].transaction([entry(f"k{i}")]):
                pass
        assert [r.seq for r in chains[0].rows()] == list(range(1, 7))
        assert chains[0].key is not None and chains[1].key is not None
        assert chains[0].key.key_id == chains[1].key.key_id
        assert chains[0].verify().ok and chains[1].verify().ok
    finally:
        for db in dbs:
            db.close()


def test_verify_reads_one_snapshot_while_a_write_is_open(pg_url: str, tmp_path: Path) -> None:
    """A write held open in another process neither blocks a verify nor shows it half a write."""
    writer_db, reader_db = connect(pg_url), connect(pg_url)
    try:
        writer, reader = log(writer_db, tmp_path / "keys"), log(reader_db, tmp_path / "keys")
        writer.apply(batch([version("v1")]))
        inside, release = threading.Event(), threading.Event()

        def hold() -> None:
            inside.set()
            assert release.wait(10)

        thread = threading.Thread(target=lambda: writer.apply(batch([version("v2", key="k2")]), before_commit=hold))
        thread.start()
        assert inside.wait(10)
        try:
            report = reader.verify_audit()  # the second write's rows are in, its audit row not yet
            assert report.ok and report.rows == 1, report
        finally:
            release.set()
            thread.join()
        report = reader.verify_audit()
        assert report.ok and report.rows == 2, report
    finally:
        writer_db.close()
        reader_db.close()
