"""``ask``: recall, then an answer through the LLM port that cites the hits it rests on
(docs/retrieval.md, "Asking"). The model is a scripted OpenAI-compatible server on loopback."""

import pytest

from memory_core import Identity, Memory
from memory_core.adapters.llm.openai_chat import OpenAIChat
from memory_core.errors import CostCapReached, InvalidInput, LLMNotConfigured
from memory_core.llm import LLMAnswer, LLMMalformed, LLMUnavailable, Usage
from memory_core.retrieval.answer import ANSWERED, MODEL_ABSTAINED, UNCITED
from memory_core.session.usage import flush_exposures
from tests.conftest import store_snapshot
from tests.llm_server import MALFORMED, ScriptedLLM, ok

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service


@pytest.fixture
def llm_server():
    with ScriptedLLM() as server:
        server.script = [ok({"answer": "Miso", "citations": [1], "abstain": False})]
        yield server


@pytest.fixture
def memory(home, clock, llm_server):
    llm = OpenAIChat(base_url=llm_server.base_url, model="scripted", max_retries=0, price_in_per_mtok=1.0)
    with Memory.open(home, clock=clock, embedder="hashing", llm=llm) as m:
        yield m


def tool_of(memory, session=None):
    return memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session=session))


def write_chat(memory):
    chat = tool_of(memory, session="chat-1")
    chat.set(
        "D1:1",
        "I adopted a grey kitten and called her Miso",
        kind="note",
        subject="Ana",
        valid_at="2024-05-08T12:00:00Z",
    )
    chat.set(
        "D1:2", "I ran the Berlin half marathon yesterday", kind="note", subject="Ben", valid_at="2024-05-08T12:00:00Z"
    )


def test_ask_answers_with_citations_to_the_hits(memory, llm_server):
    write_chat(memory)
    answer = tool_of(memory).ask("What is the name of Ana's kitten?")
    assert (answer.answer, answer.abstained, answer.reason) == ("Miso", False, ANSWERED)
    (cited,) = answer.citations
    assert cited.number == 1 and cited.key == answer.hits[0].key == "D1:1"
    assert cited.fact_id == answer.hits[0].fact_id and "Miso" in cited.text
    assert answer.model == "scripted" and answer.prompt_tokens == 100 and answer.trace_id
    # The model read the hits numbered, each with its date and who said it.
    prompt = llm_server.requests[-1]["messages"][-1]["content"]
    assert "[1] (2024-05-08) Ana: I adopted a grey kitten" in prompt
    assert "Question: What is the name of Ana's kitten?" in prompt


def test_citations_that_name_no_hit_are_dropped(memory, llm_server):
    write_chat(memory)
    llm_server.script = [ok({"answer": "Miso", "citations": [1, 7, 0], "abstain": False})]
    answer = tool_of(memory).ask("What is the name of Ana's kitten?")
    assert [c.number for c in answer.citations] == [1] and answer.unknown_citations == (7, 0)


def test_an_answer_that_cites_no_hit_is_not_given(memory, llm_server):
    write_chat(memory)
    llm_server.script = [ok({"answer": "Paris", "citations": [9], "abstain": False})]
    answer = tool_of(memory).ask("What is the name of Ana's kitten?")
    assert answer.abstained and answer.answer is None and answer.reason == UNCITED
    assert answer.draft == "Paris" and answer.citations == ()


def test_the_model_may_find_no_answer_in_the_hits(memory, llm_server):
    write_chat(memory)
    llm_server.script = [ok({"answer": "", "citations": [], "abstain": True})]
    answer = tool_of(memory).ask("What is the name of Ana's kitten?")
    assert (answer.abstained, answer.reason, answer.answer) == (True, MODEL_ABSTAINED, None)


def test_when_the_search_abstains_the_model_is_not_asked(memory, llm_server):
    answer = tool_of(memory).ask("What is the name of Ana's kitten?")  # nothing written: no_match
    assert (answer.abstained, answer.reason, answer.hits) == (True, "no_match", ())
    assert answer.model is None and llm_server.requests == []


def test_ask_without_a_model_is_refused(memory):
    write_chat(memory)
    memory.llm = None
    with pytest.raises(LLMNotConfigured):
        tool_of(memory).ask("What is the name of Ana's kitten?")


def test_ask_stops_at_the_daily_model_budget(memory, llm_server):
    write_chat(memory)
    admin = memory.for_run(Identity(tenant="acme", user="root", admin=True))
    admin.configure(daily_cost_cap_usd=0.0001)  # one answer (100 prompt tokens at $1/Mtok) spends it
    llm_server.script = [ok({"answer": "Miso", "citations": [1], "abstain": False}, prompt_tokens=100)]
    tool = tool_of(memory)
    assert tool.ask("What is the name of Ana's kitten?").cost_usd == pytest.approx(0.0001)
    with pytest.raises(CostCapReached):
        tool.ask("What is the name of Ana's kitten?")
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        ["not", "an", "object"],
        {"answer": "Miso", "citations": 1, "abstain": False},
        {"answer": "Miso", "citations": [True], "abstain": False},
        {"answer": "Miso", "citations": ["1"], "abstain": False},
    ],
)
def test_an_answer_not_of_the_schema_is_a_typed_refusal(memory, reply):
    write_chat(memory)
    memory.llm = ListLLM(reply)
    with pytest.raises(LLMMalformed):
        tool_of(memory).ask("What is the name of Ana's kitten?")


def test_an_integral_float_citation_counts(memory):
    write_chat(memory)
    memory.llm = ListLLM({"answer": "Miso", "citations": [1.0], "abstain": False})
    assert [c.number for c in tool_of(memory).ask("What is the name of Ana's kitten?").citations] == [1]


def test_an_unusable_answer_that_was_paid_for_counts_against_the_budget(memory, llm_server):
    write_chat(memory)
    admin = memory.for_run(Identity(tenant="acme", user="root", admin=True))
    admin.configure(daily_cost_cap_usd=0.00015)
    llm_server.script = [MALFORMED]  # asked twice per call, 50 prompt tokens each at $1/Mtok: $0.0001
    tool = tool_of(memory)
    for _ in range(2):
        with pytest.raises(LLMMalformed):
            tool.ask("What is the name of Ana's kitten?")
    with pytest.raises(CostCapReached):  # 4 paid requests: $0.0002 spent
        tool.ask("What is the name of Ana's kitten?")


def test_ask_reads_at_most_fifty_hits(memory):
    write_chat(memory)
    with pytest.raises(InvalidInput):
        tool_of(memory).ask("What is the name of Ana's kitten?", k=51)


class ListLLM:
    """A model port that answers ``data`` as it is (a port need not check the schema)."""

    name = "list-llm"

    def __init__(self, data):
        self.data = data

    def complete_json(self, messages, schema, *, schema_name, max_tokens=1024, accept=None):
        return LLMAnswer(self.data, "list-llm", Usage(1, 1, 0.0))


def test_a_refused_answer_leaves_the_store_as_it_was_and_an_answer_counts_its_hits(home, clock, memory):
    """The hits count as shown (the usage fold's exposures, written when they grow or the home
    closes) only once the question is answered: with the model unavailable, the refusal leaves
    the store exactly as it was, though the recall found hits."""
    write_chat(memory)
    answer = tool_of(memory).ask("What is the name of Ana's kitten?")
    assert flush_exposures(memory.session) == len(answer.hits) > 0
    unreachable = OpenAIChat(base_url="http://127.0.0.1:9/v1", model="none", max_retries=0)
    memory.session.llm = unreachable
    before = store_snapshot(memory)
    with pytest.raises(LLMUnavailable):
        tool_of(memory).ask("What is the name of Ana's kitten?")
    assert flush_exposures(memory.session) == 0  # what the home's close would have written
    assert store_snapshot(memory) == before
