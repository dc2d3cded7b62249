"""Erasure: a user, an agent or a tenant goes from every plane of the home, the census proves it
(0 rows in scope, 0 occurrences of the erased bytes in any file), and nobody else's data moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core import FixedClock, Identity, Memory
from memory_core.erasure import ErasureStatus
from memory_core.errors import ErasureNotFound, ErasureUnderWay, InvalidInput
from tests.conftest import T0
from tests.erasure_home import SCOPES, SECRETS, fill, open_home, tools, view


def files_holding(home: Path, secret: str) -> list[str]:
    """Every file under the home whose bytes hold the secret, in any letter case."""
    needles = {secret.encode(), secret.title().encode(), secret.upper().encode()}
    return [str(p) for p in home.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)]


@pytest.fixture
def filled(home):
    clock = FixedClock(T0)
    with open_home(home, clock) as memory:
        fill(memory, clock)
        yield memory


CASES = {
    "user": ({"user": "ana"}, ["ana"], ["bea", "helper", "zed"]),
    "agent": ({"agent": "helper"}, ["helper"], ["ana", "bea", "zed"]),
    "tenant": ({}, ["ana", "bea", "helper"], ["zed"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_erasure_leaves_no_row_and_no_byte_and_touches_nobody_else(filled, home, case):
    named, erased, kept = CASES[case]
    people = tools(filled)
    for name in erased:  # the secret is there, in every plane, before
        assert files_holding(home, SECRETS[name])
        assert people[name].recall(SECRETS[name], scope=SCOPES[name]).hits
    before = {name: view(people[name], SCOPES[name]) for name in kept}

    request = filled.erase("acme", actor="admin:dpo", **named)

    assert request.status is ErasureStatus.VERIFIED, request.error
    assert request.residue_count == 0 and request.verified_at is not None
    residue = {k: v for k, v in request.residue.items() if not k.startswith("census:")}
    assert residue and not any(residue.values())  # every table counted, every count zero
    assert "rows:memory_versions" in residue and "rows:sql_databases" in residue and "text:audit_log" in residue
    assert request.residue["census:needles"] > 0 and request.residue["census:files_scanned"] > 0
    for name in erased:
        assert not files_holding(home, SECRETS[name]), f"{name}'s secret is still on disk"
        assert people[name].list(scope=SCOPES[name]) == []
        assert people[name].get(f"gate-{SECRETS[name]}", scope=SCOPES[name]) is None  # nor from a cache
        assert people[name].recall(SECRETS[name], scope=SCOPES[name]).hits == ()
    for name in kept:  # untouched, and still served
        assert view(people[name], SCOPES[name]) == before[name]
        assert people[name].recall(SECRETS[name], scope=SCOPES[name]).hits
        assert files_holding(home, SECRETS[name])
    assert filled.verify_audit().ok  # the keys went from the chain, and it still verifies
    assert [r.request_id for r in filled.erasures()] == [request.request_id]


def test_the_erased_scope_takes_writes_again_once_verified(filled):
    filled.erase("acme", user="ana")
    ana = tools(filled)["ana"]
    ana.set("city", "Lisbon")
    assert ana.get("city").value == "Lisbon"


class Stop(Exception):
    pass


def stop_at(point: str):
    def observe(seen: str) -> None:
        if seen == point:
            raise Stop(point)

    return observe


def test_a_stopped_saga_holds_its_scope_and_recovery_finishes_it(filled, home):
    people = tools(filled)
    with pytest.raises(Stop):
        filled.erase("acme", user="ana", observer=stop_at("after:rows"))
    [request] = filled.erasures()
    assert request.status is ErasureStatus.RUNNING and request.steps == ("collect", "index", "rows")
    with pytest.raises(ErasureUnderWay):  # nothing lands in the held scope meanwhile
        people["ana"].set("city", "Lisbon")
    with pytest.raises(ErasureUnderWay):  # nor waits in the extraction queue to land later
        people["ana"].enqueue_extraction([{"role": "user", "content": "I moved to Porto."}])
    assert filled.resolve().actions.get("retire", 0) == 0  # the resolver leaves the scope alone
    people["bea"].set("city", "Porto")  # another user of the tenant writes as ever
    assert filled.recover_erasures() == {"resumed": 1, "verified": 1, "abandoned": 0}
    [done] = filled.erasures()
    assert done.status is ErasureStatus.VERIFIED and done.attempts == 2 and done.residue_count == 0
    assert not files_holding(home, SECRETS["ana"])
    versions = filled.store.erasure.versions(done.request_id)
    assert [v.version for v in versions] == list(range(1, len(versions) + 1))  # one version per checkpoint


def test_residue_the_saga_cannot_remove_fails_it_by_name_then_recovery_gives_up(filled, home):
    (home / "notes.txt").write_text(f"copied by hand: {SECRETS['ana']}")  # not the store's, not derived
    (home / "reports").mkdir()
    (home / "reports" / "summary.md").write_text(f"a report quoting {SECRETS['ana']}")  # derived: it goes
    request = filled.erase("acme", user="ana")
    assert request.status is ErasureStatus.FAILED
    assert request.residue["file:notes.txt"] == 1 and request.residue_count == 1
    assert "file:notes.txt: 1" in request.error
    assert not (home / "reports" / "summary.md").exists()
    with pytest.raises(ErasureUnderWay):  # a failed erasure still holds its scope
        tools(filled)["ana"].set("city", "Lisbon")
    assert filled.recover_erasures(max_attempts=2) == {"resumed": 1, "verified": 0, "abandoned": 0}
    assert filled.recover_erasures(max_attempts=2) == {"resumed": 0, "verified": 0, "abandoned": 1}
    [gone] = filled.erasures()
    assert gone.status is ErasureStatus.ABANDONED and "abandoned after 2 attempt(s)" in gone.error
    assert not (home / "erasures").exists() or not list((home / "erasures").iterdir())
    tools(filled)["ana"].set("city", "Lisbon")  # an abandoned erasure holds nothing


def test_a_bad_request_is_refused_and_writes_nothing(filled):
    before = filled.store.inspection.tables()
    with pytest.raises(InvalidInput):
        filled.erase("acme", user="ana", agent="helper")
    with pytest.raises(InvalidInput):
        filled.erase("acme", namespaces=["ana"])
    with pytest.raises(InvalidInput):
        filled.erase("acme", namespaces=["global/x"])
    with pytest.raises(InvalidInput):
        filled.erase("")
    with pytest.raises(ErasureNotFound):
        filled.erasures("no-such-request")
    assert filled.store.inspection.tables() == before


def test_a_namespace_list_erases_exactly_those_namespaces(filled, home):
    request = filled.erase("acme", namespaces=["user/ana", "agent/helper"])
    assert request.status is ErasureStatus.VERIFIED
    assert not files_holding(home, SECRETS["ana"]) and not files_holding(home, SECRETS["helper"])
    assert files_holding(home, SECRETS["bea"])


def _as_written_before_schema_9(home) -> None:
    """Rehash every audit row as schema 8 did (the key itself, ledger lines' keys in clear) and
    put the commitment floor after them, as the v9 migration of such a home does."""
    import duckdb

    from memory_core.adapters.duckdb.audit_chain import COMMIT_FLOOR
    from memory_core.adapters.duckdb.audit_ledger import LEDGER
    from memory_core.adapters.home_key import HomeKey
    from memory_core.audit import LedgerLine, chain, data_root, head_message

    with Memory.open(home) as memory:
        rows = memory.store.versions.audit_rows()
    con = duckdb.connect(str(home / "memory.duckdb"))
    lines: dict[int, list[LedgerLine]] = {}
    for seq, tbl, change, digest, row_key in con.execute(LEDGER).fetchall():
        lines.setdefault(seq, []).append(LedgerLine(tbl, change, digest, row_key))
    prev = rows[0].prev_hash
    for row in rows:
        root = data_root(lines.get(row.seq, ()), committed=False) if row.data_root is not None else None
        legacy = chain(row.seq, row.entry, prev, root, committed=False)
        con.execute(
            "UPDATE audit_log SET prev_hash = ?, row_hash = ?, data_root = ? WHERE seq = ?",
            [legacy.prev_hash, legacy.row_hash, legacy.data_root, row.seq],
        )
        prev = legacy.row_hash
    key = HomeKey.load(home / "keys", private=True)
    con.execute("UPDATE audit_head SET row_hash = ?, signature = ?", [prev, key.sign(head_message(rows[-1].seq, prev))])
    con.execute("UPDATE meta SET value = ? WHERE name = ?", [str(rows[-1].seq + 1), COMMIT_FLOOR])
    con.close()


def test_a_home_from_before_schema_9_still_verifies_and_its_erasure_fails_by_name(home):
    with Memory.open(home) as memory:
        ana = memory.for_run(Identity(tenant="acme", user="ana"))
        ana.set("hobby", "plays the zebracrossing flute", relations=[["I", "plays", "zebracrossing"]])
    _as_written_before_schema_9(home)
    with Memory.open(home) as memory:
        assert memory.verify_audit().ok
        request = memory.erase("acme", user="ana")
        # Its audit rows hashed the keys themselves: they cannot go without breaking the chain.
        assert request.status is ErasureStatus.FAILED and request.residue["rows:audit_log"] > 0
        assert memory.verify_audit().ok  # and nothing the erasure did broke it
        assert memory.for_run(Identity(tenant="acme", user="ana")).list() == []  # the rows went


def test_long_ids_and_a_webhook_do_not_stand_in_the_census_way(home):
    clock = FixedClock(T0)
    with open_home(home, clock) as memory:
        memory.webhook_register("acme", "http://127.0.0.1:9/hook")
        for user in ("ana.pereira@example.com", "bea.santos@example.com"):
            tool = memory.for_run(Identity(tenant="acme", user=user, session="s1"))
            tool.set("note", f"{user} keeps the zebracrossing notebook")
            tool.enqueue_extraction([{"role": "user", "content": "I moved to Porto."}])
        request = memory.erase("acme", user="ana.pereira@example.com")
        assert request.status is ErasureStatus.VERIFIED, request.error
        assert not files_holding(home, "ana.pereira@example.com keeps")
