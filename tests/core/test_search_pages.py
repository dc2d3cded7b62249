"""Cursor paging over one kept ranking, and search traces that explain a result."""

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import Identity, Memory
from memory_core.errors import CursorMismatch, CursorNotFound, InvalidInput, TraceNotFound
from memory_core.identity import Namespace, Scope
from memory_core.services.search import _parse_cursor
from memory_core.session.search_memo import KeptSearch, SearchMemo
from tests.conftest import T0

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

TOPICS = ["apples", "pears", "plums"]
NS = Namespace("acme", Scope.USER, "ana")


@pytest.fixture
def memory(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as m:
        yield m


def tool_of(memory, user="ana"):
    return memory.for_run(Identity(tenant="acme", user=user, agent="helper"))


def fill(tool, n=40):
    for i in range(n):
        tool.set(f"note-{i:02d}", f"{TOPICS[i % 3]} from the orchard, basket {i}", kind="note")


def all_pages(tool, query, k, between=lambda n: None, **options):
    result = tool.recall(query, k=k, **options)
    pages = [result]
    while result.next_cursor:
        between(len(pages))
        result = tool.recall(query, k=k, cursor=result.next_cursor, **options)
        pages.append(result)
    return pages


def test_pages_return_every_hit_once_while_writes_happen_between_them(memory):
    tool = fill_and_tool(memory)
    whole = [h.key for h in tool.recall("apples orchard", k=1000).hits]
    shown_by_page: list[list[str]] = []
    gone: dict[str, int] = {}  # key -> the page before which it was deleted or revised

    def write_between(page):
        tool.set(f"late-{page}", f"apples orchard written between pages {page}", kind="note")
        unseen = [k for k in whole if k not in gone and k not in {x for p in shown_by_page for x in p}]
        if len(unseen) > 12:  # leave most of the ranking to be paged through
            deleted, revised = unseen[-1], unseen[-2]
            tool.delete(deleted)
            tool.set(revised, f"revised: plums {page}", kind="note")
            gone[deleted] = gone[revised] = page

    result = tool.recall("apples orchard", k=7)
    shown_by_page.append([h.key for h in result.hits])
    while result.next_cursor:
        write_between(len(shown_by_page))
        result = tool.recall("apples orchard", k=7, cursor=result.next_cursor)
        shown_by_page.append([h.key for h in result.hits])
    paged = [k for page in shown_by_page for k in page]
    assert len(paged) == len(set(paged))  # never twice
    assert paged == [k for k in whole if k in paged]  # in the first call's order
    assert not [k for k in paged if k.startswith("late-")]  # written after the search: not in its ranking
    assert [k for k in whole if k not in gone] == [k for k in paged if k not in gone]  # every other hit
    for n, page in enumerate(shown_by_page):
        assert not [k for k in page if gone.get(k, 10**6) <= n]  # never answered after it left
    assert gone and all(len(p) == 7 for p in shown_by_page[:-1]), [len(p) for p in shown_by_page]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(k=st.integers(1, 12), budget=st.one_of(st.none(), st.integers(5, 60)))
def test_any_page_size_and_budget_covers_the_ranking_once(memory, k, budget):
    tool = tool_of(memory, user=f"u{k}-{budget}")
    fill(tool, 25)
    whole = [h.key for h in tool.recall("orchard basket", k=1000).hits]
    paged = [h.key for p in all_pages(tool, "orchard basket", k, token_budget=budget) for h in p.hits]
    assert paged == whole


def test_a_cursor_continues_only_its_own_search_in_its_own_scope(memory):
    tool = fill_and_tool(memory)
    first = tool.recall("apples orchard", k=5)
    with pytest.raises(CursorMismatch):
        tool.recall("pears", k=5, cursor=first.next_cursor)
    with pytest.raises(CursorMismatch):
        tool.recall("apples orchard", k=5, recipe="bm25_only", cursor=first.next_cursor)
    with pytest.raises(CursorNotFound):  # another user: as if it never was
        tool_of(memory, user="bob").recall("apples orchard", k=5, cursor=first.next_cursor)
    with pytest.raises(InvalidInput):
        tool.recall("apples orchard", k=5, cursor="not a cursor")
    with pytest.raises(CursorNotFound):
        tool.recall("apples orchard", k=5, cursor="0" * 32 + ":5")


def test_cursors_and_traces_expire(memory, clock):
    tool = fill_and_tool(memory)
    first = tool.recall("apples orchard", k=5)
    clock.advance(timedelta(minutes=16))
    with pytest.raises(CursorNotFound):
        tool.recall("apples orchard", k=5, cursor=first.next_cursor)
    with pytest.raises(TraceNotFound):
        tool.search_trace(first.trace_id)


def test_a_redaction_forgets_kept_searches(memory):
    tool = fill_and_tool(memory)
    first = tool.recall("apples orchard", k=5)
    tool.set("old", "a value to redact")
    tool.set("old", "its replacement")
    tool.redact("old", tool.history("old")[0].id)
    with pytest.raises(CursorNotFound):
        tool.recall("apples orchard", k=5, cursor=first.next_cursor)
    with pytest.raises(TraceNotFound):
        tool.search_trace(first.trace_id)


def test_a_trace_explains_the_result(memory):
    tool = fill_and_tool(memory)
    result = tool.recall("apples orchard", k=5)
    trace = tool.search_trace(result.trace_id).to_dict()
    assert trace["query"] == "apples orchard" and trace["verdict"] == result.verdict
    assert trace["recipe"]["name"] == result.recipe["name"]
    assert trace["plan"]["legs"] == ["vector", "bm25", "key", "graph"] and trace["plan"]["k"] == 5
    assert trace["filters"]["tenant"] == "acme" and trace["filters"]["scope"] == "user"
    assert trace["filters"]["kinds"] == ["fact", "note"]
    assert trace["hits"] == [h.fact_id for h in result.hits]
    fused = {c["fact_id"]: c for c in trace["fused"]}
    for hit in result.hits:  # the hit's score is the sum of the terms the trace lists
        assert fused[hit.fact_id]["score"] == pytest.approx(sum(fused[hit.fact_id]["terms"].values()), abs=1e-5)
        assert hit.terms == pytest.approx(fused[hit.fact_id]["terms"], abs=1e-5)
        for leg, scored in hit.legs.items():
            listed = {c["fact_id"]: c for c in trace["legs"][leg]}
            assert listed[hit.fact_id]["rank"] == scored.rank
    bm25 = trace["legs"]["bm25"]
    assert [c["rank"] for c in bm25] == list(range(1, len(bm25) + 1))
    with pytest.raises(TraceNotFound):  # another scope cannot read it
        tool_of(memory, user="bob").search_trace(result.trace_id)


def test_rrf_terms_are_its_reciprocal_ranks(memory):
    tool = fill_and_tool(memory)
    result = tool.recall("apples orchard", k=3, recipe="hybrid_rrf")
    for hit in result.hits:
        assert hit.terms == pytest.approx({leg: 1 / (60 + s.rank) for leg, s in hit.legs.items()})
        assert hit.score == pytest.approx(sum(hit.terms.values()))


def fill_and_tool(memory):
    tool = tool_of(memory)
    fill(tool)
    return tool


def test_a_candidate_completed_for_an_earlier_page_is_read_again(memory):
    tool = fill_and_tool(memory)
    first = tool.recall("apples orchard", k=5, token_budget=1)  # completes five, shows one
    assert len(first.hits) == 1 and first.truncated == 4
    whole = [h.key for h in tool.recall("apples orchard", k=1000).hits]
    tool.delete(whole[1])
    second = tool.recall("apples orchard", k=5, cursor=first.next_cursor)
    assert whole[1] not in [h.key for h in second.hits] and second.hits[0].key == whole[2]


def test_a_malformed_cursor_is_bad_input():
    for bad in ("abc", "abc:", ":5", "abc:-1", "abc:\u00b2"):
        with pytest.raises(InvalidInput):
            _parse_cursor(bad)


def test_a_search_a_redaction_overtook_is_not_kept():
    memo = SearchMemo()
    began = memo.generation
    memo.forget()
    memo.keep(KeptSearch(NS, "t1", T0, None, None, None, T0 + timedelta(hours=1)), began)
    assert memo.find("t1", NS, T0) is None
    memo.keep(KeptSearch(NS, "t2", T0, None, None, None, T0 + timedelta(hours=1)), memo.generation)
    assert memo.find("t2", NS, T0) is not None
