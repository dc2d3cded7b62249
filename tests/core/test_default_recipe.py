"""What recall and search run when a call names no recipe and no participants: the recipe that
measured best through the documented path (docs/retrieval.md, "The default recipe")."""

import inspect

import pytest

from memory_core import Identity, Memory
from memory_core.api.tool import MemoryTool
from memory_core.retrieval.recipes import DEFAULT_RECIPE, RECIPES

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service


@pytest.fixture
def memory(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as m:
        yield m


def tool_of(memory, session=None):
    return memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session=session))


def test_the_default_recipe_is_pinned():
    assert DEFAULT_RECIPE == "hybrid_session"
    recipe = RECIPES[DEFAULT_RECIPE]
    assert (recipe.fusion, recipe.pool, recipe.exact_cosine) == ("zscore", 200, True)
    assert dict(recipe.weights) == {"vector": 0.5, "bm25": 0.5, "key": 5.0, "graph": 1.0}
    assert recipe.legs == ("vector", "bm25", "key", "graph")
    assert (recipe.date_prior, recipe.subject_prior, recipe.session_prior, recipe.session_cap) == (2.0, 0.5, 0.45, 3.0)
    assert (recipe.confidence_prior, recipe.reinforcement_prior, recipe.source_prior, recipe.recency_prior) == (
        0.3,
        0.15,
        0.2,
        0.25,
    )
    assert recipe.prior_cap == 0.5
    for op in (MemoryTool.recall, MemoryTool.search):
        assert inspect.signature(op).parameters["recipe"].default == DEFAULT_RECIPE


def test_recall_runs_the_default_and_names_it(memory):
    tool = tool_of(memory)
    tool.set("pet", "a grey cat called Miso")
    result = tool.recall("cat called Miso")
    assert result.recipe["name"] == DEFAULT_RECIPE and [h.key for h in result.hits] == ["pet"]


def test_the_speakers_of_a_scope_are_its_participants(memory):
    chat = tool_of(memory, session="chat-1")
    chat.set("D1:1", "I went hiking in the hills on Sunday", kind="note", subject="Ana")
    chat.set("D1:2", "I went hiking too, by the lake", kind="note", subject="Ben")
    chat.set("fact", "the lake is cold", subject="Lake Geneva")  # a fact's subject is not a speaker
    result = tool_of(memory).recall("where did Ben go hiking")
    assert result.participants == ("Ana", "Ben")
    assert result.hits[0].key == "D1:2"  # the one participant the question names said it
    assert tool_of(memory).recall("where", participants=["Zoe"]).participants == ("Zoe",)  # a caller's list stands


def test_a_scope_without_conversations_has_no_participants(memory):
    tool = tool_of(memory)
    tool.set("pet", "a grey cat called Miso", subject="Ana")
    tool.set("memo", "buy milk", kind="note", subject="Ana")  # a note outside any run session
    assert tool.recall("Ana's cat").participants == ()


def test_a_new_speaker_joins_at_once(memory):
    chat = tool_of(memory, session="chat-1")
    chat.set("D1:1", "hello", kind="note", subject="Ana")
    assert tool_of(memory).recall("hello").participants == ("Ana",)
    chat.set("D1:2", "hi there", kind="note", subject="Ben")
    assert tool_of(memory).recall("hello").participants == ("Ana", "Ben")
