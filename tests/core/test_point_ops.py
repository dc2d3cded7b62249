"""The Memory tool's point ops against a real DuckDB store in a temporary memory home."""

from datetime import timedelta

import pytest

from memory_core import Identity, Memory, Op, Status
from memory_core.errors import NotFound, NothingToRestore
from tests.conftest import T0, utc

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

MAR, APR, MAY, JUL = utc(2024, 3, 1), utc(2024, 4, 15), utc(2024, 5, 1), utc(2024, 7, 1)


def test_set_then_get_returns_the_value_with_provenance_stamped_from_the_run(tool):
    result = tool.set("city", {"name": "Lisbon"})
    assert result.verdict == "created"
    fact = tool.get("city")
    assert fact.value == {"name": "Lisbon"}
    assert fact.valid_at == T0 and fact.invalid_at is None and fact.created_at == T0
    assert fact.owner_id == "ana" and fact.scope.value == "user"
    prov = fact.provenance
    assert (prov.tenant, prov.session, prov.run, prov.agent, prov.actor) == (
        "acme",
        "s1",
        "r1",
        "helper",
        "agent:helper",
    )


def test_a_correction_supersedes_and_keeps_the_old_value_for_past_as_of(tool, clock):
    tool.set("medication", "ibuprofen", valid_at=MAR)
    clock.advance(timedelta(hours=1))
    result = tool.set("medication", "paracetamol", valid_at=MAY)
    assert result.verdict == "superseded"
    (closed,) = result.closed
    assert closed.value == "ibuprofen" and closed.invalid_at == MAY
    assert closed.superseded_by == result.version.id and closed.status is Status.SUPERSEDED
    # "Which medicine in April" still answers after it changed in May.
    assert tool.get("medication", as_of=APR).value == "ibuprofen"
    assert tool.get("medication", as_of=JUL).value == "paracetamol"
    assert tool.get("medication").value == "paracetamol"
    assert tool.get("medication", as_of=utc(2024, 2, 1)) is None


def test_byte_identical_restatement_reinforces_instead_of_writing_a_new_value(tool, clock):
    first = tool.set("diet", ["vegetarian"])
    clock.advance(timedelta(days=1))
    again = tool.set("diet", ["vegetarian"])
    assert again.verdict == "restated"
    assert again.version.fact_id == first.version.fact_id
    assert again.version.reinforcement_count == 1
    assert tool.get("diet").reinforcement_count == 1
    assert [r.op for r in tool.history("diet")] == [Op.SET, Op.RESTATE]


def test_canonical_json_makes_key_order_irrelevant_for_restatement(tool):
    tool.set("prefs", {"a": 1, "b": 2})
    assert tool.set("prefs", {"b": 2, "a": 1}).verdict == "restated"


def test_a_future_invalid_at_is_valid_now_and_ends_when_the_clock_reaches_it(tool, clock):
    end = T0 + timedelta(days=30)
    tool.set("contract", "Acme Corp", invalid_at=end)
    assert tool.get("contract").value == "Acme Corp"
    assert [f.key for f in tool.list()] == ["contract"]
    clock.set(end - timedelta(seconds=1))
    assert tool.get("contract").value == "Acme Corp"
    clock.set(end)
    assert tool.get("contract") is None
    assert tool.list() == []
    # Still answerable at a past instant.
    assert tool.get("contract", as_of=end - timedelta(days=1)).value == "Acme Corp"


def test_known_at_answers_what_the_store_believed_then(tool, clock):
    tool.set("employer", "Initech", valid_at=MAR)
    believed_initech = clock.now()
    clock.advance(timedelta(days=2))
    # A correction: it was never Initech, it was Globex all along.
    tool.set("employer", "Globex", valid_at=MAR)
    assert tool.get("employer", as_of=APR).value == "Globex"
    assert tool.get("employer", as_of=APR, known_at=believed_initech).value == "Initech"
    assert tool.get("employer", known_at=believed_initech).value == "Initech"
    assert tool.get("employer", known_at=believed_initech - timedelta(seconds=1)) is None
    listed = tool.list(as_of=APR, known_at=believed_initech)
    assert [(f.key, f.value) for f in listed] == [("employer", "Initech")]


def test_delete_tombstones_and_restore_brings_back_every_fact(tool, clock):
    tool.set("city", "Berlin", valid_at=MAR)
    tool.set("city", "Paris", valid_at=MAY)
    clock.advance(timedelta(hours=1))
    deleted = tool.delete("city")
    assert deleted.verdict == "deleted" and all(r.status is Status.TOMBSTONED for r in deleted.rows)
    assert tool.get("city") is None and tool.get("city", as_of=APR) is None
    assert tool.list() == []
    # What was believed before the delete is still answerable by transaction time.
    assert tool.get("city", known_at=clock.now() - timedelta(minutes=1)).value == "Paris"
    clock.advance(timedelta(hours=1))
    assert tool.restore("city").verdict == "restored"
    assert tool.get("city").value == "Paris"
    assert tool.get("city", as_of=APR).value == "Berlin"
    with pytest.raises(NothingToRestore):
        tool.restore("city")


def test_set_after_delete_starts_afresh_and_delete_of_nothing_is_not_found(tool):
    with pytest.raises(NotFound):
        tool.delete("never")
    with pytest.raises(NotFound):
        tool.restore("never")
    with pytest.raises(NotFound):
        tool.history("never")
    tool.set("k", 1)
    tool.delete("k")
    with pytest.raises(NotFound):
        tool.delete("k")
    assert tool.set("k", 2).verdict == "created"
    assert tool.get("k").value == 2


def test_history_is_every_version_in_order_and_monotonic(tool, clock):
    tool.set("city", "Berlin", valid_at=MAR)
    clock.advance()
    tool.set("city", "Paris", valid_at=MAY)
    clock.advance()
    tool.delete("city")
    clock.advance()
    tool.restore("city")
    rows = tool.history("city")
    assert [r.version for r in rows] == list(range(1, len(rows) + 1))
    assert [r.op for r in rows] == [Op.SET, Op.SUPERSEDE, Op.SET, Op.DELETE, Op.DELETE, Op.RESTORE, Op.RESTORE]
    assert [r.created_at for r in rows] == sorted(r.created_at for r in rows)


def test_list_returns_one_live_fact_per_key(tool):
    tool.set("a", 1)
    tool.set("b", 2, kind="note", memory_type="preference")
    tool.set("a", 3)
    listed = tool.list()
    assert [(f.key, f.value) for f in listed] == [("a", 3), ("b", 2)]
    assert listed[1].kind.value == "note" and listed[1].memory_type == "preference"


def test_scopes_resolve_owner_from_identity(memory, tool_for):
    tool = tool_for()
    tool.set("k", "agent-value", scope="agent")
    tool.set("k", "user-value", scope="user")
    tool.set("k", "tenant-value", scope="tenant")
    assert tool.get("k", scope="agent").owner_id == "helper"
    assert tool.get("k", scope="user").owner_id == "ana"
    assert tool.get("k", scope="tenant").owner_id == "acme"
    admin = memory.for_run(Identity(tenant="acme", agent="ops", admin=True))
    admin.set("k", "global-value", scope="global")
    other_tenant_admin = memory.for_run(Identity(tenant="globex", agent="ops", admin=True))
    assert other_tenant_admin.get("k", scope="global").value == "global-value"


def test_transaction_time_never_runs_backwards_for_a_key(tool, clock):
    tool.set("k", 1)
    clock.set(T0 - timedelta(days=1))  # a clock that jumped back
    second = tool.set("k", 2)
    assert second.version.created_at == T0


def test_data_survives_reopening_the_home(home, clock):
    with Memory.open(home, clock=clock) as m:
        m.for_run(Identity(tenant="acme", user="ana")).set("k", "v")
    with Memory.open(home, clock=clock, read_only=True) as m:
        assert m.for_run(Identity(tenant="acme", user="ana")).get("k").value == "v"
        assert m.verify_audit().ok


def test_provenance_stays_with_the_fact_and_changed_by_names_who_closed_it(memory, clock):
    writer = memory.for_run(Identity(tenant="acme", user="ana", agent="intake", session="s1", model="m-1"))
    corrector = memory.for_run(Identity(tenant="acme", user="ana", agent="reviewer", session="s2"))
    writer.set("allergy", "penicillin", valid_at=MAR)
    clock.advance()
    corrector.set("allergy", "none", valid_at=MAY)
    old = writer.get("allergy", as_of=APR)
    assert old.provenance.agent == "intake" and old.provenance.model == "m-1" and old.provenance.session == "s1"
    assert old.changed_by == "agent:reviewer"
    assert writer.get("allergy").provenance.agent == "reviewer"
