"""Lifecycle ops: each change a new version with one audit row; expiry, redact, snapshot, rollback."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from memory_core import Identity, Op, Status
from memory_core.errors import InvalidSnapshot, LiveHead, Locked, NothingToRestore, WrongState
from tests.conftest import T0, store_snapshot

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service


@pytest.fixture
def memory(indexed_memory):
    return indexed_memory


@pytest.fixture
def tool(memory):
    return memory.for_run(Identity(tenant="acme", user="ana", agent="helper", admin=True))


def ops(tool, key):
    return [r.op.value for r in tool.history(key)]


def test_lock_refuses_changes_and_deletes_until_unlocked(tool, clock):
    tool.set("dob", "1990-04-02")
    assert tool.lock("dob").verdict == "locked"
    assert tool.lock("dob").verdict == "unchanged"
    with pytest.raises(Locked):
        tool.set("dob", "1991-04-02")
    with pytest.raises(Locked):
        tool.delete("dob")
    assert tool.set("dob", "1990-04-02").verdict == "restated"  # same bytes: allowed
    tool.unlock("dob")
    assert tool.set("dob", "1991-04-02").verdict == "superseded"
    assert ops(tool, "dob") == ["set", "lock", "restate", "unlock", "supersede", "set"]


def test_pin_holds_until_the_write_pins_too_or_it_is_unpinned(tool):
    tool.set("diet", "vegetarian")
    tool.pin("diet")
    assert tool.get("diet").pinned
    result = tool.set("diet", "vegan", pin=True)
    assert result.verdict == "superseded" and tool.get("diet").pinned
    tool.unpin("diet")
    assert not tool.get("diet").pinned


def test_proposal_decide_and_demote_move_a_fact_between_proposal_and_established(tool):
    tool.set("team", "platform", proposed=True)
    assert tool.get("team").status is Status.PROPOSED
    with pytest.raises(WrongState):
        tool.set("x1", "y") and tool.proposal_decide("x1")
    assert tool.proposal_decide("team").version.status is Status.ACTIVE
    demoted = tool.demote("team").version
    assert demoted.status is Status.PROPOSED and demoted.confidence == 0.5


def test_reject_hides_the_fact_and_restore_undoes_it(tool):
    tool.set("allergy", "penicillin")
    tool.reject("allergy")
    assert tool.get("allergy") is None and tool.history("allergy")[-1].status is Status.REJECTED
    tool.restore("allergy")
    assert tool.get("allergy").value == "penicillin"
    with pytest.raises(NothingToRestore):
        tool.restore("allergy")


def test_restore_after_a_new_write_has_nothing_to_undo(tool):
    tool.set("city", "Berlin")
    tool.delete("city")
    tool.set("city", "Paris")
    with pytest.raises(NothingToRestore):
        tool.restore("city")


def test_delete_version_removes_only_the_head_it_names(tool):
    first = tool.set("city", "Berlin").version
    tool.set("city", "Paris")
    stale = tool.delete_version("city", first.version)
    assert stale.verdict == "version_changed" and stale.rows == () and tool.get("city").value == "Paris"
    head = tool.get("city").version
    assert tool.delete_version("city", head).verdict == "deleted" and tool.get("city") is None


def test_every_lifecycle_change_leaves_one_audit_row(tool, memory):
    tool.set("k", "v")
    before = len(memory.store.versions.audit_rows())
    for op in (tool.lock, tool.unlock, tool.pin, tool.unpin, tool.reject, tool.restore):
        op("k")
    assert [r.entry.op for r in memory.store.versions.audit_rows()[before:]] == [
        "lock",
        "unlock",
        "pin",
        "unpin",
        "reject",
        "restore",
    ]
    assert memory.verify_audit().ok


# -- expiry ------------------------------------------------------------------------------------


def test_reads_hide_an_expired_fact_at_once_and_the_sweep_applies_on_expire(tool, memory, clock):
    tool.set("otp", "code 4411", ttl_seconds=60)
    tool.set("mood", "cheerful", ttl_seconds=60, on_expire="demote")
    tool.set("visit", "saw the dentist", ttl_seconds=60, on_expire="anonymize")
    tool.set("stays", "no expiry")
    assert tool.get("otp").value == "code 4411"
    clock.advance(timedelta(minutes=2))
    assert tool.get("otp") is None and tool.get("mood") is None and tool.get("visit") is None
    assert "otp" not in [f.key for f in tool.list()]
    assert [h.key for h in tool.recall("code 4411").hits if h.key == "otp"] == []
    counts = memory.sweep_expired()
    assert counts == {"tombstone": 1, "demote": 1, "anonymize": 1, "keys": 3}
    assert tool.get("otp") is None and tool.history("otp")[-1].status is Status.TOMBSTONED
    mood = tool.get("mood")
    # demote keeps an established fact established, less sure and no longer due (the seed's demote)
    assert mood.status is Status.ACTIVE and mood.confidence == 0.5 and mood.expires_at is None
    shell = tool.get("visit")
    assert shell.value == "[expired]" and shell.op is Op.EXPIRE
    assert memory.sweep_expired()["keys"] == 0  # nothing left due
    assert "dentist" not in json.dumps([h.value for h in tool.recall("dentist").hits])


# -- redact ------------------------------------------------------------------------------------


def _files_containing(folder: Path, needle: bytes) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_redact_leaves_no_trace_of_the_value_in_duckdb_or_the_index(tool, memory, home, clock):
    secret = "ZEBRA-CROSSING-7731 is the gate code"
    old = tool.set("gate", secret).version
    tool.set("gate", secret)  # a restatement copies the text into a second row
    clock.advance(timedelta(days=1))
    tool.set("gate", "the gate code changed")
    assert tool.recall("ZEBRA-CROSSING-7731", as_of=T0).hits  # the index serves the old value as of then
    memory.projector.index.prewarm()  # as a long-lived process would: a hit's columns held in memory
    with pytest.raises(LiveHead):
        tool.redact("gate", tool.get("gate").id)
    result = tool.redact("gate", old.id)
    assert result.details["versions_redacted"] == 3  # the set, the restatement, the closing row
    rows = memory.store.unchecked_sql("SELECT * FROM memory_versions")
    assert secret not in json.dumps(rows, default=str)
    assert all(
        secret not in json.dumps(list(r.values()), default=str)
        for t in ("audit_log", "projection_failures")
        for r in memory.store.unchecked_sql(f"SELECT * FROM {t}")
    )
    assert [h.key for h in tool.recall("ZEBRA-CROSSING-7731", as_of=T0).hits] == []
    assert _files_containing(home / "lance", b"ZEBRA-CROSSING") == []
    held = memory.projector.index._source.resident._fragments.values()  # nor in this process's memory
    assert not any("ZEBRA-CROSSING" in str(array.to_pylist()) for f in held for array in f.columns.values())
    assert memory.verify_audit().ok
    assert tool.history("gate")[0].value == "[redacted]"
    memory.close()  # and nothing in any file of the home, the DuckDB file and its WAL included
    assert _files_containing(home, b"ZEBRA-CROSSING") == []


# -- snapshot / restore ---------------------------------------------------------------------------


def test_snapshot_restores_into_another_scope_once(tool, memory):
    tool.set("diet", "vegetarian", pin=True)
    tool.set("team", "platform", proposed=True)
    tool.set("city", "Lisbon", valid_at="2024-01-01T00:00:00Z")
    payload = json.loads(json.dumps(tool.snapshot()))  # portable: survives a JSON round trip
    assert payload["format"] == "memcore.snapshot/1" and len(payload["rows"]) == 3
    other = memory.for_run(Identity(tenant="acme", user="bea"))
    result = other.restore_snapshot(payload)
    assert result.verdict == "restored" and result.details["keys"] == 3
    assert other.get("diet").pinned and other.get("team").status is Status.PROPOSED
    assert other.get("city", as_of="2024-02-01T00:00:00Z").value == "Lisbon"
    before = store_snapshot(memory)
    assert other.restore_snapshot(payload).verdict == "already_restored"
    assert store_snapshot(memory) == before


def test_an_altered_snapshot_is_refused_and_writes_nothing(tool, memory):
    tool.set("diet", "vegetarian")
    payload = tool.snapshot()
    payload["rows"][0]["value"] = "carnivore"
    before = store_snapshot(memory)
    with pytest.raises(InvalidSnapshot):
        memory.for_run(Identity(tenant="acme", user="bea")).restore_snapshot(payload)
    with pytest.raises(InvalidSnapshot):
        tool.restore_snapshot({"format": "something else"})
    assert store_snapshot(memory) == before


# -- rollback ----------------------------------------------------------------------------------


def test_rollback_is_a_dry_run_by_default_then_puts_every_key_back(tool, memory, clock):
    tool.set("city", "Berlin")
    tool.set("diet", "vegetarian")
    clock.advance(timedelta(hours=1))
    mark = clock.now()
    clock.advance(timedelta(hours=1))
    tool.set("city", "Paris")
    tool.delete("diet")
    tool.set("pet", "a cat named Miso")
    before = store_snapshot(memory)
    plan = tool.rollback(mark)
    assert not plan.applied and store_snapshot(memory) == before
    assert {s.key: s.action for s in plan.steps} == {"city": "restore", "diet": "restore", "pet": "tombstone"}
    clock.advance(timedelta(hours=1))
    applied = tool.rollback(mark, apply=True)
    assert applied.applied
    for key in ("city", "diet", "pet"):
        then = tool.get(key, as_of=clock.now(), known_at=mark)
        now = tool.get(key)
        assert (then and then.value) == (now and now.value)
    assert tool.get("city").value == "Berlin" and tool.get("pet") is None
    assert tool.history("city")[-1].op is Op.ROLLBACK
    assert tool.rollback(mark).steps == ()  # nothing left to change
