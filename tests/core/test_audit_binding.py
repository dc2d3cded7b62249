"""The audit chain binds the data: an edit of any stored row a read answers from, a removed or
inserted row, a cut-off tail, or a chain recomputed without the home's key is detected, and the
report says which row."""

from __future__ import annotations

import os
import shutil
import stat

import duckdb
import pytest

from memory_core import Identity, Memory
from memory_core.adapters.duckdb.audit_ledger import BOUND, LEDGER, SELF_BOUND
from memory_core.adapters.duckdb.schema import VERSION_COLUMNS
from memory_core.adapters.home_key import PRIVATE_FILE, PUBLIC_FILE, HomeKey
from memory_core.audit import LedgerLine, chain, data_root, head_message
from memory_core.errors import AuditKeyMissing
from tests.core.test_graph import lives


@pytest.fixture
def written(memory, tool_for):
    ana = tool_for()
    ana.set("city", "Lisbon")
    ana.set("home", "I live in London", relations=lives("London"))
    ana.set("city", "Porto")
    ana.delete("city")
    ana.restore("city")
    tool_for(admin=True).configure(char_limit=500)
    assert memory.verify_audit().ok and memory.verify_audit().signed
    return memory


def sql(memory, statement, params=()):
    return memory.store.unchecked_sql(statement, list(params))


def first_version(memory):
    return sql(memory, "SELECT * FROM memory_versions ORDER BY seq LIMIT 1")[0]


# A changed value for each column of a version row, of the column's own type.
EDITS = {
    "seq": "seq + 1000",
    "id": "id || 'x'",
    "fact_id": "fact_id || 'x'",
    "tenant": "'mallory'",
    "scope": "'tenant'",
    "owner_id": "'mallory'",
    "key": "key || 'x'",
    "value_json": "'\"forged\"'",
    "content_sha256": "repeat('0', 64)",
    "kind": "'note'",
    "memory_type": "'forged'",
    "status": "'deleted'",
    "op": "'delete'",
    "version": "version + 7",
    "change_id": "change_id || 'x'",
    "observed_at": "TIMESTAMPTZ '2001-01-01 00:00:00+00'",
    "valid_at": "valid_at - INTERVAL 1 DAY",
    "invalid_at": "TIMESTAMPTZ '2030-01-01 00:00:00+00'",
    "created_at": "created_at + INTERVAL 1 SECOND",
    "superseded_by": "'forged'",
    "source_class": "'forged'",
    "sensitivity": "'high'",
    "expires_at": "TIMESTAMPTZ '2030-01-01 00:00:00+00'",
    "audit_seq": "audit_seq + 1",
    "attrs": "replace(attrs, '\"locked\": false', '\"locked\": true')",
    "row_digest": "repeat('0', 64)",  # the digest the row was written with
}


def test_every_column_of_every_bound_table_is_in_its_digest(written):
    assert set(EDITS) == {*VERSION_COLUMNS, "row_digest"}
    for table, bound in BOUND.items():
        found = sql(written, "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table])
        columns = {r["column_name"] for r in found} - ({"row_digest"} if table in SELF_BOUND else set())
        assert columns == set(bound.columns), table


@pytest.mark.parametrize("column", [*VERSION_COLUMNS, "row_digest"])
def test_editing_any_column_of_a_version_row_is_detected_and_located(written, column):
    row = first_version(written)
    sql(written, f"UPDATE memory_versions SET {column} = {EDITS[column]} WHERE id = ?", [row["id"]])
    report = written.verify_audit()
    assert not report.ok
    assert report.table == "memory_versions" and row["id"] in (report.row_key or ""), report
    if column != "audit_seq":  # an edited audit_seq moves the row's own line to the seq it names
        assert report.seq == row["audit_seq"]


def test_a_forged_value_is_caught_before_anyone_trusts_what_get_serves(written, tool_for):
    sql(written, "UPDATE memory_versions SET value_json = '\"Madrid\"' WHERE key = 'city' AND version = 1")
    report = written.verify_audit()
    assert not report.ok and report.table == "memory_versions" and "edited" in report.problem


def test_deleting_a_version_row_is_detected_and_located(written):
    row = first_version(written)
    sql(written, "DELETE FROM memory_versions WHERE id = ?", [row["id"]])
    report = written.verify_audit()
    assert not report.ok and "gone" in report.problem and row["id"] in report.row_key
    assert report.table == "memory_versions" and report.seq == row["audit_seq"]


def test_inserting_a_version_row_is_detected_and_located(written):
    row = first_version(written)
    forged = {**row, "id": "forged-row", "seq": 999, "version": 9, "value_json": '"Rome"', "row_digest": None}
    sql(
        written,
        f"INSERT INTO memory_versions ({', '.join(forged)}) VALUES ({', '.join('?' * len(forged))})",
        list(forged.values()),
    )
    report = written.verify_audit()
    assert not report.ok and "inserted" in report.problem and "forged-row" in report.row_key


@pytest.mark.parametrize(
    "table,edit",
    [
        ("graph_triples", "UPDATE graph_triples SET object = 'Paris'"),
        ("graph_links", "DELETE FROM graph_links"),
        ("graph_entities", "UPDATE graph_entities SET entity_type = 'forged'"),
        ("write_config", "UPDATE write_config SET config_json = '{}'"),
    ],
)
def test_editing_the_graph_or_the_settings_is_detected_and_located(written, table, edit):
    sql(written, edit)
    report = written.verify_audit()
    assert not report.ok and report.table == table, report


def test_editing_the_ledger_is_detected(written):
    seq = sql(written, "SELECT min(seq) AS seq FROM audit_digests WHERE tbl = 'graph_triples'")[0]["seq"]
    sql(written, "UPDATE audit_digests SET row_key = '[\"forged\"]' WHERE seq = ? AND tbl = 'graph_triples'", [seq])
    report = written.verify_audit()
    assert not report.ok and report.table == "graph_triples", report


def test_truncating_the_tail_is_detected_from_the_signed_head(written):
    """Remove the newest write whole (its audit rows, its ledger lines, its data): every row that
    is left agrees with the chain that is left, and only the signed head tells."""
    last = sql(written, "SELECT max(seq) AS seq FROM audit_log")[0]["seq"]
    sql(written, "DELETE FROM audit_digests WHERE seq = ?", [last])
    sql(written, "DELETE FROM audit_log WHERE seq = ?", [last])
    sql(written, "DELETE FROM write_config")
    report = written.verify_audit()
    assert not report.ok and "signed head" in report.problem and report.seq == last


def _recompute_without_the_key(memory, version_id, value_json, *, sign_with=None):
    """What an attacker who can write the file but not read the key does: forge a value, then
    recompute its digest, the write's data root, every row hash after it and the head."""
    bound = BOUND["memory_versions"]
    sql(memory, "UPDATE memory_versions SET value_json = ? WHERE id = ?", [value_json, version_id])
    digest = sql(memory, f"SELECT {bound.digest_sql} AS d FROM memory_versions WHERE id = ?", [version_id])[0]["d"]
    sql(memory, "UPDATE memory_versions SET row_digest = ? WHERE id = ?", [digest, version_id])
    lines: dict[int, list[LedgerLine]] = {}
    for r in sql(memory, LEDGER):
        lines.setdefault(r["seq"], []).append(LedgerLine(r["tbl"], r["change"], r["digest"], r["row_key"]))
    roots = {seq: data_root(group, committed=True) for seq, group in lines.items()}
    rows = memory.store.versions.audit_rows()
    prev = rows[0].prev_hash
    for row in rows:
        root = roots.get(row.seq, row.data_root) if row.data_root is not None else None
        fixed = chain(row.seq, row.entry, prev, root)
        sql(
            memory,
            "UPDATE audit_log SET prev_hash = ?, row_hash = ?, data_root = ? WHERE seq = ?",
            [fixed.prev_hash, fixed.row_hash, fixed.data_root, row.seq],
        )
        prev = fixed.row_hash
    signature = sign_with.sign(head_message(rows[-1].seq, prev)) if sign_with else None
    sql(
        memory,
        "UPDATE audit_head SET row_hash = ?" + (", signature = ?" if signature else ""),
        [prev, *([signature] if signature else [])],
    )


def test_a_chain_recomputed_without_the_key_fails_on_its_signature(written):
    row = first_version(written)
    _recompute_without_the_key(written, row["id"], '"Madrid"')
    report = written.verify_audit()
    assert not report.ok and "signature" in report.problem and report.table == "audit_head"


def test_a_chain_signed_with_another_key_fails(written, tmp_path):
    row = first_version(written)
    _recompute_without_the_key(written, row["id"], '"Madrid"', sign_with=HomeKey.create(tmp_path / "mallory"))
    report = written.verify_audit()
    assert not report.ok and "signature" in report.problem


def test_a_lawful_redact_still_verifies_and_records_digests_not_bytes(memory, tool):
    tool.set("diagnosis", "a secret diagnosis")
    tool.set("diagnosis", "all clear")
    old = tool.history("diagnosis")[0]
    tool.redact("diagnosis", old.id)
    report = memory.verify_audit()
    assert report.ok, report
    lines = sql(memory, "SELECT * FROM audit_digests WHERE row_key = ? ORDER BY seq, change", [f'["{old.id}"]'])
    written_with = sql(memory, "SELECT row_digest FROM memory_versions WHERE id = ?", [old.id])[0]["row_digest"]
    assert [line["change"] for line in lines] == ["+", "-"]  # the scrub: the digest it replaced, and the new
    assert lines[1]["digest"] == written_with and lines[0]["digest"] != written_with
    every = repr(sql(memory, "SELECT * FROM audit_digests")) + repr(sql(memory, "SELECT * FROM audit_log"))
    assert "secret" not in every


def test_the_key_is_the_owners_alone_and_a_reader_verifies_with_the_public_half(home, written):
    private = home / "keys" / PRIVATE_FILE
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600
    written.close()
    with Memory.open(home, read_only=True) as reader:
        assert reader.verify_audit().ok
    os.rename(private, home / "private.bak")
    with Memory.open(home, read_only=True) as reader:  # the public half is enough to verify
        assert reader.verify_audit().ok
    with pytest.raises(AuditKeyMissing):  # but writing on needs the private half
        Memory.open(home)
    os.rename(home / "private.bak", private)
    os.remove(home / "keys" / PUBLIC_FILE)
    os.rename(private, home / "private.bak")
    with Memory.open(home, read_only=True) as reader:
        report = reader.verify_audit()
        assert not report.ok and "public key is missing" in report.problem


def test_a_key_kept_outside_the_home(tmp_path, clock):
    home, keys = tmp_path / "home", tmp_path / "vault"
    with Memory.open(home, clock=clock, key_dir=keys) as memory:
        memory.for_run(Identity(tenant="t", user="u")).set("k", "v")
        assert memory.verify_audit().ok
    assert (keys / PRIVATE_FILE).exists() and not (home / "keys").exists()
    with Memory.open(home, read_only=True, key_dir=keys) as reader:
        assert reader.verify_audit().signed


def test_a_home_written_before_the_chain_bound_data_adopts_its_rows(home, clock):
    """A schema 5 home: no ledger, no data roots, an unsigned head, no key. Opened for writing, it
    records every stored row once (an ``adopt`` audit row); from then on an edit is caught."""
    with Memory.open(home, clock=clock) as memory:
        ana = memory.for_run(Identity(tenant="t", user="u"))
        ana.set("k", "v1")
        ana.set("k", "v2")
        rows = memory.store.versions.audit_rows()
    con = duckdb.connect(str(home / "memory.duckdb"))  # back to the v5 layout, chained as v5 did
    con.execute("DROP TABLE audit_digests")
    con.execute("DROP TABLE state_changes")  # v8's: a v5 home has no event stream
    con.execute("ALTER TABLE memory_versions DROP COLUMN row_digest")
    con.execute("ALTER TABLE audit_log DROP COLUMN data_root")
    con.execute("DROP TABLE audit_head")
    con.execute("CREATE TABLE audit_head (seq BIGINT NOT NULL, row_hash VARCHAR NOT NULL)")
    prev = rows[0].prev_hash
    for row in rows:
        v5 = chain(row.seq, row.entry, prev, committed=False)  # v5 rows hash their key itself
        con.execute("UPDATE audit_log SET prev_hash = ?, row_hash = ? WHERE seq = ?", [prev, v5.row_hash, row.seq])
        prev = v5.row_hash
    con.execute("UPDATE meta SET value = '5' WHERE name = 'schema_version'")
    con.execute("DELETE FROM meta WHERE name = 'audit_key_commit_from'")  # v9's
    con.close()
    shutil.rmtree(home / "keys")

    with Memory.open(home, clock=clock) as memory:
        audit = memory.store.versions.audit_rows()
        assert [r.entry.op for r in audit] == ["set", "set", "adopt"]
        assert audit[0].data_root is None and audit[-1].data_root is not None
        report = memory.verify_audit()
        assert report.ok and report.signed, report
        memory.for_run(Identity(tenant="t", user="u")).set("k", "v3")
        assert memory.verify_audit().ok
        sql(memory, "UPDATE memory_versions SET value_json = '\"forged\"' WHERE version = 1")
        report = memory.verify_audit()
        assert not report.ok and report.table == "memory_versions" and report.seq == 3  # the adopt row
