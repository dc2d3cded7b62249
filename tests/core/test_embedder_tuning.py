"""Tuning MiniLM on (query, passage) pairs: the batches it trains on, and the model it leaves."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.adapters.embedder_tuning import (
    MANIFEST,
    TrainingPair,
    TuningSettings,
    pairs_digest,
    plan_batches,
    tune_minilm,
    tuned_name,
)
from memory_core.adapters.embedders import make_embedder
from memory_core.cli import main
from memory_core.errors import InvalidInput
from tests.optional import require

pairs_strategy = st.lists(
    st.builds(
        TrainingPair,
        query=st.sampled_from([f"q{i}" for i in range(12)]),
        passage=st.sampled_from([f"p{i}" for i in range(12)]),
        group=st.sampled_from(["a", "b", "c"]),
    ),
    max_size=60,
)


@given(pairs=pairs_strategy, size=st.integers(2, 9), seed=st.integers(0, 3))
@settings(max_examples=200, deadline=None)
def test_batches_never_repeat_a_text_or_a_pair_and_keep_groups_together(pairs, size, seed):
    batches = plan_batches(pairs, size, seed)
    assert batches == plan_batches(pairs, size, seed)  # pure
    used = [i for b in batches for i in b]
    assert len(used) == len(set(used))  # no pair twice
    for batch in batches:
        assert 2 <= len(batch) <= size
        queries = [pairs[i].query for i in batch]
        passages = [pairs[i].passage for i in batch]
        # a repeated text would be a right answer scored as a wrong one
        assert len(set(queries)) == len(queries) and len(set(passages)) == len(passages)
        assert not set(queries) & set(passages)


@given(groups=st.lists(st.sampled_from(["a", "b", "c"]), max_size=60), size=st.integers(2, 9), seed=st.integers(0, 3))
@settings(max_examples=200, deadline=None)
def test_with_distinct_texts_at_most_one_pair_is_left_out(groups, size, seed):
    pairs = [TrainingPair(f"q{i}", f"p{i}", g) for i, g in enumerate(groups)]
    used = {i for b in plan_batches(pairs, size, seed) for i in b}
    assert len(pairs) - len(used) <= 1


def test_a_group_that_fills_batches_trains_against_its_own_members():
    pairs = [TrainingPair(f"question {i}", f"turn {i}", group="conv-1" if i < 8 else "conv-2") for i in range(12)]
    batches = plan_batches(pairs, 4, seed=0)
    groups = [{pairs[i].group for i in b} for b in batches]
    assert sorted(len(b) for b in batches) == [4, 4, 4]
    assert all(len(g) == 1 for g in groups)  # conv-1 fills two batches, conv-2 one: none mixed


def test_a_batch_of_one_is_refused():
    with pytest.raises(InvalidInput):
        plan_batches([TrainingPair("q", "p")], 1, seed=0)


def test_the_digest_names_pairs_and_settings():
    pairs = [TrainingPair("q1", "p1"), TrainingPair("q2", "p2")]
    assert pairs_digest(pairs, TuningSettings()) == pairs_digest(list(pairs), TuningSettings())
    assert pairs_digest(pairs, TuningSettings()) != pairs_digest(pairs[::-1], TuningSettings())
    assert pairs_digest(pairs, TuningSettings()) != pairs_digest(pairs, TuningSettings(epochs=2))


def test_a_folder_without_a_manifest_is_not_a_tuned_model(tmp_path):
    with pytest.raises(InvalidInput):
        make_embedder("minilm", model_path=tmp_path)


PAIRS = [
    TrainingPair("where did Mel go camping", "we went camping at the lake in the mountains", "c"),
    TrainingPair("what instrument does Sam play", "I have been practising the violin every morning", "c"),
    TrainingPair("what pet did Ben adopt", "I adopted a tabby kitten called Pixel last week", "c"),
    TrainingPair("which city did Ana move to", "the new flat in Lisbon has a view of the river", "c"),
]


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    require("sentence_transformers", "tuning needs the embeddings extra")
    steps = TuningSettings(epochs=3, batch_size=4, learning_rate=1e-4)
    return tune_minilm(PAIRS, tmp_path_factory.mktemp("models") / "tuned", steps), steps


def test_tuning_pulls_each_query_toward_its_passage_and_names_the_model(tuned):
    folder, steps = tuned
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["digest"] == pairs_digest(PAIRS, steps) and manifest["pairs"] == 4 and manifest["steps"] == 3
    assert not folder.with_name("tuned.partial").exists()  # written whole, then moved into place

    base, tuned_embedder = make_embedder("minilm"), make_embedder("minilm", model_path=folder)
    assert tuned_embedder.name == tuned_name(folder) == f"minilm-l6-v2-tuned-{manifest['digest']}" != base.name

    def margin(embedder) -> float:
        queries = embedder.embed([p.query for p in PAIRS])
        passages = embedder.embed([p.passage for p in PAIRS])
        cosines = queries @ passages.T
        return float(np.mean(np.diag(cosines)) - np.mean(cosines[~np.eye(len(PAIRS), dtype=bool)]))

    assert margin(tuned_embedder) > margin(base) + 0.02


def test_the_cli_indexes_with_a_tuned_folder_and_the_index_remembers_which(tuned, tmp_path):
    folder, _ = tuned
    home, out = tmp_path / "home", []
    flags = ["--home", str(home), "--tenant", "acme", "--user", "ana", "--embedder", "minilm"]
    assert (
        main(
            [*flags, "--embedder-path", str(folder), "set", "pet", "a tabby kitten called Pixel", "--json"], out.append
        )
        == 0
    )
    assert main([*flags, "--embedder-path", str(folder), "recall", "what pet", "--json"], out.append) == 0
    assert [h["key"] for h in json.loads(out[-1])["hits"]] == ["pet"]
    # the untuned model may not read an index the tuned one built
    assert main([*flags, "recall", "what pet", "--json"], out.append) == 1
    assert json.loads(out[-1])["error"]["code"] == "EMBEDDER_MISMATCH"
    # a tuned folder is for minilm only
    assert main([*flags[:-1], "static", "--embedder-path", str(folder), "get", "pet", "--json"], out.append) == 1
    assert json.loads(out[-1])["error"]["code"] == "INVALID_INPUT"
