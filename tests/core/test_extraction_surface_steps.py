"""The extraction steps of the seed's surface: drop_non_durable, verify_durable (fail-open) and
fetch_existing_memories (the extractor is shown what memory holds)."""

from __future__ import annotations

import re

import pytest

from memory_core import Identity
from memory_core.errors import InvalidInput
from memory_core.extraction.durable import MAX_KNOWN_MEMORIES, KnownMemory, nearest_memories, non_durable
from memory_core.extraction.model import Extracted, ExtractorOutput, parse_messages
from memory_core.extraction.pipeline import DEFAULT_STEPS
from memory_core.llm import LLMAnswer, LLMUnavailable, Usage
from tests.conftest import store_snapshot

pytestmark = pytest.mark.faces

ANA = Identity(tenant="acme", user="ana", agent="helper", session="s1")
CODING = [
    {"role": "user", "content": "The project uses PostgreSQL 16 for storage."},
    {"role": "user", "content": "Currently debugging the flaky upload test."},
    {"role": "user", "content": "The build passed on the second try."},
    {"role": "user", "content": "TODO: next I will refactor the parser."},
    {"role": "user", "content": "I committed the changes to the branch."},
    {"role": "user", "content": "Deployments go through the staging cluster first."},
]
DURABLE = ("project:note_0", "project:note_5")
_SENTENCE = re.compile(r"[^.!?]+[.!?]?")


class SentenceExtractor:
    """Every sentence of a user turn is a fact about the project (key ``project:note_<turn>``)."""

    name = "sentences"

    def __init__(self):
        self.shown = None

    def extract(self, turns, *, session_date):
        facts = []
        for turn in turns:
            if turn.role != "user":
                continue
            for m in _SENTENCE.finditer(turn.content):
                text = m.group(0).strip()
                if text:
                    start = turn.content.index(text)
                    facts.append(
                        Extracted(
                            "project", f"note_{turn.index}", text, None, turn.turn_id, (start, start + len(text)), text
                        )
                    )
        return ExtractorOutput(tuple(facts))


class SeeingExtractor(SentenceExtractor):
    """Takes ``known=``: records what it was shown."""

    def extract(self, turns, *, session_date, known=()):
        self.shown = tuple(known)
        return super().extract(turns, session_date=session_date)


class VerifierLLM:
    """The LLM port: answers ``data``, or raises ``error``; counts its calls."""

    name = "verifier"

    def __init__(self, data=None, error=None):
        self.data, self.error, self.calls = data, error, []

    def complete_json(self, messages, schema, *, schema_name, max_tokens=1024, accept=None):
        self.calls.append(schema_name)
        if self.error is not None:
            raise self.error
        return LLMAnswer(self.data, "verifier", Usage(3, 1, 0.0))


@pytest.fixture
def ana(indexed_memory):
    indexed_memory.extractor = SentenceExtractor()
    return indexed_memory.for_run(ANA)


def test_drop_non_durable_drops_status_housekeeping_and_plans(ana):
    result = ana.set_from_messages(CODING, session="code-1")
    assert "drop_non_durable" in result.steps and "verify_durable" not in result.steps  # on / off by default
    assert result.written == DURABLE
    assert set(result.dropped["drop_non_durable"]) == {
        "project:note_1",
        "project:note_2",
        "project:note_3",
        "project:note_4",
    }
    assert ana.get("project:note_1") is None and ana.get("project:note_0").value.startswith("The project uses")


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Running the linter right now", "status"),
        ("All 214 tests passed", "status"),
        ("CI is green again", "status"),
        ("Cleaned up the temp files", "housekeeping"),
        ("Pushed the branch", "housekeeping"),
        ("Next steps: wire the cache", "plan"),
        ("Then I'll update the docs", "plan"),
        ("Ana's sister lives in Oslo", None),
        ("The service runs on port 8080", None),
        ("We deploy on Fridays", None),
    ],
)
def test_the_non_durable_rules(text, rule):
    assert non_durable(text) == rule


def test_skipping_drop_non_durable_keeps_everything(ana):
    steps = [s for s in DEFAULT_STEPS if s != "drop_non_durable"]
    result = ana.set_from_messages(CODING, session="code-1", steps=steps)
    assert len(result.written) == len(CODING) and "drop_non_durable" not in result.dropped


def test_verify_durable_keeps_what_the_verifier_calls_durable(indexed_memory, ana):
    llm = indexed_memory.llm = VerifierLLM({"durable": [0]})
    steps = [*DEFAULT_STEPS[:-1], "verify_durable", DEFAULT_STEPS[-1]]
    result = ana.set_from_messages(CODING, session="code-1", steps=steps)
    assert llm.calls == ["verify_durable"]
    assert result.written == ("project:note_0",) and result.dropped["verify_durable"] == ("project:note_5",)


@pytest.mark.parametrize(
    "llm",
    [
        VerifierLLM(error=LLMUnavailable("the model is down", reached=False)),
        VerifierLLM(error=RuntimeError("a broken port")),
        VerifierLLM({"durable": [7]}),  # names no candidate
        VerifierLLM({"durable": "all"}),
        VerifierLLM({"nothing": []}),
        None,  # no model given
    ],
    ids=["unavailable", "raises", "out_of_range", "not_a_list", "malformed", "no_llm"],
)
def test_verify_durable_fails_open(indexed_memory, ana, llm):
    indexed_memory.llm = llm
    steps = [*DEFAULT_STEPS[:-1], "verify_durable", DEFAULT_STEPS[-1]]
    result = ana.set_from_messages(CODING, session="code-1", steps=steps)
    assert result.written == DURABLE and "verify_durable" not in result.dropped  # every candidate kept
    assert any(n.startswith("verify_durable") and "every candidate kept" in n for n in result.notes)


def test_the_extractor_is_shown_the_namespace_memories(indexed_memory, ana):
    ana.set("project:db", "The project uses PostgreSQL 16 for storage.")
    ana.set("evidence:old:0000", "user: an old turn", kind="note")
    seeing = indexed_memory.extractor = SeeingExtractor()
    ana.set_from_messages(CODING[:1], session="code-2")
    assert KnownMemory("project:db", "The project uses PostgreSQL 16 for storage.") in seeing.shown
    assert all(not m.key.startswith("evidence:") for m in seeing.shown)  # lineage rows are not memories


def test_the_rule_extractor_skips_an_exact_restatement(indexed_memory):
    from memory_core.extraction.rules import RuleExtractor

    indexed_memory.extractor = RuleExtractor()
    ana = indexed_memory.for_run(ANA)
    ana.set("ana:home", "Ana lives in Porto")  # another key: the hash check could not see it
    said = [{"role": "user", "name": "Ana", "content": "I moved to Porto."}]
    result = ana.set_from_messages(said, session="s2")
    assert result.written == () and "skipped ana:lives_in: it restates a stored memory" in result.notes
    unseen = ana.set_from_messages(
        said, session="s3", steps=[s for s in DEFAULT_STEPS if s != "fetch_existing_memories"]
    )
    assert unseen.written == ("ana:lives_in",)  # without the step the extractor cannot know


def test_an_extractor_without_known_is_called_as_before(ana):
    ana.set("project:db", "The project uses PostgreSQL 16 for storage.")
    result = ana.set_from_messages(CODING[5:], session="code-3")
    assert result.written == ("project:note_0",)


def test_the_memories_shown_are_bounded_and_nearest_first():
    class Row:
        memory_type = "fact"

        def __init__(self, key, value):
            self.key, self.value = key, value

    rows = [Row(f"k{n:03d}", f"filler number {n}") for n in range(MAX_KNOWN_MEMORIES + 30)]
    rows.append(Row("zz:db", "the project uses postgres"))
    shown = nearest_memories(rows, parse_messages([{"role": "user", "content": "which postgres does the project use"}]))
    assert len(shown) == MAX_KNOWN_MEMORIES and shown[0].key == "zz:db"


def test_bad_steps_are_refused_and_write_nothing(indexed_memory, ana):
    before = store_snapshot(indexed_memory)
    for bad in (["verify_durable", "verify_durable", "bulk_write"], ["drop_non_durables", "bulk_write"]):
        with pytest.raises(InvalidInput):
            ana.set_from_messages(CODING, session="code-1", steps=bad)
    assert store_snapshot(indexed_memory) == before
