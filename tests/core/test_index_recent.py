"""The vector leg over rows appended since the vector index was built: Lance is asked for the
indexed rows only, and the recent rows are compared in NumPy (``adapters.lance.recent``). The
answers must be those Lance's own plan gives over the same version: the same rows in the same
order with the same cosines, under every scope and time filter, older states still hidden."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from memory_core import Identity, Memory
from memory_core.adapters.lance import recent
from tests.conftest import utc

PEOPLE = [("acme", "ana"), ("acme", "bo"), ("globex", "ana")]
WORDS = ["river walk", "flat", "piano", "job", "cat", "dog", "Lisbon", "lessons", "bought", "new"]
QUERIES = ["river walk with the dog", "bought a flat", "piano lessons", "new job in Lisbon", "a late cat"]
AS_OF = [utc(2023, 6, 1), None]
RECIPES = ("vector_only",)


def _tool(memory, tenant, user):
    return memory.for_run(Identity(tenant=tenant, user=user, agent="helper"))


@pytest.fixture
def appended(home, clock):
    """180 facts under a built vector index, then 45 appended after it: 30 new facts and 15
    newer states of indexed ones (their older rows left in the table, not served)."""
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        memory.projector.index.vector_index_min_rows = 100  # the ANN index at 180 rows
        for (tenant, user), i in itertools.product(PEOPLE, range(60)):
            filler = " ".join(["and then"] * (i % 7))
            _tool(memory, tenant, user).set(
                f"{tenant}-{user}-{i}",
                f"{user} {WORDS[i % 10]} {filler} {WORDS[(i * 3) % 10]} number {i}",
                valid_at=utc(2022 + i % 3, 1 + i % 12, 1),
            )
        memory.projector.flush()
        memory.projector.index.optimize()
        for (tenant, user), i in itertools.product(PEOPLE, range(15)):
            tool = _tool(memory, tenant, user)
            tool.set(f"{tenant}-{user}-late{i}", f"a late {WORDS[(i * 7) % 10]} for {user}, {i}")
            if i % 3 == 0:
                tool.set(f"{tenant}-{user}-{i}", f"{user} now says {WORDS[(i + 5) % 10]} instead, {i}")
        memory.projector.flush(settle=False)  # the replaced rows stay in the table, filtered
        yield memory


def _answers(memory, recipe, leg="vector"):
    out = {}
    for (tenant, user), query, as_of in itertools.product(PEOPLE, QUERIES, AS_OF):
        hits = _tool(memory, tenant, user).recall(query, k=8, recipe=recipe, as_of=as_of).hits
        out[(tenant, user, query, as_of)] = _up_to_ties([(h.key, round(h.legs[leg].score, 5)) for h in hits])
    return out


def _outside(index, field):
    """The fragments of the latest version that the index on ``field`` leaves out."""
    dataset = index.snapshot().dataset
    segments = [s for d in dataset.describe_indices() if list(d.field_names) == [field] for s in d.segments]
    assert segments, f"an index on {field}"
    return {f.fragment_id for f in dataset.get_fragments()} - set().union(*(s.fragment_ids for s in segments))


def _up_to_ties(ranked):
    """The cosines in order, and which keys hold each (rows of one cosine may come back in either
    order); of the last cosine only how many (the cut at k may fall among them)."""
    scores = [score for _, score in ranked]
    held = sorted((score, key) for key, score in ranked if score != scores[-1])
    return scores, held


def test_recent_rows_answer_as_lances_own_plan_does(appended, monkeypatch):
    index = appended.projector.index
    snapshot = index.snapshot()
    assert recent.compared_here(recent.recent_fragments(snapshot.dataset)), "appended rows lie outside it"
    assert index.unsettled[0] > 0, "older states wait in the table, hidden"
    merged = {recipe: _answers(appended, recipe) for recipe in RECIPES}
    monkeypatch.setattr(recent, "RECENT_MAX_ROWS", -1)  # Lance compares the recent rows itself
    assert not recent.compared_here(recent.recent_fragments(index.snapshot().dataset))
    for recipe, answers in merged.items():
        assert answers == _answers(appended, recipe), recipe
    # (hybrid recipes are left out: the usage prior moves their order from one recall to the next)
    late = [key for _, held in merged["vector_only"].values() for _, key in held if "-late" in key]
    assert late, "the recent rows are among the answers"


def test_a_newer_state_is_found_and_its_older_row_is_not(appended):
    tool = _tool(appended, "acme", "bo")
    hits = tool.recall("bo now says", k=20, recipe="vector_only").hits
    keys = [h.key for h in hits]
    assert "acme-bo-0" in keys and len(keys) == len(set(keys))
    assert next(h for h in hits if h.key == "acme-bo-0").value.startswith("bo now says")
    assert all(h.key.startswith("acme-bo-") for h in hits)  # scope held on the recent rows too


def test_cosine_distances_match_lances_metric():
    vectors = np.array([[1, 0, 0], [0, 2, 0], [1, 1, 0], [0, 0, 0]], dtype=np.float32)
    got = recent.cosine_distances(vectors, np.array([2, 0, 0], dtype=np.float32))
    assert got.dtype == np.float32
    assert np.allclose(got, [0.0, 1.0, 1 - 1 / np.sqrt(2), 1.0])


def test_merge_keeps_the_nearest_and_the_indexed_row_on_a_tie():
    indexed = [{"fact_id": "a", "_distance": 0.1}, {"fact_id": "b", "_distance": 0.3}]
    new = [{"fact_id": "c", "_distance": 0.2}, {"fact_id": "d", "_distance": 0.3}]
    assert [r["fact_id"] for r in recent.merge_nearest(indexed, new, 3)] == ["a", "c", "b"]
    assert recent.merge_nearest(indexed, [], 1) is indexed


def test_upkeep_brings_appended_rows_under_the_indexes_and_answers_as_before(appended, monkeypatch):
    """Past ``TEND_INDEX_AT_ROWS`` rows outside the indexes, ``tend`` indexes them (into a delta
    segment, never the base): none is left outside, and every vector answer is the same."""
    from memory_core.adapters.lance import projector

    index = appended.projector.index
    assert index.unindexed_rows() > 0
    before = _answers(appended, "vector_only")
    monkeypatch.setattr(projector, "TEND_INDEX_AT_ROWS", index.unindexed_rows() + 1)
    appended.projector.tend()
    assert index.unindexed_rows() > 0, "below the threshold nothing is indexed"
    monkeypatch.setattr(projector, "TEND_INDEX_AT_ROWS", 1)
    appended.projector.tend()
    assert index.unindexed_rows() == 0
    assert recent.recent_fragments(index.snapshot().dataset) == []
    assert _answers(appended, "vector_only") == before
    tool = _tool(appended, "acme", "ana")  # later rows: counted, and indexed in the same segment
    for i in range(3):
        tool.set(f"acme-ana-later{i}", f"a later walk by the river, {i}")
    appended.projector.flush(settle=False)
    assert index.unindexed_rows() == 3
    appended.projector.tend()
    assert index.unindexed_rows() == 0
    hits = tool.recall("a later walk by the river", k=3, recipe="bm25_only").hits
    assert {h.key for h in hits} == {f"acme-ana-later{i}" for i in range(3)}
    text = [d for d in index.snapshot().dataset.describe_indices() if d.name == "text_idx"][0]
    assert len(text.segments) == 2  # the base optimize built, and one delta merged into


def test_upkeep_extends_the_prefilter_bitmaps_with_the_text_index(appended, monkeypatch):
    """Past ``TEND_INDEX_AT_ROWS`` appended rows, ``tend`` extends the namespace, kind and status
    bitmaps over them with the text and vector indexes, and leaves the fact_id B-tree that deletes
    read as ``optimize`` left it. Both legs answer as before, and a delete still finds its rows."""
    from memory_core.adapters.lance import projector

    index = appended.projector.index
    before = _answers(appended, "vector_only")
    assert all(_outside(index, field) for field in ("text", "namespace", "kind", "status", "fact_id"))
    monkeypatch.setattr(projector, "TEND_INDEX_AT_ROWS", 1)
    appended.projector.tend()
    assert not any(_outside(index, field) for field in ("text", "vector", "namespace", "kind", "status"))
    assert _outside(index, "fact_id")
    assert _answers(appended, "vector_only") == before
    tool = _tool(appended, "globex", "ana")
    tool.set("globex-ana-later", "a later walk by the river")
    appended.projector.flush(settle=False)
    assert _outside(index, "namespace"), "later rows: outside until the next round"
    assert tool.recall("a later walk by the river", k=3, recipe="bm25_only").hits[0].key == "globex-ana-later"
    appended.projector.flush()  # deletes the replaced rows through the fact_id B-tree
    assert not appended.projector.consistency().duplicated
