"""Search on an index whose vector, text and scalar indexes are built (as optimize does past
VECTOR_INDEX_MIN_ROWS). The vector leg must answer exactly what the unindexed table answered:
with nprobes at least the number of partitions, IVF_FLAT reads every row. Every leg must keep
scope and time. (Lance's BM25 scores indexed rows with other statistics than rows it scans
unindexed, so the lexical order may change when rows are indexed; that is Lance's, not ours.)"""

from __future__ import annotations

import itertools

import pytest

from memory_core import Identity, Memory
from memory_core.adapters.lance import index as lance_index
from memory_core.temporal import live_at
from tests.conftest import T0, utc

QUERIES = ["river walk with the dog", "bought a flat", "piano lessons", "new job in Lisbon", "the cat Miso"]
AS_OF = [utc(2023, 6, 1), utc(2024, 6, 1), None]
PEOPLE = [("acme", "ana"), ("acme", "bo"), ("globex", "ana")]
RECIPES = ("hybrid_rrf", "vector_only", "bm25_only")
WORDS = ["river walk", "flat", "piano", "job", "cat", "dog", "Lisbon", "lessons", "bought", "new"]


def _answers(memory):
    out = {}
    for (tenant, user), query, as_of, recipe in itertools.product(PEOPLE, QUERIES, AS_OF, RECIPES):
        tool = memory.for_run(Identity(tenant=tenant, user=user, agent="helper"))
        result = tool.recall(query, k=8, recipe=recipe, as_of=as_of)
        out[(tenant, user, query, as_of, recipe)] = [
            (h.key, round(h.legs["vector"].score, 6) if "vector" in h.legs else None) for h in result.hits
        ]
    return out


@pytest.fixture
def populated(home, clock):
    spans = {}
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        memory.projector.index.vector_index_min_rows = 100  # the ANN index at 180 rows, not 50,000
        for (tenant, user), i in itertools.product(PEOPLE, range(60)):
            tool = memory.for_run(Identity(tenant=tenant, user=user, agent="helper"))
            valid_at = utc(2022 + i % 3, 1 + i % 12, 1)
            invalid_at = utc(2023 + i % 3, 1, 1) if i % 4 == 0 else None
            filler = " ".join(["and then"] * (i % 7))  # each text its own bag of words (i mod 70)
            key = f"{tenant}-{user}-{i}"
            tool.set(
                key,
                f"{user} {WORDS[i % 10]} {filler} {WORDS[(i * 3) % 10]} number {i}",
                valid_at=valid_at,
                invalid_at=invalid_at,
            )
            spans[key] = (valid_at, invalid_at)
        memory.projector.flush()
        yield memory, spans


def test_built_indexes_keep_the_vector_answers_and_every_filter(populated):
    memory, spans = populated
    index = memory.projector.index
    before = _answers(memory)
    assert index.optimize()["rows"] == 180
    kinds = {tuple(ix.columns): ix.index_type for ix in index.table.list_indices()}
    assert kinds[("vector",)] == "IvfFlat" and kinds[("namespace",)] == "Bitmap"
    assert kinds[("status",)] == kinds[("kind",)] == "Bitmap"
    assert kinds[("fact_id",)] == "BTree"  # the reads that name facts (key-match, graph legs)
    assert lance_index.NPROBES >= 14  # about sqrt(180) partitions: every one is read
    after = _answers(memory)
    for (tenant, user, query, as_of, recipe), hits in after.items():
        if recipe == "vector_only":  # the same cosines; the same rows, but among rows that share no
            was = before[(tenant, user, query, as_of, recipe)]  # word with the query (cosine 0)
            assert [s for _, s in hits] == [s for _, s in was]
            assert [k for k, s in hits if s > 0] == [k for k, s in was if s > 0]
        assert hits, (tenant, user, query, as_of, recipe)
        for key, _ in hits:
            assert key.startswith(f"{tenant}-{user}-")  # scope held through the bitmap prefilter
            assert live_at(*spans[key], as_of or T0)  # time held through the leg's own check


def test_optimize_builds_the_vector_index_once(populated, monkeypatch):
    """Later optimizes fold new rows into the index; they must not train it again from scratch."""
    index = populated[0].projector.index
    builds = []
    original = index.build_vector_index
    monkeypatch.setattr(index, "build_vector_index", lambda **kw: builds.append(kw) or original(**kw))
    index.optimize()
    tool = populated[0].for_run(Identity(tenant="acme", user="ana", agent="helper"))
    tool.set("late", "a late note about the piano")
    populated[0].projector.flush()
    index.optimize()
    assert len(builds) == 1
    assert tool.recall("late note piano", k=1, recipe="vector_only").hits[0].key == "late"


def test_a_btree_namespace_index_of_an_older_build_gives_way_to_one_bitmap(populated):
    from lancedb.index import BTree

    index = populated[0].projector.index
    index.table.create_index("namespace", config=BTree(), replace=True)
    index.build_scalar_indexes()
    on_namespace = [ix for ix in index.table.list_indices() if list(ix.columns) == ["namespace"]]
    assert [ix.index_type for ix in on_namespace] == ["Bitmap"]


def _up_to_ties(hits):
    """One leg's answer as its scores in order and the keys above the last score (rows of equal
    score may come back in another order, and the last of them may be cut at k)."""
    scores = [round(h.legs[next(iter(h.legs))].score, 6) for h in hits]
    return scores, sorted(h.key for h, score in zip(hits, scores) if score != scores[-1])


def test_prewarm_loads_the_indexes_and_search_answers_as_before(populated):
    memory = populated[0]
    index = memory.projector.index
    index.optimize()

    def answers():
        out = {}
        for (tenant, user), query, recipe in itertools.product(PEOPLE, QUERIES, ("vector_only", "bm25_only")):
            tool = memory.for_run(Identity(tenant=tenant, user=user, agent="helper"))
            out[(tenant, user, query, recipe)] = _up_to_ties(tool.recall(query, k=8, recipe=recipe).hits)
        return out

    before = answers()
    assert index.prewarm() > 0
    assert answers() == before


def test_memory_prewarm_index_holds_what_searches_read_and_changes_no_answer(populated, home):
    memory = populated[0]
    tool = memory.for_run(Identity(tenant="acme", user="bo", agent="helper"))
    before = [_up_to_ties(tool.recall(q, k=8, recipe="vector_only").hits) for q in QUERIES]
    assert memory.prewarm_index() > 0
    assert [_up_to_ties(tool.recall(q, k=8, recipe="vector_only").hits) for q in QUERIES] == before
    with Memory.open(home.parent / "bare", embedder=None) as bare:  # no embedder, no index
        assert bare.prewarm_index() == 0


def test_a_search_reads_the_latest_version_another_index_object_wrote(populated):
    """Each search checks for a newer version first: rows another process (here, another index
    object on the same folder) appended are found on the next call."""
    from memory_core.adapters.lance import LanceIndex

    memory = populated[0]
    reader = memory.projector.index
    tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
    assert tool.recall("zebra crossing", recipe="bm25_only").hits == ()
    writer = LanceIndex(reader.folder, reader.embedder_name, reader.dim)
    row = {**reader.table.search().where("key = 'acme-ana-1'").limit(1).to_list()[0]}
    row.pop("_distance", None)
    row.update(fact_id="f-zebra", version_id="v-zebra", key="zebra", text="zebra crossing near the school")
    writer.add([row])
    assert [h.key for h in tool.recall("zebra crossing", recipe="bm25_only").hits] == ["zebra"]
