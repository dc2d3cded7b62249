"""The reflect pipeline (docs/reflect.md): its pure decisions, the five phases over a synthetic
session stream (the facts it states, the claims it refuses and why), that a completed pipeline
run again writes nothing, and that a phase killed midway (through a failing port) and run again
ends exactly where an uninterrupted run does."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

import pytest

from memory_core import Memory
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.erasure import ErasureStatus
from memory_core.errors import InvalidInput
from memory_core.reflect import PHASES, REFLECT_ACTOR, REFLECT_ORIGIN, ReflectSettings, Source
from memory_core.reflect.model import CONTRADICTS, SUPPORTS, Connection
from memory_core.reflect.reduce import claims_of, sentences
from memory_core.reflect.reweave import plan
from memory_core.reflect.verify import check, known_types, settlement
from memory_core.services.reflect import ReflectService
from tests.conftest import T0
from tests.faults import FailingCalls, FaultyStore, Killed
from tests.reflect_stream import (
    ANA,
    EXPECTED_TEXTS,
    REINFORCED,
    REJECTED,
    RETIRED,
    TENANT,
    clock,
    final_state,
    live_facts,
    write_stream,
)

SMALL = ReflectSettings(page=2)  # small steps, so a kill lands between two of them


def stream_home(path: Path) -> Path:
    with Memory.open(path, clock=clock(), embedder="hashing") as memory:
        write_stream(memory)
    return path


def run(memory: Memory, phases=PHASES, settings: ReflectSettings = SMALL) -> list:
    service = ReflectService(memory.session, settings)
    return [service.phase(TENANT, phase) for phase in phases]


def end_clock():
    at = clock()
    at.advance(timedelta(minutes=5))
    return at


# -- the pure decisions ----------------------------------------------------------------------------


def test_sentences_split_statements_and_leave_questions_and_numbers_alone():
    text = "Rolled back release 4.2 at noon. Was it the migration?\n- Hotfixes skip the queue!\n\n2. Keep e.g. logs."
    assert sentences(text) == ["Rolled back release 4.2 at noon.", "Hotfixes skip the queue!", "Keep e.g. logs."]


def _source(text: str, **more) -> Source:
    base = dict(
        ref="fact:f1", kind="capture", tenant="acme", scope="user", owner_id="ana", seq=7, fact_id="f1",
        key="claim:deploys:abc", text=text, subject="deploys", memory_type="lesson", observed_at=T0,
        holds_statement=True,
    )  # fmt: skip
    return Source(**{**base, **more})


def test_a_capture_of_one_statement_holds_its_claim_and_a_longer_one_is_split():
    (one,) = claims_of(_source("Every deploy needs a green build."))
    assert one.whole and one.key == "claim:deploys:abc" and one.source_seq == 7
    first, second = claims_of(_source("Every deploy needs a green build. Never on Fridays."))
    assert not first.whole and first.key.startswith("reflect:deploys:") and first.key != second.key
    assert claims_of(_source("Every deploy needs a green build. Never on Fridays."))[1].claim_id == second.claim_id


def test_a_transcript_gives_what_the_rule_extractor_reads_in_it():
    window = _source("user: I live in Lisbon. Nice weather?\nassistant: I live in the cloud.", kind="transcript")
    window = dataclasses.replace(window, window=True, holds_statement=False, memory_type="general")
    (claim,) = claims_of(window)
    assert (claim.key, claim.text, claim.relations) == ("user:lives_in", "The user lives in Lisbon", (
        ("user", "lives_in", "Lisbon"),
    ))  # fmt: skip


def _states(memory: Memory, **facts: str):
    tool = memory.for_run(ANA)
    return {key: tool.set(key, text, memory_type="lesson").rows[-1] for key, text in facts.items()}


def test_reweave_supersedes_older_contradictions_and_refuses_newer_ones(memory):
    f = _states(memory, day="Deploys happen on Fridays.")["day"]
    (claim,) = claims_of(_source("Deploys never happen on Fridays.", holds_statement=False))
    claim = dataclasses.replace(claim, connections=(Connection(CONTRADICTS, f.fact_id, "day", 0.9),))
    later = dataclasses.replace(claim, observed_at=f.valid_at + timedelta(days=1))
    assert plan(later, {f.fact_id: f}, [], 0.8).action == "supersede"
    earlier = dataclasses.replace(claim, observed_at=f.valid_at - timedelta(days=1))
    assert plan(earlier, {f.fact_id: f}, [], 0.8).action == "stale"
    assert plan(later, {f.fact_id: f}, [], 0.95).action == "new"  # not close enough to act on
    unconnected = dataclasses.replace(claim, connections=())
    assert plan(unconnected, {}, [f], 0.8).action == "update"  # its key holds another value: the write closes it


def test_reweave_reinforces_what_a_fact_says_already_and_refines_what_it_says_less_of(memory):
    s = _states(memory, wide="The staging cluster runs in eu-west-1 and is rebuilt nightly.", narrow="Staging runs.")
    (claim,) = claims_of(_source("The staging cluster runs in eu-west-1.", holds_statement=False))
    near = {s["wide"].fact_id: s["wide"], s["narrow"].fact_id: s["narrow"]}
    wide = dataclasses.replace(claim, connections=(Connection(SUPPORTS, s["wide"].fact_id, "wide", 0.9),))
    reinforce = plan(wide, near, [], 0.8)
    assert (reinforce.action, reinforce.key, reinforce.value) == ("reinforce", "wide", s["wide"].value)
    narrow = dataclasses.replace(claim, connections=(Connection(SUPPORTS, s["narrow"].fact_id, "narrow", 0.9),))
    assert plan(narrow, near, [], 0.8).action == "refine"
    held = dataclasses.replace(narrow, whole=True)
    assert plan(held, near, [], 0.8).holder == claim.source_fact and plan(held, near, [], 0.8).key is None


def test_verify_names_why_a_claim_may_not_be_written(memory):
    (claim,) = claims_of(_source("Every deploy needs a green build.", holds_statement=False))
    known = known_types(["metric"])
    decided = plan(claim, {}, [], 0.8)

    def reason(c, p=decided, **more):
        args = dict(known=known, max_chars=40, identical=None, target=None, holder=None, now=T0) | more
        return check(c, p, **args)

    assert reason(claim) is None
    assert reason(dataclasses.replace(claim, text="the a of.")).startswith("empty")
    assert reason(dataclasses.replace(claim, text="Every deploy " * 5)).startswith("too_long")
    assert reason(claim, dataclasses.replace(decided, key="x" * 600)).startswith("invalid_key")
    assert reason(dataclasses.replace(claim, memory_type="mood")).startswith("unknown_memory_type")
    assert "transcript_chunk" not in known and "metric" in known
    same = _states(memory, same="Every deploy needs a green build.")["same"]
    assert reason(claim, identical=same) == "duplicate: 'same' already says it"


def test_a_claim_never_stays_flagged_against_its_own_source(memory):
    tool = memory.for_run(ANA)
    source = tool.set("capture", "Every deploy needs a green build. Never on Fridays.").rows[-1]
    holder = tool.set("claim", "Every deploy needs a green build.").rows[-1]
    flagged = dataclasses.replace(holder, conflict_with=(source.fact_id,))
    (claim,) = claims_of(_source("Every deploy needs a green build.", holds_statement=False))
    row, peer, action = settlement(plan(claim, {}, [], 0.8), flagged, None, source, T0)
    assert (row.fact_id, peer.fact_id, action.kind) == (holder.fact_id, source.fact_id, "clear")
    assert settlement(plan(claim, {}, [], 0.8), holder, None, source, T0) is None


# -- the pipeline --------------------------------------------------------------------------------


def test_the_pipeline_states_connects_reweaves_and_refuses_with_reasons(tmp_path):
    with Memory.open(stream_home(tmp_path / "home"), clock=end_clock(), embedder="hashing") as memory:
        reports = memory.reflect(TENANT)
        assert [r.phase for r in reports] == list(PHASES)
        facts = live_facts(memory)
        keys = {key for _, _, key in facts}
        assert EXPECTED_TEXTS <= set(facts.values())
        assert not RETIRED & keys and REINFORCED in keys
        state = memory.reflect_state(TENANT)
        rejected: dict[str, int] = {}
        for c in state["claims"]:
            assert c["status"] in ("written", "rejected") and c["archived"]
            if c["status"] == "rejected":
                code = c["reason"].split(":", 1)[0]
                rejected[code] = rejected.get(code, 0) + 1
        assert rejected == REJECTED
        assert {i["status"] for i in state["inputs"]} == {"archived"}
        assert len(set(state["cursors"].values())) == 1 and set(state["cursors"]) == set(PHASES)
        tool = memory.for_run(ANA)
        # The reinforced fact was said again; a stated claim names the pipeline and its claim.
        assert tool.history(REINFORCED)[-1].reinforcement_count == 1
        stated = next(k for k, v in facts.items() if v == "Hotfixes skip the release queue.")[2]
        row = tool.get(stated)
        assert row.provenance.origin == REFLECT_ORIGIN and row.provenance.actor == REFLECT_ACTOR
        assert row.provenance.source.startswith("memory.reflect:claim:") and row.memory_type == "lesson"
        lineage = tool.lineage(stated)
        assert [r["source_key"].split(":")[0] for r in lineage] == ["decision"]
        assert tool.history("release-day")[-1].superseded_by is not None


def test_a_completed_pipeline_run_again_writes_nothing(tmp_path):
    with Memory.open(stream_home(tmp_path / "home"), clock=end_clock(), embedder="hashing") as memory:
        memory.reflect(TENANT)
        facts, claims = live_facts(memory), memory.reflect_state(TENANT)["claims"]
        again = memory.reflect(TENANT)  # reads its own writes' events, and passes over them
        assert again[0].counts.get("claims", 0) == 0 and again[0].counts["own_events"] > 0
        assert all(set(r.counts) <= {"own_events"} for r in again)
        assert live_facts(memory) == facts and memory.reflect_state(TENANT)["claims"] == claims
        tables = memory.store.inspection.tables()
        for phase in PHASES:
            memory.reflect_phase(TENANT, phase)
        assert memory.store.inspection.tables() == tables  # not a row, not a cursor


def test_an_erasure_takes_the_claims_with_their_namespace_and_verifies(tmp_path):
    with Memory.open(stream_home(tmp_path / "home"), clock=end_clock(), embedder="hashing") as memory:
        memory.reflect(TENANT)
        assert memory.reflect_state(TENANT)["claims"]
        request = memory.erase(TENANT, user="ana")
        assert request.status is ErasureStatus.VERIFIED, request.error
        assert request.residue["rows:reflect_claims"] == 0 and request.residue["text:reflect_claims"] == 0
        state = memory.reflect_state(TENANT)
        assert state["claims"] == [] and state["inputs"] == [] and state["cursors"]  # a cursor is no content


def test_a_phase_name_is_checked_and_a_read_only_home_refuses(tmp_path):
    home = stream_home(tmp_path / "home")
    with Memory.open(home, clock=end_clock()) as memory:
        with pytest.raises(InvalidInput):
            memory.reflect_phase(TENANT, "digest")
    with Memory.open(home, read_only=True) as memory:
        with pytest.raises(InvalidInput):
            memory.reflect_phase(TENANT, "reduce")


def test_without_an_embedder_claims_connect_through_the_graph_only(tmp_path):
    with Memory.open(stream_home(tmp_path / "home"), clock=end_clock()) as memory:
        memory.reflect(TENANT)
        kinds = {c["kind"] for claim in memory.reflect_state(TENANT)["claims"] for c in claim["connections"]}
        assert kinds == {"shares_entity"}
        assert "Hotfixes skip the release queue." in live_facts(memory).values()


# -- killed midway --------------------------------------------------------------------------------

KILLS = [
    ("reduce", "stage", 4),  # after four inputs staged
    ("reflect", "save", 1),  # after the first claims' connections
    ("reweave", "save", 2),
    ("verify", "save", 1),  # between the first claim's write and its save: found by its tag, not written twice
    ("verify", "save", 3),  # the same, for the second claim
    ("verify", "versions", 3),  # inside the third write's transaction
    ("archive", "archive", 2),
]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> dict:
    """The state an uninterrupted pipeline settles in (run twice: the second passes over its own writes)."""
    home = stream_home(tmp_path_factory.mktemp("whole") / "home")
    with Memory.open(home, clock=end_clock(), embedder="hashing") as memory:
        run(memory)
        first = final_state(memory)
        run(memory)
        return {"first": first, "settled": final_state(memory)}


@pytest.mark.parametrize(("phase", "where", "after"), KILLS)
def test_a_phase_killed_midway_and_run_again_ends_as_an_uninterrupted_run(tmp_path, uninterrupted, phase, where, after):
    home = stream_home(tmp_path / "home")
    store = FaultyStore.open(home)
    memory = Memory(store, end_clock(), embedder=HashingEmbedder())
    try:
        before = PHASES[: PHASES.index(phase)]
        run(memory, before)
        progress = memory.reflect_state(TENANT)
        if where == "versions":
            seen = []

            def reflect_write(batch) -> bool:
                seen.extend(a for a in batch.audits if a.actor == REFLECT_ACTOR and a.op == "set")
                return len(seen) >= after

            store.versions.fail_inside(reflect_write, OSError("disk full"))
        else:
            store.reflect = FailingCalls(store.inner.reflect, where, after=after)
        with pytest.raises((Killed, OSError)):
            run(memory, [phase])
        killed = memory.reflect_state(TENANT)
        assert killed != progress  # it did part of its work
        assert killed["cursors"].get(phase, 0) < killed["cursors"].get("reduce", 1) or phase == "reduce"
    finally:
        memory.close()
    with Memory.open(home, clock=end_clock(), embedder="hashing") as memory:
        run(memory)
        first = final_state(memory)
        assert {k: first[k] for k in ("facts", "claims", "inputs")} == {
            k: uninterrupted["first"][k] for k in ("facts", "claims", "inputs")
        }
        run(memory)  # past the pipeline's own writes: the cursors too, once each has read as many events
        assert final_state(memory) == uninterrupted["settled"]
