"""The key-match leg: a query that names a row's key finds that row first, within the one scope
it reads, and only while the index serves it."""

import pytest

from memory_core import Identity
from memory_core.retrieval.keys import MAX_KEY_TERMS, key_terms
from memory_core.retrieval.recipes import DEFAULT_RECIPE, RECIPES


def test_key_like_words():
    assert key_terms("what is in deploy_window?") == ("deploy_window",)
    assert key_terms("compare svc.checkout and INC-4821, please") == ("svc.checkout", "INC-4821")
    assert key_terms("turn D1:3") == ("D1:3",)
    assert key_terms("pet") == ("pet",)  # one word: a key whatever it holds
    assert key_terms("INC-4821.") == ("INC-4821",)
    assert key_terms("where did Ana go hiking") == ()
    assert key_terms("'quoted_key'") == ("quoted_key",)
    assert len(key_terms(" ".join(f"k_{i}" for i in range(20)))) == MAX_KEY_TERMS


def _tool(memory, user="ana"):
    return memory.for_run(Identity(tenant="acme", user=user, agent="helper"))


@pytest.mark.faces
def test_a_query_naming_a_key_finds_its_row_first(indexed_memory):
    tool = _tool(indexed_memory)
    tool.set("deploy_window", "Tuesday at noon")
    for n in range(5):
        tool.set(f"chat{n}", f"the deploy window deploy window talk number {n}", kind="note")
    result = tool.recall("what is the deploy_window?")
    top = result.hits[0]
    assert top.key == "deploy_window" and "key" in top.legs and result.verdict == "ok"
    assert top.terms["key"] == pytest.approx(RECIPES[DEFAULT_RECIPE].weight("key"))
    assert result.recipe["legs"] == ["vector", "bm25", "key", "graph"]
    # without the leg the same query ranks the chatter above it
    plain = tool.recall("what is the deploy_window?", recipe="hybrid_zscore")
    assert all("key" not in h.legs for h in plain.hits)


@pytest.mark.faces
def test_a_key_of_another_user_or_a_deleted_key_is_never_matched(indexed_memory):
    _tool(indexed_memory, "ben").set("secret_plan", "move to Lisbon in spring")
    ana = _tool(indexed_memory)
    ana.set("old_plan", "stay in Leeds")
    assert all(h.key != "secret_plan" for h in ana.recall("secret_plan").hits)
    ana.delete("old_plan")
    assert [h.key for h in ana.recall("old_plan").hits] == []
