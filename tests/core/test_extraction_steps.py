"""set_from_messages: each step of the pipeline on its own, then the pipeline end to end."""

from datetime import timedelta

import pytest

from memory_core import Identity
from memory_core.errors import InvalidInput
from memory_core.extraction.model import Extracted, ExtractorOutput, parse_messages
from memory_core.extraction.pipeline import (
    DEFAULT_STEPS,
    ExtractionState,
    StepContext,
    drop_activity_narration,
    drop_recall_echoes,
    drop_session_echoes,
    fetch_existing,
    hash_dedup,
    llm_extract,
    retire_forgotten,
    windows,
)
from memory_core.extraction.rules import RuleExtractor
from tests.conftest import store_snapshot, utc

SESSION = utc(2024, 3, 10, 15)


def fact(
    turn_id, key_attr="lives_in", value="Ana lives in Lisbon", role="user", obj="Lisbon", span=(0, 5), subject="Ana"
):
    return Extracted(subject, key_attr, value, (subject, key_attr, obj), turn_id, span, value[:5], source_role=role)


def state_of(*messages, facts=()):
    turns = parse_messages(list(messages), session="s1")
    state = ExtractionState(turns, "s1", SESSION)
    state.facts = list(facts)
    return state


@pytest.fixture
def ana(indexed_memory):
    return indexed_memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session="s1"))


def ctx(tool, extractor=None, dry_run=False):
    return StepContext(tool, extractor or RuleExtractor(), "user", dry_run)


def test_fetch_existing_reads_the_scope_live_facts(ana):
    ana.set("ana:lives_in", "Ana lives in Lisbon")
    state = state_of({"role": "user", "content": "hi"})
    fetch_existing(state, ctx(ana))
    assert list(state.existing) == ["ana:lives_in"]


class CountingExtractor:
    name = "counting"

    def __init__(self):
        self.windows = []

    def extract(self, turns, *, session_date):
        self.windows.append([t.index for t in turns])
        return ExtractorOutput(tuple(fact(t.turn_id, value=f"fact {t.index}", span=(0, 1)) for t in turns))


def test_llm_extract_splits_a_long_transcript_into_overlapping_windows_and_merges(ana):
    messages = [{"role": "user", "content": "x" * 400} for _ in range(10)]
    state = state_of(*messages)
    extractor = CountingExtractor()
    llm_extract(state, StepContext(ana, extractor, "user", window_chars=1000))
    assert extractor.windows == [[i, i + 1] for i in range(9)]  # each window starts with the last turn before
    assert [f.value for f in state.facts] == [f"fact {i}" for i in range(10)]  # shared turns counted once
    assert state.windows == [(i, i + 1) for i in range(9)]
    assert [len(w) for w in windows(parse_messages(messages), 10_000)] == [10]


def test_drop_recall_echoes_drops_memory_turns_and_assistant_repeats_not_the_user(ana):
    state = state_of(
        {"role": "memory", "content": "Ana lives in Lisbon"},
        {"role": "assistant", "content": "You live in Lisbon."},
        {"role": "user", "content": "I live in Lisbon."},
        facts=[fact("s1:0", role="memory"), fact("s1:1", role="assistant"), fact("s1:2")],
    )
    drop_recall_echoes(state, ctx(ana))
    assert [f.turn_id for f in state.facts] == ["s1:2"]
    assert state.dropped["drop_recall_echoes"] == ["ana:lives_in", "ana:lives_in"]


def test_drop_session_echoes_keeps_the_user_statement(ana):
    state = state_of(
        {"role": "user", "content": "I live in Lisbon."},
        {"role": "assistant", "content": "Lisbon!"},
        facts=[fact("s1:0"), fact("s1:1", role="assistant"), fact("s1:1", "likes", role="assistant")],
    )
    drop_session_echoes(state, ctx(ana))
    assert [(f.turn_id, f.attribute) for f in state.facts] == [("s1:0", "lives_in"), ("s1:1", "likes")]


def test_drop_activity_narration(ana):
    state = state_of(
        {"role": "assistant", "content": "Let me check your calendar. Ana works at Acme."},
        {"role": "tool", "content": "calendar: 3 events"},
        facts=[fact("s1:0", "checks", span=(0, 20)), fact("s1:0", "works_at", span=(29, 45)), fact("s1:1", "events")],
    )
    drop_activity_narration(state, ctx(ana))
    assert [f.attribute for f in state.facts] == ["works_at"]


def test_hash_dedup_keeps_the_last_statement_of_a_key_and_drops_what_is_stored(ana):
    ana.set("ana:age", "Ana is 34 years old")
    state = state_of(
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        facts=[
            fact("s1:0", value="Ana lives in Lisbon"),
            fact("s1:1", value="Ana lives in Porto"),
            fact("s1:1", "age", value="Ana is 34 years old"),
        ],
    )
    fetch_existing(state, ctx(ana))
    hash_dedup(state, ctx(ana))
    assert [f.value for f in state.facts] == ["Ana lives in Porto"]


def test_retire_forgotten_retires_matching_rows_and_drops_earlier_facts(ana, clock):
    ana.set("ana:sister_name", "Ana's sister is named Maya")
    ana.set("ana:lives_in", "Ana lives in Lisbon")
    state = state_of(
        {"role": "user", "content": "My sister Maya is visiting."},
        {"role": "user", "content": "Please forget about Maya."},
        facts=[fact("s1:0", "sister_name", value="Ana's sister is named Maya", obj="Maya")],
    )
    fetch_existing(state, ctx(ana))
    clock.advance(timedelta(seconds=1))
    retire_forgotten(state, ctx(ana))
    assert state.forgotten == ["ana:sister_name"] and state.facts == []
    assert ana.get("ana:sister_name") is None and ana.get("ana:lives_in") is not None
    clock.advance(timedelta(seconds=1))
    assert ana.restore("ana:sister_name").verdict == "restored"  # a tombstone, not an erasure


def test_set_from_messages_writes_facts_evidence_chunks_and_provenance(ana, indexed_memory):
    result = ana.set_from_messages(
        [
            {"role": "user", "name": "Ana", "content": "I moved to Lisbon last year. My sister's name is Maya."},
            {"role": "assistant", "content": "Let me note that."},
        ],
        session="s1",
        session_date=SESSION,
        compaction_generation=2,
    )
    assert result.written == ("ana:lives_in", "ana:sister_name") and result.evidence == 2
    row = ana.get("ana:lives_in")
    assert row.value == "Ana lives in Lisbon" and row.valid_at == utc(2023, 1, 1)
    p = row.provenance
    assert (p.session, p.agent, p.model, p.source_turn, p.compaction_generation) == (
        "s1",
        "helper",
        "rules-v1",
        "s1:0",
        2,
    )
    assert p.source_quote == "I moved to Lisbon" and p.source_span == (0, 17)
    assert ana.get("evidence:s1:0000").value.startswith("Ana: I moved to Lisbon")
    assert ana.get("chunk:s1:0000").memory_type == "transcript_chunk"
    assert [(f.subject, f.relation, f.object) for f in ana.list_facts("Ana")] == [
        ("ana", "has_sister", "maya"),
        ("ana", "lives_in", "lisbon"),
    ]
    assert ana.recall("where does Ana live").hits  # facts and evidence are found


def test_a_later_statement_supersedes_and_a_forget_retires(ana, clock):
    ana.set_from_messages([{"role": "user", "name": "Ana", "content": "I live in Lisbon."}], session="s1")
    clock.advance(timedelta(days=30))
    result = ana.set_from_messages([{"role": "user", "name": "Ana", "content": "I moved to Porto."}], session="s2")
    assert result.written == ("ana:lives_in",) and ana.get("ana:lives_in").value == "Ana lives in Porto"
    assert [r.value for r in ana.history("ana:lives_in")][0] == "Ana lives in Lisbon"
    clock.advance(timedelta(days=1))
    again = ana.set_from_messages([{"role": "user", "name": "Ana", "content": "I moved to Porto."}], session="s3")
    # the extractor is shown the stored memories and skips the restatement (``fetch_existing_memories``)
    assert again.written == () and "skipped ana:lives_in: it restates a stored memory" in again.notes
    steps = [s for s in DEFAULT_STEPS if s != "fetch_existing_memories"]
    unseen = ana.set_from_messages([{"role": "user", "name": "Ana", "content": "I moved to Porto."}], steps=steps)
    assert unseen.written == () and unseen.dropped["hash_dedup"] == ("ana:lives_in",)


def test_steps_can_be_reordered_skipped_or_registered(ana, indexed_memory):
    seen = []
    indexed_memory.register_step("audit_names", lambda state, context: seen.append([f.key for f in state.facts]))
    result = ana.set_from_messages(
        [{"role": "user", "name": "Ana", "content": "I live in Lisbon."}],
        steps=["llm_extract", "audit_names", "bulk_write"],
    )
    assert seen == [["ana:lives_in"]] and result.steps == ("llm_extract", "audit_names", "bulk_write")
    for bad in (["nope"], ["bulk_write", "bulk_write"], "llm_extract"):
        with pytest.raises(InvalidInput):
            ana.set_from_messages([{"role": "user", "content": "I live in Lisbon."}], steps=bad)
    with pytest.raises(InvalidInput):
        indexed_memory.register_step("bulk_write", lambda s, c: None)


def test_bad_messages_are_refused_and_nothing_is_written(ana, indexed_memory):
    before = store_snapshot(indexed_memory)
    for bad in (
        [],
        "hello",
        [{"role": "robot", "content": "x"}],
        [{"role": "user"}],
        [{"role": "user", "content": "x", "extra": 1}],
        [{"role": "user", "content": "x", "at": "yesterday"}],
    ):
        with pytest.raises(InvalidInput):
            ana.set_from_messages(bad)
    assert store_snapshot(indexed_memory) == before


def test_a_dry_run_writes_nothing(ana, indexed_memory):
    before = store_snapshot(indexed_memory)
    result = ana.set_from_messages([{"role": "user", "name": "Ana", "content": "I live in Lisbon."}], dry_run=True)
    assert result.dry_run and store_snapshot(indexed_memory) == before


def test_a_model_backed_extractor_through_the_openai_adapter(ana):
    from memory_core.adapters.llm.extractor import LLMExtractor
    from memory_core.adapters.llm.openai_chat import OpenAIChat
    from memory_core.llm import LLMMalformed
    from tests.llm_server import MALFORMED, ScriptedLLM, ok

    answer = {
        "facts": [
            {
                "subject": "Ana",
                "attribute": "lives_in",
                "relation": "lives in",
                "object": "Lisbon",
                "statement": "Ana lives in Lisbon",
                "turn_id": "s9:0",
                "quote": "moved to Lisbon",
                "valid_from": "2023-05-01",
                "multi_valued": False,
            },
            {
                "subject": "Ana",
                "attribute": "pet",
                "relation": "has",
                "object": "cat",
                "statement": "Ana has a cat",
                "turn_id": "s9:7",
                "quote": "cat",
                "valid_from": None,
                "multi_valued": False,
            },
        ]
    }
    with ScriptedLLM() as server:
        server.script = [ok(answer, prompt_tokens=300, completion_tokens=80)]
        llm = OpenAIChat(server.base_url, "extract-model", sleep=lambda _: None, price_in_per_mtok=2.0)
        result = ana.set_from_messages(
            [{"role": "user", "name": "Ana", "content": "I moved to Lisbon in May 2023."}],
            session="s9",
            extractor=LLMExtractor(llm),
        )
        assert result.written == ("ana:lives_in",) and result.usage.prompt_tokens == 300
        assert any("unknown turn" in n for n in result.notes)
        row = ana.get("ana:lives_in")
        assert row.provenance.model == "openai:extract-model" and row.valid_at == utc(2023, 5, 1)
        assert row.provenance.source_span == (2, 17)  # "moved to Lisbon" in "I moved to Lisbon in May 2023."
        sent = server.requests[0]
        assert sent["response_format"]["json_schema"]["name"] == "extracted_facts"
        assert "[s9:0] Ana (user): I moved to Lisbon in May 2023." in sent["messages"][1]["content"]
        server.script = [MALFORMED]
        with pytest.raises(LLMMalformed):  # an unusable answer fails the call; nothing is written
            ana.set_from_messages(
                [{"role": "user", "name": "Ana", "content": "I moved to Porto."}],
                session="s10",
                extractor=LLMExtractor(llm),
            )
        assert ana.get("ana:lives_in").value == "Ana lives in Lisbon"


def test_place_facts_writes_facts_about_typed_subjects_where_placement_says(indexed_memory, ana):
    from memory_core.extraction.pipeline import place_facts

    indexed_memory.for_run(Identity(tenant="acme", user="ops", admin=True)).ontology_set(
        "## service\n- `@memory_scope` tenant\n"
    )
    ana.set(
        "api:kind",
        "checkout-api is a service",
        scope="tenant",
        subject="checkout-api",
        subject_type="service",
        relations=[["checkout-api", "is a", "service"]],
    )
    state = state_of(
        {"role": "user", "content": "checkout-api runs on host-7. Ana lives in Lisbon."},
        facts=[
            fact("s1:0", "runs_on", "checkout-api runs on host-7", obj="host-7", subject="checkout-api"),
            fact("s1:0"),
        ],
    )
    place_facts(state, ctx(ana))
    assert [f.key for f in state.facts] == ["ana:lives_in"]  # untyped subject: left to the batch
    assert state.dropped["place_facts"] == ["checkout-api:runs_on"]
    assert ana.get("checkout-api:runs_on", scope="tenant").value == "checkout-api runs on host-7"
    assert ana.get("checkout-api:runs_on", scope="user") is None
