"""The graph leg: a query naming an entity of the scope's graph brings the rows that state its
current triples (and, at half the score, its neighbours'), within the one scope it reads."""

import pytest

from memory_core import Identity
from memory_core.retrieval.graph_leg import MAX_GRAPH_FACTS, leg_facts, named_entities, neighbours
from memory_core.retrieval.recipes import DEFAULT_RECIPE, RECIPES

WEIGHT = RECIPES[DEFAULT_RECIPE].weight("graph")


def test_named_entities_are_runs_of_the_query_folded_as_names():
    entities = frozenset({"checkout-api", "team payments", "london", "user"})
    assert named_entities("Who owns Checkout-API?", entities) == ["checkout-api"]
    assert named_entities("is team   Payments on call", entities) == ["team payments"]
    assert named_entities("where do I live", entities) == []  # "I" is never taken for the profile's owner
    assert named_entities("what did I buy for myself, the user", entities) == []
    assert named_entities("What is London's weather?", entities) == ["london"]  # a possessive names it
    assert named_entities("anything", frozenset()) == []


def test_neighbours_and_scores_by_hop():
    triples = [("checkout-api", "owned_by", "team payments"), ("ana", "leads", "team payments")]
    assert neighbours(["checkout-api"], triples) == ["team payments"]
    assert neighbours(["team payments"], triples) == ["checkout-api", "ana"]
    assert neighbours(["x"], [("x", "documented_in", "doc:a#0000")]) == []  # a chunk is a leaf
    assert leg_facts({1: ["f1", "f2"], 2: ["f2", "f3"]}) == {"f1": 1.0, "f2": 1.0, "f3": 0.5}
    assert len(leg_facts({1: [f"f{i}" for i in range(200)]})) == MAX_GRAPH_FACTS


def _tool(memory, user="ana"):
    return memory.for_run(Identity(tenant="acme", user=user, agent="helper"))


@pytest.mark.faces
def test_a_query_naming_an_entity_brings_its_triples_rows_and_its_neighbours(indexed_memory):
    tool = _tool(indexed_memory)
    tool.set("svc", "the service belongs to a small group", relations=[["checkout-api", "owned by", "team payments"]])
    tool.set("lead", "she runs that group", relations=[["ana", "leads", "team payments"]])
    tool.set("noise", "lunch was soup again")
    result = tool.recall("who is responsible for checkout-api")
    by_key = {h.key: h for h in result.hits}
    assert by_key["svc"].legs["graph"].score == 1.0 and by_key["svc"].terms["graph"] == pytest.approx(WEIGHT)
    assert by_key["lead"].legs["graph"].score == 0.5  # a neighbour's row: one hop further
    assert "noise" not in by_key or "graph" not in by_key["noise"].legs
    assert result.hits[0].key == "svc"


@pytest.mark.faces
def test_the_graph_leg_reads_one_scope_and_current_triples_only(indexed_memory):
    _tool(indexed_memory, "ben").set(
        "theirs", "a note of ben's", relations=[["checkout-api", "owned by", "team growth"]]
    )
    ana = _tool(indexed_memory)
    assert all("graph" not in h.legs for h in ana.recall("who owns checkout-api").hits)
    ana.set("svc", "the service belongs to a small group", relations=[["checkout-api", "owned by", "team payments"]])
    assert any("graph" in h.legs for h in ana.recall("who owns checkout-api").hits)  # a new entity is seen
    ana.delete("svc")
    assert all("graph" not in h.legs for h in ana.recall("who owns checkout-api").hits)
