"""Observation capture: a session's tool-trace observations are kept as episodic rows, crystallize
marks the session ready once, and the extraction worker (run only when called) replays each ready
session through set_from_messages once, its facts naming the session. Another user or tenant
sees none of it; a refusal is typed and writes nothing."""

from __future__ import annotations

import pytest

from memory_core import Identity, Memory, MemoryTool
from memory_core.client import RemoteMemory
from memory_core.errors import AdminRequired, InvalidInput, NotFound, WrongState
from memory_core.service import ThreadedServer
from tests.conftest import store_snapshot

pytestmark = pytest.mark.faces

TRACE = [
    {"role": "user", "content": "I live in Lisbon. Can you check the weather?", "at": "2024-06-01T08:00:00Z"},
    {"tool": "weather", "input": {"city": "Lisbon"}, "output": {"sky": "sunny", "c": 24}},
    {"role": "assistant", "content": "It is sunny in Lisbon."},
    {"role": "user", "content": "I work at Acme Robotics."},
]


def run_of(memory: Memory, tenant: str = "acme", user: str = "ana") -> MemoryTool:
    return memory.for_run(Identity(tenant=tenant, user=user, agent="helper", session="run-session"))


@pytest.fixture
def ana(memory: Memory) -> MemoryTool:
    return run_of(memory)


def facts(tool: MemoryTool) -> dict[str, object]:
    """The live rows that are not observations, evidence or chunks: what extraction wrote."""
    return {f.key: f.value for f in tool.list() if f.memory_type not in ("episodic", "evidence", "transcript_chunk")}


def test_record_keeps_each_observation_as_an_episodic_row_of_the_session(ana):
    doc = ana.observe_record("s-7", TRACE)
    assert doc["session"] == "s-7" and doc["recorded"] == len(TRACE) == len(doc["keys"])
    rows = {f.key: f for f in ana.list()}
    kept = [rows[k] for k in doc["keys"]]
    assert {r.memory_type for r in kept} == {"episodic"} and all(k.startswith("observe:s-7:") for k in doc["keys"])
    assert {r.provenance.session for r in kept} == {"s-7"}
    assert kept[1].value == {"tool": "weather", "input": {"city": "Lisbon"}, "output": {"sky": "sunny", "c": 24}}
    assert kept[0].value["at"] == "2024-06-01T08:00:00+00:00"
    assert ana.observe_status("s-7") == {"session": "s-7", "scope": "user", "status": "open", "observations": 4}


def test_crystallize_then_extract_writes_the_facts_once_naming_the_session(memory, ana):
    ana.observe_record("s-7", TRACE[:2])
    ana.observe_record("s-7", TRACE[2:])  # a second call adds to the session
    assert facts(ana) == {}  # recording extracts nothing
    ready = ana.observe_crystallize("s-7")
    assert (ready["status"], ready["observations"], ready["changed"]) == ("ready", 4, True)

    counts = memory.observe_extract()
    assert (counts["claimed"], counts["done"], counts["facts"], counts["sessions"]) == (1, 1, 2, ["s-7"])
    found = facts(ana)
    assert found == {"user:lives_in": "The user lives in Lisbon", "user:works_at": "The user works at Acme Robotics"}
    lives = ana.get("user:lives_in")
    assert lives.provenance.session == "s-7" and lives.provenance.origin == "worker:observe"
    assert lives.provenance.source_turn.startswith("observe:s-7:")  # the observation it came from
    assert lives.provenance.source_quote == "I live in Lisbon."
    done = ana.observe_status("s-7")
    assert done["status"] == "done" and sorted(done["result"]["facts"]) == ["user:lives_in", "user:works_at"]

    before = store_snapshot(memory)
    again = memory.observe_extract()
    assert (again["claimed"], again["facts"]) == (0, 0) and store_snapshot(memory) == before  # never twice


def test_a_second_crystallize_changes_nothing(memory, ana):
    ana.observe_record("s-7", TRACE)
    first = ana.observe_crystallize("s-7")
    before = store_snapshot(memory)
    second = ana.observe_crystallize("s-7")
    assert second == {**first, "changed": False} and store_snapshot(memory) == before
    memory.observe_extract()
    third = ana.observe_crystallize("s-7")  # after its extraction too
    assert (third["status"], third["changed"]) == ("done", False)


def test_nothing_is_extracted_unless_the_worker_is_run(memory, ana):
    ana.observe_record("s-7", TRACE)
    ana.observe_crystallize("s-7")
    memory.run_extraction_queue()  # the extraction queue's worker does not replay observations
    assert facts(ana) == {} and ana.observe_status("s-7")["status"] == "ready"


def test_refusals_are_typed_and_write_nothing(memory, ana):
    ana.observe_record("s-7", TRACE)
    before = store_snapshot(memory)
    bad = [
        [],
        "not a list",
        [{"tool": "x", "surprise": 1}],
        [{"role": "system", "content": "be nice"}],
        [{"tool": ""}],
        [{"tool": "x", "output": 1, "result": 2}],
        [{"tool": "x", "at": "yesterday"}],
        [{"tool": "x", "input": "y" * 40_000}],
        [{"tool": "ok"}, {"role": "user"}],  # one bad element refuses the whole call
    ]
    for observations in bad:
        with pytest.raises(InvalidInput):
            ana.observe_record("s-8", observations)
    for session_id in ("", "a:b", "x" * 201):
        with pytest.raises(InvalidInput):
            ana.observe_record(session_id, TRACE)
    with pytest.raises(NotFound):
        ana.observe_crystallize("never-recorded")
    with pytest.raises(NotFound):
        ana.observe_status("never-recorded")
    assert store_snapshot(memory) == before

    ana.observe_crystallize("s-7")
    sealed = store_snapshot(memory)
    with pytest.raises(WrongState):
        ana.observe_record("s-7", TRACE)  # a crystallized session takes no more observations
    assert store_snapshot(memory) == sealed


def test_another_user_or_tenant_sees_no_session_and_its_extraction_stays_in_its_scope(memory, ana):
    ana.observe_record("s-7", TRACE)
    ben, rival = run_of(memory, user="ben"), run_of(memory, tenant="globex")
    for other in (ben, rival):
        for op in (other.observe_status, other.observe_crystallize):
            with pytest.raises(NotFound):  # missing, never forbidden
                op("s-7")
    ben.observe_record("s-7", [{"role": "user", "content": "I live in Oslo."}])  # the same id, his own session
    ana.observe_crystallize("s-7")
    assert ben.observe_status("s-7")["status"] == "open"  # hers crystallized, his not

    memory.observe_extract()
    assert facts(ana)["user:lives_in"] == "The user lives in Lisbon"
    assert facts(ben) == {} and facts(rival) == {} and rival.list() == []
    ben.observe_crystallize("s-7")
    memory.observe_extract()
    assert facts(ben) == {"user:lives_in": "The user lives in Oslo"}
    assert facts(ana)["user:lives_in"] == "The user lives in Lisbon"


def test_a_users_erasure_deletes_their_observations_and_their_sessions(memory, ana):
    ana.observe_record("s-7", TRACE)
    ana.observe_crystallize("s-7")
    ben = run_of(memory, user="ben")
    ben.observe_record("s-9", [{"tool": "search", "input": "flights"}])
    memory.erase("acme", user="ana")
    with pytest.raises(NotFound):
        ana.observe_status("s-7")
    assert ana.list() == [] and memory.observe_extract()["claimed"] == 0
    assert ben.observe_status("s-9")["observations"] == 1  # another user's are kept


def test_an_operator_runs_the_extraction_through_the_service_and_an_agent_cannot(memory, ana):
    ana.observe_record("s-7", TRACE)
    ana.observe_crystallize("s-7")
    server = ThreadedServer(memory).start()
    try:
        admin, _ = memory.keys.create(tenant="ops", user="root", admin=True)
        agent, _ = memory.keys.create(tenant="acme", user="ana", agent="helper")
        with RemoteMemory(server.url, agent) as client, pytest.raises(AdminRequired):
            client.observe_extract()
        assert ana.observe_status("s-7")["status"] == "ready"
        with RemoteMemory(server.url, admin) as operator:
            counts = operator.observe_extract(limit=4)
            assert (counts["done"], counts["facts"], counts["sessions"]) == (1, 2, ["s-7"])
            assert operator.observe_extract()["claimed"] == 0
    finally:
        server.stop()
    assert facts(ana)["user:works_at"] == "The user works at Acme Robotics"


def test_a_deleted_observation_is_not_replayed_and_its_place_is_not_reused(memory, ana):
    first = ana.observe_record("s-7", TRACE[:1])["keys"][0]
    ana.delete(first)
    later = ana.observe_record("s-7", TRACE[3:])["keys"][0]
    assert later > first and later.split(":")[-1].startswith("000001-")  # ordinals count on past a deleted one
    assert ana.observe_crystallize("s-7")["observations"] == 1
    memory.observe_extract()
    assert facts(ana) == {"user:works_at": "The user works at Acme Robotics"}  # Lisbon was deleted unsaid
