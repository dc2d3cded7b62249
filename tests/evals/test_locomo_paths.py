"""The LoCoMo harness measures the documented path beside the tuned one, and compares runs in
pairs with McNemar's exact test."""

from pathlib import Path

from corpora.locomo import load_locomo
from evals.locomo import DOCUMENTED, RunSpec, halves, paired_tests, report_markdown, run_locomo
from memory_core import Identity, Memory
from tests.fixtures.locomo_fixture import write_locomo_fixture


def test_the_documented_path_writes_plain_notes_and_asks_with_defaults(tmp_path):
    conversations, cleaning = load_locomo(write_locomo_fixture(tmp_path / "locomo.json"))
    specs = [RunSpec("tuned", "hashing", "hybrid_zscore"), RunSpec("documented", "hashing", None, DOCUMENTED)]
    tuned, documented = run_locomo(conversations, specs, tmp_path / "work", tmp_path / "models")
    assert documented.summary()["recipe"] == "default: hybrid_session" and documented.summary()["path"] == DOCUMENTED
    assert len(documented.per_question) == len(tuned.per_question) > 0
    # The store gave each turn its session's context: the second turn is indexed with the first's words.
    with Memory.open(tmp_path / "work" / "home-documented-hashing", embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="locomo", user="fixture-1"))
        second = tool.get("D1:2")
        assert second.index_context == "I adopted a tabby kitten called Pixel last week!"
        assert second.subject == "Ben" and second.provenance.session == "fixture-1/1"
        assert tool.get("D2:1").index_context is None  # a new session starts a new conversation

    report = report_markdown([tuned, documented], Path("locomo.json"), cleaning.to_dict())
    assert "| documented (`hashing`, `default: hybrid_session`) | documented |" in report
    assert "## Paired comparisons" in report and "| tuned | documented |" in report


def test_paired_tests_count_the_questions_one_run_hits_and_the_other_misses(tmp_path):
    conversations, _ = load_locomo(write_locomo_fixture(tmp_path / "locomo.json"))
    specs = [RunSpec("bm25", "hashing", "bm25_only"), RunSpec("vector", "hashing", "vector_only")]
    a, b = run_locomo(conversations, specs, tmp_path / "work", tmp_path / "models")
    (test,) = paired_tests([a, b])
    hits_a, hits_b = a.hits(10), b.hits(10)
    assert test["only_a"] == sum(x and not y for x, y in zip(hits_a, hits_b))
    assert test["only_b"] == sum(y and not x for x, y in zip(hits_a, hits_b))
    assert test["hits@10_a"] == sum(hits_a) and 0.0 <= test["p_value"] <= 1.0


def test_halves_split_the_conversations_in_file_order():
    rows = [{"sample_id": s} for s in ["c1", "c1", "c2", "c3", "c3", "c4", "c5"]]
    assert halves(rows) == ({"c1", "c2", "c3"}, {"c4", "c5"})
