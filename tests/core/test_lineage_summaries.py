"""Lineage and session summaries: a fact's belief sources (the turns and windows extraction read
it from, the rows a consolidation summary merged), one digest per session written by a worker
and rebuilt only when the session changes, and the search leg over those digests."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core import FixedClock, Identity, Memory, MemoryTool
from memory_core.client import RemoteMemory
from memory_core.errors import AdminRequired, InvalidInput, NotFound
from memory_core.extraction.summaries import SessionTurn
from memory_core.llm import LLMUnavailable
from memory_core.service import ThreadedServer
from tests.conftest import store_snapshot

pytestmark = pytest.mark.faces

ANA = Identity(tenant="acme", user="ana", agent="helper")
BOB = Identity(tenant="acme", user="bob", agent="helper")
LISBON = [
    {"role": "user", "name": "Ana", "content": "I live in Lisbon."},
    {"role": "assistant", "content": "Lisbon is lovely in spring."},
]
LOOSE = 0.45  # the hashing embedder's cosines run low (as in test_consolidation)


@pytest.fixture
def ana(indexed_memory: Memory) -> MemoryTool:
    return indexed_memory.for_run(ANA)


@pytest.fixture
def bob(indexed_memory: Memory) -> MemoryTool:
    return indexed_memory.for_run(BOB)


def test_extraction_links_each_fact_to_its_turn_and_window(ana: MemoryTool) -> None:
    result = ana.set_from_messages(LISBON, session="s1")
    assert result.written == ("ana:lives_in",)
    links = ana.belief_sources("ana:lives_in")
    by_type = {link["support_type"]: link for link in links}
    assert sorted(by_type) == ["extracted_from", "quoted_in"]
    turn = by_type["extracted_from"]
    assert turn["source_key"] == "evidence:s1:0000" and turn["source_turn"] == "s1:0"
    assert turn["source_session"] == "s1" and turn["source_status"] == "active"
    assert turn["source_fact"] == ana.get("evidence:s1:0000").fact_id
    assert by_type["quoted_in"]["source_key"] == "chunk:s1:0000"
    assert {link["fact_id"] for link in links} == {ana.get("ana:lives_in").fact_id}
    # the same words again write nothing new and link nothing twice
    ana.set_from_messages(LISBON, session="s1")
    assert len(ana.belief_sources("ana:lives_in")) == 2


def test_a_dry_run_links_nothing(ana: MemoryTool, indexed_memory: Memory) -> None:
    before = store_snapshot(indexed_memory)
    ana.set_from_messages(LISBON, session="s1", dry_run=True)
    assert store_snapshot(indexed_memory) == before


def test_consolidation_lineage_is_read_as_belief_sources(ana: MemoryTool, clock: FixedClock) -> None:
    for key, value in (
        ("hike_often", "In the Alps Ana goes hiking each summer"),
        ("hike_maya", "Ana went hiking in the Alps with Maya last summer"),
    ):
        clock.set(clock.now() + timedelta(minutes=1))
        ana.set(key, value)
    run = ana.consolidate(min_cosine=LOOSE)
    summary_key = run.clusters[0].summary_key
    links = ana.belief_sources(summary_key)
    assert sorted(link["source_key"] for link in links) == ["hike_maya", "hike_often"]
    assert {link["support_type"] for link in links} == {"derived_from"} and {link["run_id"] for link in links} == {
        run.run_id
    }
    assert {link["source_status"] for link in links} == {"tombstoned"}  # merged, retired behind the summary
    assert ana.belief_sources("hike_maya") == []  # a source's own support: none recorded


def test_a_session_is_summarized_once_per_change(ana: MemoryTool, indexed_memory: Memory, clock: FixedClock) -> None:
    ana.set_from_messages(LISBON, session="s1")
    assert ana.session_summaries() == []  # written by the worker, not by extraction
    assert indexed_memory.summarize_sessions(apply=False)["behind"] == ["acme/user/ana/s1"]
    assert ana.session_summaries() == []  # apply=False writes nothing
    first = indexed_memory.summarize_sessions()
    assert (first["sessions"], first["built"], first["current"]) == (1, 1, 0)
    [summary] = ana.session_summaries()
    assert summary["session"] == "s1" and summary["turns"] == 2 and summary["summarizer"] == "rules"
    assert (
        summary["digest"] == "2 turns: Ana, assistant. Ana: I live in Lisbon. / assistant: Lisbon is lovely in spring."
    )
    assert ana.get("ana:lives_in").fact_id in summary["fact_ids"]
    clock.advance(timedelta(hours=1))
    again = indexed_memory.summarize_sessions()
    assert (again["built"], again["current"]) == (0, 1)
    assert ana.session_summaries() == [summary]  # untouched: the same turns
    ana.set_from_messages(
        [*LISBON, {"role": "user", "name": "Ana", "content": "My sister Maya visits in May."}], session="s1"
    )
    third = indexed_memory.summarize_sessions()
    assert (third["built"], third["current"]) == (1, 0)
    [rebuilt] = ana.session_summaries(session_id="s1")
    assert (
        rebuilt["turns"] == 3
        and "Maya visits in May" in rebuilt["digest"]
        and rebuilt["built_at"] > summary["built_at"]
    )
    assert ana.session_summaries(session_id="s9") == []


def test_an_operator_summarizes_through_the_service_and_an_agent_cannot(
    ana: MemoryTool, indexed_memory: Memory
) -> None:
    ana.set_from_messages(LISBON, session="s1")
    server = ThreadedServer(indexed_memory).start()
    try:
        admin, _ = indexed_memory.keys.create(tenant="ops", user="root", admin=True)
        agent, _ = indexed_memory.keys.create(tenant="acme", user="ana", agent="helper")
        with RemoteMemory(server.url, agent) as client, pytest.raises(AdminRequired):
            client.summarize_sessions()
        assert ana.session_summaries() == []
        with RemoteMemory(server.url, admin) as operator:
            assert operator.summarize_sessions(apply=False)["behind"] == ["acme/user/ana/s1"]
            assert operator.summarize_sessions()["built"] == 1
            assert operator.summarize_sessions()["built"] == 0  # once per change
    finally:
        server.stop()
    assert [s["session"] for s in ana.session_summaries()] == ["s1"]


def test_a_model_summarizes_when_given_and_a_failure_keeps_the_old_digest(
    ana: MemoryTool, indexed_memory: Memory
) -> None:
    class Scripted:
        name = "scripted"

        def __init__(self, fail: bool = False) -> None:
            self.fail, self.seen = fail, []

        def summarize(self, session: str, turns: list[SessionTurn]) -> str:
            if self.fail:
                raise LLMUnavailable("down")
            self.seen.append([t.speaker for t in turns])
            return f"Ana talked about Lisbon in {session}."

    ana.set_from_messages(LISBON, session="s1")
    model = Scripted()
    assert indexed_memory.summarize_sessions(summarizer=model)["built"] == 1
    assert model.seen == [["Ana", "assistant"]]
    assert ana.session_summaries()[0]["digest"] == "Ana talked about Lisbon in s1."
    ana.set_from_messages([*LISBON, {"role": "user", "name": "Ana", "content": "I adopted a cat."}], session="s1")
    failed = indexed_memory.summarize_sessions(summarizer=Scripted(fail=True))
    assert (failed["built"], failed["failed"]) == (0, 1)
    assert ana.session_summaries()[0]["digest"] == "Ana talked about Lisbon in s1."


def test_the_summary_leg_finds_a_session_when_a_recipe_asks(ana: MemoryTool, indexed_memory: Memory) -> None:
    ana.set_from_messages(LISBON, session="s1")
    ana.set_from_messages([{"role": "user", "name": "Ana", "content": "I work as a nurse."}], session="s2")
    indexed_memory.summarize_sessions()
    query = "lovely spring"
    plain = ana.recall(query, k=10)
    assert all("summary" not in h.legs and not h.why for h in plain.hits)  # off by default
    found = ana.recall(query, k=10, recipe="hybrid_summaries")
    by_summary = [h for h in found.hits if "summary" in h.legs]
    assert {h.key for h in by_summary} >= {"ana:lives_in", "evidence:s1:0000", "evidence:s1:0001"}
    assert not any(h.key.startswith("evidence:s2") for h in by_summary)
    why = by_summary[0].why["summary"]
    assert why["session"] == "s1" and why["matched"] == ["lovely", "spring"] and "Lisbon" in why["digest"]
    assert found.recipe["legs"] == ["vector", "bm25", "key", "graph", "summary"]


def test_lineage_and_summaries_answer_only_the_callers_rows(
    ana: MemoryTool, bob: MemoryTool, indexed_memory: Memory
) -> None:
    ana.set_from_messages(LISBON, session="s1")
    indexed_memory.summarize_sessions()
    with pytest.raises(NotFound):
        bob.belief_sources("ana:lives_in")  # another user's key answers as missing
    with pytest.raises(NotFound):
        ana.belief_sources("ana:lives_in", scope="tenant")
    assert bob.session_summaries() == [] and bob.session_summaries(session_id="s1") == []
    found = bob.recall("lovely spring Lisbon", k=10, recipe="hybrid_summaries")
    assert not found.hits  # bob has no rows: the leg reads his summaries alone
    bob.set_from_messages([{"role": "user", "name": "Bob", "content": "I live in Lisbon."}], session="s1")
    indexed_memory.summarize_sessions()
    assert [s["digest"] for s in bob.session_summaries()] == ["1 turn: Bob. Bob: I live in Lisbon."]
    assert len(ana.session_summaries()) == 1 and ana.session_summaries()[0]["turns"] == 2


def test_bad_requests_are_refused_and_change_nothing(ana: MemoryTool, indexed_memory: Memory) -> None:
    ana.set_from_messages(LISBON, session="s1")
    indexed_memory.summarize_sessions()
    before = store_snapshot(indexed_memory)
    for call in (
        lambda: ana.belief_sources(""),
        lambda: ana.belief_sources(7),
        lambda: ana.belief_sources("ana:lives_in", scope="nowhere"),
        lambda: ana.session_summaries(session_id=5),
        lambda: ana.session_summaries(session_id=""),
        lambda: ana.session_summaries(scope=3),
    ):
        with pytest.raises(InvalidInput):
            call()
    with pytest.raises(NotFound):
        ana.belief_sources("no:such_key")
    with pytest.raises(InvalidInput):
        indexed_memory.summarize_sessions(summarizer="rules")
    with pytest.raises(InvalidInput):
        indexed_memory.summarize_sessions(apply="yes")
    assert store_snapshot(indexed_memory) == before


def test_erasing_a_user_deletes_their_summaries_and_links(
    ana: MemoryTool, bob: MemoryTool, indexed_memory: Memory
) -> None:
    ana.set_from_messages(LISBON, session="s1")
    bob.set_from_messages([{"role": "user", "name": "Bob", "content": "I live in Porto."}], session="s1")
    indexed_memory.summarize_sessions()
    request = indexed_memory.erase("acme", user="ana")
    assert request.status.value == "verified" and request.residue_count == 0, request.error
    assert request.residue["rows:session_summaries"] == request.residue["text:session_summaries"] == 0
    assert request.residue["rows:belief_sources"] == 0
    assert ana.session_summaries() == []
    assert [s["session"] for s in bob.session_summaries()] == ["s1"]  # another user's stay
    assert [link["support_type"] for link in bob.belief_sources("bob:lives_in")] == ["extracted_from", "quoted_in"]


def test_a_summary_forgets_the_turns_that_were_deleted(ana: MemoryTool, indexed_memory: Memory) -> None:
    ana.set_from_messages(LISBON, session="s1")
    indexed_memory.summarize_sessions()
    ana.delete("evidence:s1:0001")  # a turn gone: the digest is rebuilt without it
    assert indexed_memory.summarize_sessions()["built"] == 1
    [summary] = ana.session_summaries()
    assert summary["digest"] == "1 turn: Ana. Ana: I live in Lisbon." and "lovely" not in summary["digest"]
    ana.delete("evidence:s1:0000")  # every turn gone: the digest that quoted them goes too
    done = indexed_memory.summarize_sessions()
    assert (done["dropped"], done["sessions"]) == (1, 0) and ana.session_summaries() == []
    assert indexed_memory.summarize_sessions()["dropped"] == 0
