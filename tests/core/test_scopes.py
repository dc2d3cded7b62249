"""Scope-wide ops: ``clear`` tombstones a scope but its locked keys as one undoable change;
``namespace_delete`` hides a namespace from reads and workers until ``namespace_register`` brings
it back as it was; a cross-scope ``promote`` copies a fact into a shared scope with lineage; and
``proposal_decide`` accepts or rejects a proposal. None touches another scope, user or tenant."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core import FixedClock, Identity, Memory, MemoryTool
from memory_core.errors import AdminRequired, InvalidInput, NotFound, ScopeForbidden, WrongState
from memory_core.lifecycle.namespaces import NamespaceDeleted
from memory_core.model import Op, Status
from tests.conftest import store_snapshot

pytestmark = pytest.mark.faces

ANA = Identity(tenant="acme", user="ana", agent="helper")
BO = Identity(tenant="acme", user="bo", agent="helper")
ZED = Identity(tenant="globex", user="ana", agent="helper")  # the same names in another tenant


def values(tool: MemoryTool, scope: str = "user") -> dict[str, object]:
    return {f.key: f.value for f in tool.list(scope=scope)}


@pytest.fixture
def world(indexed_memory: Memory) -> tuple[Memory, MemoryTool, MemoryTool, MemoryTool]:
    """Ana's scopes with a locked key, and the same keys in Bo's, the tenant's and another tenant's."""
    ana, bo, zed = (indexed_memory.for_run(i) for i in (ANA, BO, ZED))
    for key, value in (("city", "Ana lives in Lisbon"), ("pet", "Ana has a cat named Miso"), ("dob", "1990-04-02")):
        ana.set(key, value)
    ana.lock("dob")
    ana.set("city", "Ana's agent notes: Lisbon", scope="agent")
    ana.set("team", "Acme's team is Core", scope="tenant")
    bo.set("city", "Bo lives in Porto")
    zed.set("city", "Zed lives in Oslo")
    return indexed_memory, ana, bo, zed


def elsewhere(ana: MemoryTool, bo: MemoryTool, zed: MemoryTool) -> dict[str, dict[str, object]]:
    return {
        "agent": values(ana, "agent"),
        "tenant": values(ana, "tenant"),
        "bo": values(bo),
        "zed": values(zed),
    }


# -- clear -----------------------------------------------------------------------------------------


def test_clear_tombstones_every_key_but_the_locked_ones_as_one_change(world) -> None:
    memory, ana, bo, zed = world
    before = elsewhere(ana, bo, zed)
    result = ana.clear()
    assert result.verdict == "cleared"
    assert result.details["cleared"] == ["city", "pet"] and result.details["kept_locked"] == ["dob"]
    assert {r.change_id for r in result.rows} == {result.details["change_id"]}  # one operation
    assert {(r.key, r.status, r.op) for r in result.rows} == {
        ("city", Status.TOMBSTONED, Op.DELETE),
        ("pet", Status.TOMBSTONED, Op.DELETE),
    }
    assert values(ana) == {"dob": "1990-04-02"}
    assert ana.history("city")[-1].status is Status.TOMBSTONED  # history keeps what it tombstoned
    assert {h.key for h in ana.recall("Lisbon cat Miso").hits} <= {"dob"}  # the index dropped them
    assert elsewhere(ana, bo, zed) == before  # no other scope, user or tenant was touched
    assert [h.key for h in bo.recall("lives in Porto").hits][:1] == ["city"]
    events = ana.events(types=["fact.deleted"], scopes=["user"]).events
    assert len(events) == 1 and events[0].summary["rows"] == 2  # one state change for the clear


def test_a_webhook_hears_the_clear_as_one_tombstoned_event(world) -> None:
    memory, ana, _, _ = world
    memory.webhook_register("acme", "http://127.0.0.1:9/hook", events=["memory.tombstoned"])
    ana.clear()
    sent = memory.store.webhooks.outbox()
    assert [(e.event_type, e.scope, e.owner_id) for e in sent] == [("memory.tombstoned", "user", "ana")]
    assert "Lisbon" not in sent[0].body  # ids and the identity tuple, never a value


def test_a_dry_run_names_the_keys_and_writes_nothing(world) -> None:
    memory, ana, _, _ = world
    before = store_snapshot(memory)
    result = ana.clear(dry_run=True)
    assert (result.verdict, result.rows) == ("would_clear", ())
    assert result.details["cleared"] == ["city", "pet"] and result.details["dry_run"] is True
    assert store_snapshot(memory) == before


def test_clear_of_an_empty_scope_writes_nothing(indexed_memory: Memory) -> None:
    tool = indexed_memory.for_run(ANA)
    before = store_snapshot(indexed_memory)
    assert tool.clear().verdict == "unchanged"
    assert store_snapshot(indexed_memory) == before


def test_clear_undo_restores_exactly_what_the_clear_tombstoned(world, clock: FixedClock) -> None:
    memory, ana, bo, zed = world
    cleared = ana.clear().details["change_id"]
    clock.advance(timedelta(minutes=1))
    ana.set("pet", "Ana has a dog named Rex")  # written since: the undo leaves it as it is
    ana.set("new", "written after the clear")
    undone = ana.clear_undo(cleared)
    assert undone.verdict == "restored"
    assert undone.details["restored"] == ["city"] and undone.details["changed_since"] == ["pet"]
    assert len({r.change_id for r in undone.rows}) == 1 and {r.op for r in undone.rows} == {Op.RESTORE}
    assert values(ana) == {
        "city": "Ana lives in Lisbon",
        "pet": "Ana has a dog named Rex",
        "dob": "1990-04-02",
        "new": "written after the clear",
    }
    assert [h.key for h in ana.recall("Ana lives in Lisbon").hits][:1] == ["city"]  # indexed again
    again = ana.clear_undo(cleared)  # nothing of it is left to undo: nothing is written
    assert again.verdict == "unchanged" and again.rows == ()
    assert sorted(again.details["changed_since"]) == ["city", "pet"]


def test_clear_undo_of_an_unknown_or_foreign_change_answers_missing(world) -> None:
    memory, ana, bo, zed = world
    cleared = ana.clear().details["change_id"]
    before = store_snapshot(memory)
    for tool, scope in ((ana, "user"), (bo, "user"), (zed, "user"), (ana, "tenant"), (ana, "agent")):
        with pytest.raises(NotFound):
            tool.clear_undo(cleared if tool is not ana or scope != "user" else "0" * 32, scope=scope)
    with pytest.raises(InvalidInput):
        ana.clear_undo("")
    assert store_snapshot(memory) == before


# -- namespace delete and register -----------------------------------------------------------------


def test_a_deleted_namespace_reads_empty_and_registering_it_brings_everything_back(world) -> None:
    memory, ana, bo, zed = world
    before, others = values(ana), elsewhere(ana, bo, zed)
    history = [r.id for r in ana.history("city")]
    fact_id = ana.get("city").fact_id
    deleted = ana.namespace_delete()
    assert deleted == {"scope": "user", "owner_id": "ana", "state": "deleted", "changed": True}
    assert ana.get("city") is None and ana.list() == []
    with pytest.raises(NotFound):
        ana.history("city")
    found = ana.recall("Ana lives in Lisbon")
    assert found.hits == () and any("namespace_delete" in n for n in found.notes)
    assert ana.search("Lisbon").hits == ()
    for by_id in (lambda: ana.get_by_id(fact_id), lambda: ana.get_by_id(history[0]), lambda: ana.verify(id=fact_id)):
        with pytest.raises(NotFound):  # by id as by key: nothing there
            by_id()
    assert elsewhere(ana, bo, zed) == others  # the agent, tenant, Bo's and another tenant's stand
    assert ana.namespace_delete()["changed"] is False  # deleting it again changes nothing
    registered = ana.namespace_register()
    assert registered["state"] == "registered" and registered["changed"] is True
    assert values(ana) == before and [r.id for r in ana.history("city")] == history
    assert ana.get_by_id(fact_id).value == ana.get("city").value
    assert [h.key for h in ana.recall("Ana lives in Lisbon").hits][:1] == ["city"]
    assert ana.namespace_register()["changed"] is False


def test_a_deleted_namespace_hides_its_documents_and_graph_too(world) -> None:
    _, ana, bo, _ = world
    ana.doc_put("runbook", "# Deploy\n\nFreeze on Friday.\n")
    ana.set("home", "I live in London", relations=[{"subject": "I", "relation": "lives_in", "object": "London"}])
    bo.doc_put("runbook", "# Bo's\n\nNothing.\n")
    shown = (ana.doc_get("runbook"), ana.doc_list(), ana.list_facts("I"), ana.graph_recall("I").facts)
    assert shown[0] is not None and shown[1] and shown[2] and shown[3]
    ana.namespace_delete()
    assert ana.doc_get("runbook") is None and ana.doc_list() == []
    assert ana.list_facts("I") == [] and ana.graph_recall("I").facts == ()
    assert bo.doc_get("runbook") is not None  # another user's stand
    ana.namespace_register()
    assert (ana.doc_get("runbook"), ana.doc_list(), ana.list_facts("I"), ana.graph_recall("I").facts) == shown


def test_a_write_into_a_deleted_namespace_is_refused_typed_and_changes_nothing(world) -> None:
    memory, ana, bo, _ = world
    ana.namespace_delete()
    before = store_snapshot(memory)
    for write in (
        lambda: ana.set("new", "x"),
        lambda: ana.delete("city"),
        lambda: ana.lock("pet"),
        lambda: ana.clear(),
        lambda: ana.promote("team", scope="tenant", to_scope="user"),  # into the deleted namespace
    ):
        with pytest.raises(NamespaceDeleted) as refused:
            write()
        assert refused.value.code == "NAMESPACE_DELETED"
    assert store_snapshot(memory) == before
    bo.set("new", "Bo writes on")  # another user of the tenant is not held
    assert values(bo)["new"] == "Bo writes on"


def test_the_tenant_namespace_is_deleted_only_by_an_admin(world) -> None:
    memory, ana, _, _ = world
    before = store_snapshot(memory)
    with pytest.raises(AdminRequired):
        ana.namespace_delete(scope="tenant")
    with pytest.raises(AdminRequired):
        ana.namespace_register(scope="tenant")
    assert store_snapshot(memory) == before
    admin = memory.for_run(Identity(tenant="acme", user="root", admin=True))
    assert admin.namespace_delete(scope="tenant")["state"] == "deleted"
    assert ana.list(scope="tenant") == [] and values(ana) != {}  # the user's own scope stands
    admin.namespace_register(scope="tenant")
    assert values(ana, "tenant") == {"team": "Acme's team is Core"}


def test_the_expiry_sweep_skips_a_deleted_namespace_until_it_is_registered(world, clock: FixedClock) -> None:
    memory, ana, bo, _ = world
    ana.set("otp", "4412", ttl_seconds=60)
    bo.set("otp", "9981", ttl_seconds=60)
    ana.namespace_delete()
    clock.advance(timedelta(minutes=5))
    assert memory.sweep_expired()["keys"] == 1  # Bo's only: Ana's namespace is skipped
    assert [r.status for r in bo.history("otp")][-1] is Status.TOMBSTONED
    ana.namespace_register()
    assert [r.status for r in ana.history("otp")][-1] is Status.ACTIVE  # left as it was
    assert memory.sweep_expired()["keys"] == 1
    assert [r.status for r in ana.history("otp")][-1] is Status.TOMBSTONED


def test_the_consolidation_pass_over_every_namespace_skips_a_deleted_one(world) -> None:
    memory, ana, bo, _ = world
    ana.namespace_delete()
    owners = {(run.scope, run.owner_id) for run in memory.consolidate_all(tenant="acme")}
    assert ("user", "bo") in owners and ("user", "ana") not in owners
    ana.namespace_register()
    assert ("user", "ana") in {(run.scope, run.owner_id) for run in memory.consolidate_all(tenant="acme")}


# -- promote and proposal_decide -------------------------------------------------------------------


def test_promote_copies_a_fact_into_the_tenant_scope_with_lineage(world) -> None:
    memory, ana, bo, _ = world
    source = ana.get("city")
    result = ana.promote("city")
    copy = result.version
    assert result.verdict == "created" and copy.scope.value == "tenant" and copy.value == source.value
    assert result.details["promoted_from"] == {"scope": "user", "key": "city", "fact_id": source.fact_id}
    assert bo.get("city", scope="tenant").value == "Ana lives in Lisbon"  # shared with the tenant
    assert ana.get("city") == source  # the source stays as it is
    lineage = ana.lineage("city", scope="tenant")
    assert [(r["fact_id"], r["source_fact"], r["support_type"]) for r in lineage] == [
        (copy.fact_id, source.fact_id, "promoted_from")
    ]


def test_promote_refuses_what_it_may_not_copy_typed_and_changes_nothing(world) -> None:
    memory, ana, _, _ = world
    ana.set("diet", "vegan", proposed=True)
    narrow = memory.for_run(Identity(tenant="acme", user="ana", agent="helper", memory_scopes={"user"}))
    before = store_snapshot(memory)
    with pytest.raises(ScopeForbidden):
        narrow.promote("city", to_scope="tenant")  # a scope the run may not write
    with pytest.raises(InvalidInput):
        ana.promote("city", to_scope="user")  # the same scope
    with pytest.raises(NotFound):
        ana.promote("nothing")
    with pytest.raises(WrongState):
        ana.promote("diet")  # a proposal is decided first
    assert store_snapshot(memory) == before


def test_proposal_decide_accepts_or_rejects_a_proposal_only(world) -> None:
    memory, ana, _, _ = world
    ana.set("diet", "vegan", proposed=True)
    ana.set("lang", "French", proposed=True)
    assert ana.proposal_decide("diet").version.status is Status.ACTIVE
    rejected = ana.proposal_decide("lang", accept=False)
    assert rejected.verdict == "rejected" and ana.get("lang") is None
    assert ana.restore("lang").verdict == "restored" and ana.get("lang").status is Status.PROPOSED
    before = store_snapshot(memory)
    for accept in (True, False):
        with pytest.raises(WrongState):
            ana.proposal_decide("city", accept=accept)  # an established fact
    with pytest.raises(NotFound):
        ana.proposal_decide("nothing")
    assert store_snapshot(memory) == before
