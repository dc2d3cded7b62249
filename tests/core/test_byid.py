"""The by-id ops: ``get_by_id`` reads a row by its fact id or version id, ``update`` and
``update_by_id`` revise a live row keeping its fact id (never creating one), and ``verify``
records a reviewer's affirmation on the row's provenance. An id the caller cannot reach answers
exactly as an id no row holds; every refusal leaves the store as it was."""

from __future__ import annotations

from datetime import timedelta
from functools import partial

import pytest

from memory_core import FixedClock, Identity, Memory
from memory_core.errors import InvalidInput, Locked, MemcoreError, NotFound, PinnedConflict, PreconditionFailed
from tests.conftest import T0, store_snapshot

pytestmark = pytest.mark.faces

MISSING = "0" * 32  # shaped like a real id; no row holds it


def refused(memory: Memory, call, error: type[MemcoreError]) -> MemcoreError:
    """``call`` raises ``error`` and writes nothing at all."""
    before = store_snapshot(memory)
    with pytest.raises(error) as caught:
        call()
    assert store_snapshot(memory) == before
    return caught.value


def shape(exc: MemcoreError, row_id: str) -> tuple:
    """What a caller sees of a not-found answer, the id taken out."""
    body = exc.to_dict()
    return body["code"], body["status"], body["message"].replace(row_id, "<id>"), {**body["details"], "id": "<id>"}


def test_get_by_id_reads_a_fact_by_its_fact_id_and_a_version_by_its_id(tool, clock: FixedClock):
    first = tool.set("city", "Berlin").version
    clock.advance(timedelta(hours=1))
    second = tool.set("city", "Paris").version  # a new statement: a new fact, Berlin closed now
    assert tool.get_by_id(second.fact_id).value == "Paris"
    # A fact id answers the fact as ``get`` serves it: Berlin was true before Paris.
    with pytest.raises(NotFound):
        tool.get_by_id(first.fact_id)
    assert tool.get_by_id(first.fact_id, as_of=T0).value == "Berlin"
    # A version id answers that exact row of the history, whatever its status.
    closing = next(r for r in tool.history("city") if r.fact_id == first.fact_id and r.op.value == "supersede")
    row = tool.get_by_id(closing.id)
    assert (row.id, row.value, row.status.value) == (closing.id, "Berlin", "superseded")
    # The store did not know the closing row before it wrote it.
    with pytest.raises(NotFound):
        tool.get_by_id(closing.id, known_at=T0)


def test_an_id_out_of_reach_answers_exactly_as_a_missing_one(tool_for, memory: Memory):
    ana = tool_for()
    mine = ana.set("diet", "vegetarian").version  # ana's user scope
    team = ana.set("office", "Lisbon", scope="tenant").version
    own_agent = ana.set("style", "terse", scope="agent").version  # the helper agent's scope
    bob, eve = tool_for(user="bob", agent="other"), tool_for(tenant="globex")
    missing = refused(memory, partial(bob.get_by_id, MISSING), NotFound)
    strangers = [(bob, mine.fact_id), (bob, mine.id), (bob, own_agent.fact_id), (eve, mine.fact_id), (eve, team.id)]
    for stranger, row_id in strangers:
        exc = refused(memory, partial(stranger.get_by_id, row_id), NotFound)
        assert shape(exc, row_id) == shape(missing, MISSING)  # never a 403, never a different message
        refused(memory, partial(stranger.update_by_id, row_id, "tampered"), NotFound)
        refused(memory, partial(stranger.verify, id=row_id), NotFound)
    assert bob.get_by_id(team.fact_id).value == "Lisbon"  # a scope bob shares: the tenant's
    assert ana.get("diet").value == "vegetarian" and ana.get("diet").provenance.judged_by is None


def test_update_revises_the_live_row_and_keeps_its_fact_id(tool, clock: FixedClock):
    written = tool.set("city", "Berlin").version
    clock.advance(timedelta(minutes=5))
    result = tool.update("city", "Paris")
    assert result.verdict == "updated" and result.details["fact_id"] == written.fact_id
    current = tool.get("city")
    assert (current.fact_id, current.value, current.op.value) == (written.fact_id, "Paris", "update")
    assert [(r.op.value, r.value) for r in tool.history("city")] == [("set", "Berlin"), ("update", "Paris")]
    # A correction of the row: what the store believed before it is still readable.
    assert tool.get("city", known_at=T0).value == "Berlin"
    assert tool.get_by_id(written.fact_id).value == "Paris"
    assert tool.update("city", "Paris").verdict == "unchanged"  # nothing differs: no row
    assert len(tool.history("city")) == 2


def test_update_names_relations_as_set_does(tool):
    tool.set("home", "Ana lives in Berlin", subject="ana", relations=[["ana", "lives_in", "berlin"]])
    tool.update("home", "Ana lives in Paris", relations=[{"subject": "ana", "relation": "lives_in", "object": "paris"}])
    assert [(f.relation, f.object) for f in tool.list_facts("ana")] == [("lives_in", "paris")]
    tool.update("home", "Ana has moved away")  # a changed value named without relations states none
    assert tool.list_facts("ana") == []


def test_update_never_creates_and_a_deleted_row_stays_deleted(tool, memory: Memory):
    exc = refused(memory, lambda: tool.update("nowhere", "x"), NotFound)
    assert tool.get("nowhere") is None and "never creates" in exc.message
    written = tool.set("city", "Berlin").version
    tool.delete("city")
    refused(memory, lambda: tool.update("city", "Paris"), NotFound)
    refused(memory, lambda: tool.update_by_id(written.fact_id, "Paris"), NotFound)
    refused(memory, lambda: tool.verify("city"), NotFound)
    assert tool.get("city") is None and [r.op.value for r in tool.history("city")] == ["set", "delete"]


def test_update_refuses_what_set_refuses_and_writes_nothing(tool, memory: Memory):
    tool.set("city", "Berlin")
    tool.set("code", "1234")
    tool.lock("code")
    refused(memory, lambda: tool.update("code", "5678"), Locked)
    tool.set("name", "Ana")
    tool.pin("name")
    refused(memory, lambda: tool.update("name", "Anna"), PinnedConflict)
    refused(memory, lambda: tool.update("city", "Paris", if_match_sha256="0" * 64), PreconditionFailed)
    refused(memory, lambda: tool.update("city", "Paris", relations=[["only two", "parts"]]), InvalidInput)
    refused(memory, lambda: tool.update("city", "Paris", confidence=2), InvalidInput)
    refused(memory, lambda: tool.update("city", "x" * 100_000), MemcoreError)  # the char limit
    sha = tool.get("city").content_sha256
    assert tool.update("city", "Paris", if_match_sha256=sha).verdict == "updated"


def test_update_by_id_takes_a_fact_id_or_a_version_id(tool, memory: Memory):
    written = tool.set("city", "Berlin").version
    first = tool.update_by_id(written.fact_id, "Paris").version
    assert (first.fact_id, first.value) == (written.fact_id, "Paris")
    again = tool.update_by_id(first.id, "Rome").version  # a version id names its fact
    assert (again.fact_id, tool.get("city").value) == (written.fact_id, "Rome")
    refused(memory, lambda: tool.update_by_id(MISSING, "Oslo"), NotFound)
    refused(memory, lambda: tool.update_by_id(" ", "Oslo"), InvalidInput)


def test_verify_records_who_affirmed_the_row_and_when(tool_for, memory: Memory, clock: FixedClock):
    writer, reviewer = tool_for(), tool_for(user="rita", agent="reviewer")
    written = writer.set("office", "Lisbon", scope="tenant").version
    clock.advance(timedelta(hours=2))
    result = reviewer.verify("office", scope="tenant")
    assert result.verdict == "verified" and result.details["fact_id"] == written.fact_id
    seen = writer.get("office", scope="tenant")
    assert (seen.provenance.judged_by, seen.provenance.judged_at) == ("agent:reviewer", T0 + timedelta(hours=2))
    assert (seen.value, seen.fact_id, seen.provenance.actor) == ("Lisbon", written.fact_id, "agent:helper")
    history = writer.history("office", scope="tenant")
    assert [(r.op.value, r.provenance.judged_by) for r in history] == [("set", None), ("verify", "agent:reviewer")]
    # By id, in any scope the reviewer reads; a changed value drops the affirmation of the old one.
    reviewer.verify(id=written.fact_id)
    writer.update("office", "Porto", scope="tenant")
    assert writer.get("office", scope="tenant").provenance.judged_by is None
    refused(memory, lambda: reviewer.verify(), InvalidInput)
    refused(memory, lambda: reviewer.verify("office", id=written.fact_id, scope="tenant"), InvalidInput)
    refused(memory, lambda: reviewer.verify("nowhere"), NotFound)


def test_a_verified_row_keeps_its_affirmation_across_a_restatement_and_a_pin(tool):
    tool.set("city", "Berlin")
    tool.verify("city")
    tool.set("city", "Berlin")  # the same value said again
    tool.pin("city")
    assert tool.get("city").provenance.judged_by == "agent:helper"


def test_a_revised_value_is_what_search_finds_and_the_audit_chain_holds(indexed_memory: Memory):
    tool = indexed_memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session="s1"))
    written = tool.set("pet", "Ana has a parrot called Kiwi").version
    tool.update("pet", "Ana adopted a cat named Miso")
    tool.verify("pet")
    hits = [(h.fact_id, h.value) for h in tool.search("cat named Miso", k=5).hits]
    assert (written.fact_id, "Ana adopted a cat named Miso") in hits
    assert all("Kiwi" not in str(value) for _, value in hits)
    assert all("Kiwi" not in str(h.value) for h in tool.search("parrot Kiwi", k=5).hits)
    assert indexed_memory.verify_audit().ok


def test_an_affirmation_survives_a_large_batch_that_closes_the_rows(tool):
    """A batch large enough to be staged as one table still carries who vouched for each row it
    closes (the staged layout has no such column: those rows are written one by one)."""
    tool.bulk_set([{"key": f"k{i}", "value": f"v{i}"} for i in range(40)])
    for i in range(40):
        tool.verify(f"k{i}")
    tool.bulk_set([{"key": f"k{i}", "value": f"w{i}"} for i in range(40)])
    closed = [r for r in tool.history("k39") if r.op.value == "supersede"]
    assert [(r.value, r.provenance.judged_by) for r in closed] == [("v39", "agent:helper")]
    assert tool.get("k39").provenance.judged_by is None  # the new value was not vouched for


def test_an_erasure_of_a_verified_row_verifies_beside_others_the_same_reviewer_vouched_for(memory: Memory):
    """Who vouched is an identifier (kept by the chain, as an actor is), not what a person wrote:
    the erasure's census does not look for it elsewhere."""
    ana = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
    reviewer = memory.for_run(Identity(tenant="acme", user="ana", agent="dpo-reviewer-7"))
    bob = memory.for_run(Identity(tenant="globex", user="bob", agent="helper"))
    ana.set("diet", "vegetarian since March")
    bob.set("diet", "vegan since April")
    reviewer.verify("diet")  # a reviewer no other row names
    bob.verify("diet")
    request = memory.erase("acme", user="ana")
    assert request.status.value == "verified", request.error
    assert request.residue_count == 0
    assert ana.get("diet") is None and bob.get("diet").provenance.judged_by == "agent:helper"
