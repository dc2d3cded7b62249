"""The hash-chained audit log: one hash-only row per write, tampering detected."""

import pytest

from memory_core.cli import main


@pytest.fixture
def written(memory, tool, clock):
    tool.set("a", "alpha")
    tool.set("b", "beta")
    tool.set("a", "alpha2")
    tool.delete("b")
    tool.restore("b")
    return memory


def test_one_hash_only_row_per_write_and_the_chain_verifies(written):
    rows = written.store.unchecked_sql("SELECT * FROM audit_log ORDER BY seq")
    assert [r["op"] for r in rows] == ["set", "set", "set", "delete", "restore"]
    assert all(r["prev_hash"] == prev["row_hash"] for prev, r in zip(rows, rows[1:]))
    text = repr(rows)
    assert "alpha" not in text and "beta" not in text  # hashes, never values
    assert written.verify_audit().ok


@pytest.mark.parametrize(
    "tamper",
    [
        "UPDATE audit_log SET actor = 'agent:mallory' WHERE seq = 2",
        "UPDATE audit_log SET content_sha256 = repeat('0', 64) WHERE seq = 1",
        "DELETE FROM audit_log WHERE seq = 3",
        "DELETE FROM audit_log WHERE seq = 5",
        "UPDATE audit_log SET seq = CASE seq WHEN 2 THEN 3 WHEN 3 THEN 2 END WHERE seq IN (2, 3)",
    ],
)
def test_editing_removing_or_reordering_a_row_fails_verification(written, tamper):
    written.store.unchecked_sql(tamper)
    report = written.verify_audit()
    assert not report.ok and report.problem


def test_swapping_two_rows_contents_fails_verification(written):
    rows = written.store.unchecked_sql("SELECT * FROM audit_log ORDER BY seq")
    written.store.unchecked_sql("DELETE FROM audit_log")
    order = [rows[0], rows[2], rows[1], rows[3], rows[4]]
    for r in order:
        written.store.unchecked_sql("INSERT INTO audit_log VALUES (" + ", ".join("?" * len(r)) + ")", list(r.values()))
    assert not written.verify_audit().ok


def test_cli_audit_verify_exits_non_zero_on_a_broken_chain(written, home, capsys):
    written.store.unchecked_sql("UPDATE audit_log SET key = 'other' WHERE seq = 1")
    written.close()
    out: list[str] = []
    assert main(["--home", str(home), "--embedder", "none", "audit", "verify", "--json"], out=out.append) == 1
    assert '"ok": false' in out[0]


def test_removing_the_newest_row_of_a_write_without_version_rows_fails_verification(memory, tool_for):
    admin = tool_for(admin=True)
    admin.set("a", "alpha")
    admin.configure(char_limit=100)  # a settings change appends an audit row and no version row
    assert memory.verify_audit().ok
    memory.store.unchecked_sql("DELETE FROM audit_log WHERE op = 'configure'")
    assert not memory.verify_audit().ok
