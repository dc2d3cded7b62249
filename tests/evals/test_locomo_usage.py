"""The usage-prior evaluation (evals/locomo_usage.py) on the LoCoMo fixture: the asked half gets
its feedback through the public op, the fold counts it, and the held-out half is measured paired."""

from corpora.locomo import load_locomo
from evals.locomo_usage import VARIANTS, run, split_questions
from tests.fixtures.locomo_fixture import write_locomo_fixture


def test_each_conversation_is_split_in_file_order_and_only_questions_with_evidence_count(tmp_path):
    conversations, _ = load_locomo(write_locomo_fixture(tmp_path / "locomo.json"))
    for conv in conversations:
        asked, held = split_questions(conv)
        with_evidence = [q for q in conv.questions if q.evidence]
        assert asked + held == with_evidence and len(held) - len(asked) in (0, 1)


def test_the_protocol_gives_feedback_folds_it_and_measures_the_held_out_half(tmp_path):
    conversations, _ = load_locomo(write_locomo_fixture(tmp_path / "locomo.json"))
    doc = run(conversations, tmp_path / "work", tmp_path / "models", "hashing", lambda message: None)
    assert set(doc["variants"]) == set(VARIANTS)
    held_out = sum(len(split_questions(c)[1]) for c in conversations)
    for entry in doc["variants"].values():
        fed, fold = entry["feedback"], entry["fold"]
        assert fold["useful"] == fed["useful"] and fold["not_useful"] == fed["not_useful"]
        assert fold["exposures"] > 0 and fold["waiting"] == 0
        assert entry["held_out"]["questions"] == held_out
        assert entry["held_out"]["only_a"] + entry["held_out"]["only_b"] == entry["held_out"]["discordant"]
    assert doc["variants"]["useful"]["feedback"]["not_useful"] == 0
    assert doc["variants"]["useful+not_useful"]["feedback"]["not_useful"] > 0
