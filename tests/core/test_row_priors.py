"""Priors read from each candidate's row (retrieval.row_priors): the session's standing and the
capped correctness group (confidence, reinforcement, source trust, recency). Each is a bounded
additive term reported per hit, and they only reorder candidates the legs found."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core import Identity
from memory_core.retrieval.recipes import DEFAULT_RECIPE, RECIPES
from memory_core.retrieval.row_priors import (
    REINFORCEMENT_SATURATES,
    asks_recent,
    confidence_signal,
    correctness_terms,
    recency_signals,
    reinforcement_signal,
    session_standing,
    source_signal,
)
from tests.conftest import utc

RECIPE = RECIPES[DEFAULT_RECIPE]


def test_a_session_holding_the_best_match_lifts_its_other_candidates():
    base = np.array([3.0, 1.0, 1.0, 0.0])
    standing = session_standing(base, ["s1", "s1", "s2", "s2"], cap=3.0)
    # candidates 1 and 2 scored the same; 1 shares a session with the best match
    assert standing[1] > 0 > standing[2]
    assert standing[0] == standing[1] and standing[2] == standing[3]


def test_no_standing_without_two_sessions_and_none_outside_a_session():
    base = np.array([2.0, 1.0, 0.5])
    assert not session_standing(base, ["s1", "s1", "s1"], cap=3.0).any()
    assert not session_standing(base, [None, None, None], cap=3.0).any()
    standing = session_standing(base, ["s1", None, "s2"], cap=3.0)
    assert standing[1] == 0.0 and standing[0] > 0 > standing[2]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.floats(-50, 50), st.sampled_from(["a", "b", "c", None])), min_size=1, max_size=40),
    st.floats(0.1, 5),
)
def test_the_session_standing_never_passes_its_cap(pairs, cap):
    base = np.array([p[0] for p in pairs])
    standing = session_standing(base, [p[1] for p in pairs], cap)
    assert np.all(np.abs(standing) <= cap + 1e-12)


def test_signals():
    assert confidence_signal(1.0) == 0.0 and confidence_signal(0.25) == -0.75 and confidence_signal(None) == 0.0
    assert reinforcement_signal(0) == 0.0 and 0 < reinforcement_signal(1) < reinforcement_signal(3) < 1
    assert reinforcement_signal(REINFORCEMENT_SATURATES) == 1.0 == reinforcement_signal(100)
    assert source_signal("stated") == 0.0 > source_signal("imported") > source_signal("external") == -1.0
    assert list(recency_signals([10, None, 30, 20])) == [0.0, 0.0, 1.0, 0.5]
    assert not recency_signals([5, 5]).any()
    assert asks_recent("What is Ana's latest address?") and asks_recent("what does she do currently")
    assert not asks_recent("Where did Ana live in May?")


rows = st.fixed_dictionaries(
    {
        "confidence": st.one_of(st.none(), st.floats(0, 1)),
        "reinforcement_count": st.integers(0, 50),
        "source_class": st.sampled_from(["stated", "derived", "imported", "external", None]),
        "observed_at": st.one_of(st.none(), st.integers(0, 10**12)),
        "valid_at": st.integers(0, 10**12),
    }
)


@settings(max_examples=200, deadline=None)
@given(st.lists(rows, min_size=1, max_size=30), st.sampled_from(["the latest plan", "the plan"]))
def test_the_correctness_group_stays_within_its_cap_and_each_term_keeps_its_sign(candidates, query):
    terms = correctness_terms(candidates, RECIPE, query)
    if not terms:
        return
    total = np.sum(list(terms.values()), axis=0)
    assert np.all(np.abs(total) <= RECIPE.prior_cap + 1e-9)
    assert np.all(terms.get("confidence_prior", np.zeros(1)) <= 0)
    assert np.all(terms.get("source_prior", np.zeros(1)) <= 0)
    assert np.all(terms.get("reinforcement_prior", np.zeros(1)) >= 0)
    assert ("recency_prior" in terms) <= asks_recent(query)


@pytest.mark.faces
def test_a_turn_in_the_session_of_the_best_match_ranks_first_and_says_why(indexed_memory):
    def tool(session):
        return indexed_memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session=session))

    tool("trip").set("t1", "we rented a cabin by the lake for the trip", kind="note", subject="Ana")
    tool("trip").set("t2", "the lake was cold but the cabin had a stove", kind="note", subject="Ben")
    tool("other").set("o1", "the lake was cold but the cabin had a stove", kind="note", subject="Ben")
    for n in range(6):
        tool("other").set(f"o{n + 2}", f"unrelated chatter number {n} about lunch", kind="note", subject="Ana")
    # One index layout in both faces: BM25 scores rows its index covers apart from those it does
    # not, and the served face's upkeep folds fragments on its own time (this ranking flipped with
    # it). Optimized, every row is under the indexes.
    indexed_memory.projector.optimize()
    result = tool(None).recall("cabin by the lake for the trip")
    keys = [h.key for h in result.hits]
    assert keys.index("t2") < keys.index("o1")  # same words; t2's session holds the best match
    by_key = {h.key: h for h in result.hits}
    assert by_key["t2"].terms["session_prior"] > by_key["o1"].terms["session_prior"]
    for hit in result.hits:  # a hit's terms add up to its score
        assert sum(hit.terms.values()) == pytest.approx(hit.score, abs=1e-5)


@pytest.mark.faces
def test_a_doubtful_or_imported_row_pays_a_bounded_term(indexed_memory):
    tool = indexed_memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
    tool.set("stated", "the deploy window is Tuesday at noon", kind="note")
    tool.set("doubt", "the deploy window is Tuesday at noon", kind="note", confidence=0.2)
    tool.set("copied", "the deploy window is Tuesday at noon", kind="note", source_class="external")
    by_key = {h.key: h for h in tool.recall("deploy window Tuesday noon").hits}
    assert by_key["stated"].terms.get("confidence_prior", 0.0) == 0.0
    assert by_key["doubt"].terms["confidence_prior"] == pytest.approx(-RECIPE.confidence_prior * 0.8)
    assert by_key["copied"].terms["source_prior"] == pytest.approx(-RECIPE.source_prior)
    for hit in by_key.values():  # the group stays within its cap
        group = sum(v for name, v in hit.terms.items() if name in ("confidence_prior", "source_prior"))
        assert -RECIPE.prior_cap <= group <= 0


@pytest.mark.faces
def test_only_a_query_asking_for_the_latest_weighs_recency(indexed_memory):
    tool = indexed_memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
    tool.set("old", "ana moved to a flat in Leeds", kind="note", valid_at=utc(2023, 1, 1))
    tool.set("new", "ana moved to a flat in Leeds", kind="note", valid_at=utc(2024, 1, 1))
    latest = {h.key: h for h in tool.recall("where did ana move most recently, which flat").hits}
    assert latest["new"].terms["recency_prior"] == pytest.approx(RECIPE.recency_prior)
    assert latest["old"].terms["recency_prior"] == 0.0
    plain = tool.recall("where did ana move, which flat")
    assert all("recency_prior" not in h.terms for h in plain.hits)


def test_a_column_two_priors_read_is_asked_for_once():
    from datetime import datetime, timezone

    from memory_core.identity import Scope
    from memory_core.model import Kind
    from memory_core.retrieval.pipeline import plan
    from memory_core.retrieval.types import SearchRequest

    now = datetime(2024, 6, 1, tzinfo=timezone.utc)
    request = SearchRequest("the latest plan", Scope.USER, 10, DEFAULT_RECIPE, frozenset({Kind.NOTE}), now)
    columns = plan(request, RECIPE).columns  # the date and the recency priors both read observed_at
    assert "observed_at" in columns and len(columns) == len(set(columns))
