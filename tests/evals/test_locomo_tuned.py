"""The cross-fitted tuned MiniLM run: each half of the conversations is asked of a model tuned on
the other half's questions, never its own."""

from __future__ import annotations

import dataclasses
import json

import pytest

from corpora.locomo import load_locomo
from evals.locomo import DOCUMENTED, RunSpec, run_locomo, turn_text
from evals.locomo_calibration import fit_calibration
from evals.locomo_tuned import (
    CROSS_FIT_TUNING,
    CROSS_FITTED,
    PLAIN_TUNING,
    CrossFitTuning,
    split_halves,
    training_pairs,
    tuned_model,
)
from memory_core.adapters.embedder_tuning import pairs_digest
from memory_core.adapters.embedders import make_embedder
from tests.fixtures.locomo_fixture import write_locomo_fixture
from tests.optional import require


@pytest.fixture
def two_conversations(tmp_path):
    (first,), _ = load_locomo(write_locomo_fixture(tmp_path / "locomo.json"))
    return [first, dataclasses.replace(first, sample_id="fixture-2")]


def test_a_pair_per_question_and_evidence_turn_with_what_the_index_embeds(two_conversations):
    pairs = training_pairs(two_conversations[:1], turn_text)
    by_query = {(p.query, p.passage) for p in pairs}
    assert ("Where is Clara moving?", "My sister Clara is moving to Montreal for her new job.") in by_query
    # a shared photo's caption is part of the turn's value, as the index embeds it
    assert (
        "What did the kitten knock over?",
        "Pixel knocked over the basil pot today. a photo of a kitten next to a broken plant pot",
    ) in by_query
    assert {p.group for p in pairs} == {"fixture-1"} and all(p.negatives == () for p in pairs)
    assert len(pairs) == sum(len(q.evidence) for q in two_conversations[0].questions)


def test_hard_negatives_are_turns_of_the_conversation_that_are_not_the_evidence(two_conversations):
    conv = two_conversations[0]
    pairs = training_pairs([conv], turn_text, CrossFitTuning(hard_negatives=2, hard_window=4), make_embedder("hashing"))
    turns = {turn_text(t): t.dia_id for t in conv.turns}
    evidence = {q.question: set(q.evidence) for q in conv.questions}
    assert all(len(p.negatives) == 2 for p in pairs)
    for p in pairs:
        assert all(n in turns and turns[n] not in evidence[p.query] for n in p.negatives)


def test_each_half_is_asked_of_the_model_tuned_on_the_other(tmp_path, two_conversations):
    require("sentence_transformers", "tuning needs the embeddings extra")
    spec = RunSpec("tuned", CROSS_FITTED, None, DOCUMENTED)
    (result,) = run_locomo(two_conversations, [spec], tmp_path / "work", tmp_path / "models")
    first, second = split_halves(two_conversations)
    # the questions come back in the conversations' order, every one of them
    assert [q["sample_id"] for q in result.per_question] == [
        c.sample_id for c in two_conversations for q in c.questions if q.evidence
    ]
    # the first half's index was built by the model tuned on the second half's pairs, and back
    names = result.embedder_name.split(" / ")
    minilm = make_embedder("minilm")  # ranks each question's near turns, for its hard negative
    pairs = [training_pairs(half, turn_text, CROSS_FIT_TUNING, minilm) for half in (second, first)]
    assert all(len(p.negatives) == CROSS_FIT_TUNING.hard_negatives for half in pairs for p in half)
    digests = [pairs_digest(half, CROSS_FIT_TUNING.settings) for half in pairs]
    assert names == [f"minilm-l6-v2-tuned-{d}" for d in digests]
    for half, digest in zip(pairs, digests):
        folder = tmp_path / "models" / "tuned" / f"minilm-{digest}"
        made = (folder / "model.safetensors").stat().st_mtime_ns
        assert tuned_model(half, tmp_path / "models", CROSS_FIT_TUNING.settings) == folder
        assert (folder / "model.safetensors").stat().st_mtime_ns == made  # from the cache, not tuned again
        assert json.loads((folder / "tuning.json").read_text())["digest"] == digest
    assert (tmp_path / "work" / "home-documented-minilm-tuned-1").is_dir()
    assert fit_calibration(result) is None  # two models' scores: no one embedder's calibration


def test_the_choice_of_tuning_is_made_inside_each_training_half(tmp_path, two_conversations):
    require("sentence_transformers", "tuning needs the embeddings extra")
    from evals.locomo_tuning_choice import inner_scores

    four = [dataclasses.replace(two_conversations[0], sample_id=f"fixture-{n}") for n in range(1, 5)]
    scores = inner_scores(four, {"plain": PLAIN_TUNING}, tmp_path / "work", tmp_path / "models")
    assert set(scores["plain"]) == {"tune half R@5", "tune half R@10", "held half R@5", "held half R@10"}
    # every model was tuned on one conversation of a half, asked of the other conversation of that half
    made = {json.loads(p.read_text())["digest"] for p in (tmp_path / "models" / "tuned").glob("*/tuning.json")}
    assert made == {pairs_digest(training_pairs([c], turn_text), PLAIN_TUNING.settings) for c in four}
