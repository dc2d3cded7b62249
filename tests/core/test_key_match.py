"""The key-match leg: a query that names a row's key finds that row first, within the one scope
it reads, and only while the index serves it."""

import pytest

from memory_core import Identity
from memory_core.retrieval.keys import MAX_KEY_TERMS, MAX_PREFIX_KEYS, key_terms, prefix_lookups
from memory_core.retrieval.recipes import DEFAULT_RECIPE, KEY_PREFIX_HIT, RECIPES


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


def test_prefixes_end_where_a_key_word_ends():
    assert prefix_lookups("deploy_") == ("deploy_",)
    assert prefix_lookups("svc.checkout") == tuple(f"svc.checkout{s}" for s in "_.:/#-")


@pytest.mark.faces
def test_a_word_that_begins_keys_finds_them_after_an_exact_hit(indexed_memory):
    tool = _tool(indexed_memory)
    tool.set("svc.checkout", "the checkout service")
    tool.set("svc.checkout.timeout", "30 seconds")
    tool.set("svc.checkout_owner", "the payments team")
    tool.set("svc.checkoutv2", "a rewrite nobody uses")  # not at a word's end: no prefix hit
    tool.set("petition", "sign the petition")
    tool.set("pet_name", "Rex")
    for n in range(4):
        tool.set(f"chat{n}", f"talk about svc checkout timeout number {n}", kind="note")
    hits = tool.recall("what about svc.checkout").hits
    by_key = {h.key: h for h in hits}
    assert hits[0].key == "svc.checkout" and by_key["svc.checkout"].legs["key"].score == 1.0
    assert {h.key for h in hits[1:3]} == {"svc.checkout.timeout", "svc.checkout_owner"}
    assert all(by_key[k].legs["key"].score == KEY_PREFIX_HIT for k in ("svc.checkout.timeout", "svc.checkout_owner"))
    assert "key" not in getattr(by_key.get("svc.checkoutv2"), "legs", {})
    assert [h.key for h in tool.recall("pet").hits if "key" in h.legs] == ["pet_name"]
    # a key written after the first lookup of the scope is found by prefix too
    tool.set("pet_kind", "dog")
    assert {h.key for h in tool.recall("pet").hits if "key" in h.legs} == {"pet_name", "pet_kind"}


@pytest.mark.faces
def test_a_prefix_shared_by_too_many_keys_finds_none_of_them(indexed_memory):
    tool = _tool(indexed_memory)
    for n in range(MAX_PREFIX_KEYS + 1):
        tool.set(f"metric_{n:02d}", f"value {n}")
    assert all("key" not in h.legs for h in tool.recall("show metric_").hits)
    tool.set("metric_", "the metrics family")
    top = tool.recall("show metric_").hits[0]
    assert top.key == "metric_" and top.legs["key"].score == 1.0  # the exact key still is


def test_the_sorted_keys_follow_every_key_added_and_a_reloaded_cache():
    from memory_core.adapters.duckdb.key_order import KeyOrder
    from memory_core.identity import Namespace, Scope

    ns, order = Namespace("acme", Scope.USER, "ana"), KeyOrder()
    states = {f"k_{n:03d}": None for n in range(0, 300, 2)}
    assert order.under(ns, states, "k_00", 100) == ["k_000", "k_002", "k_004", "k_006", "k_008"]
    for batch in (range(1, 11, 2), range(11, 300, 2)):  # a few keys inserted one by one, then many merged
        for n in batch:
            states[f"k_{n:03d}"] = None
            order.added(ns, states, f"k_{n:03d}")
        assert order.under(ns, states, "k_", 1000) == sorted(states)
    assert order.under(ns, states, "k_29", 3) == ["k_290", "k_291", "k_292"]
    reloaded = {"k_500": None}  # a cache entry loaded again is a new mapping: its order is made anew
    assert order.under(ns, reloaded, "k_", 10) == ["k_500"]
