"""The LoCoMo report's ablation rows: each question's whole ranking is read through paging, and
taking a prior's term out of every candidate re-sorts it as the recipe would without that prior."""

from corpora.locomo import load_locomo
from evals.locomo import DOCUMENTED, RunSpec, run_locomo
from evals.locomo_ablation import ABLATED_TERMS, ablation_markdown, ablation_rows, without
from tests.fixtures.locomo_fixture import write_locomo_fixture


def test_the_rows_re_sort_the_whole_ranking_read_through_the_cursor(tmp_path):
    conversations, _ = load_locomo(write_locomo_fixture(tmp_path / "locomo.json"))
    spec = RunSpec("default(hashing)", "hashing", None, DOCUMENTED, ablate=True)
    (result,) = run_locomo(conversations, [spec], tmp_path / "work", tmp_path / "models")
    for q in result.per_question:
        keys = [key for key, _, _ in q["ranking"]]
        assert keys[: len(q["top"])] == q["top"]  # the first page is the run's own answer
        assert len(keys) == len(set(keys))  # every candidate once, across the pages
        for _key, score, terms in q["ranking"]:
            assert abs(sum(terms.values()) - score) < 1e-5
    rows = ablation_rows(result.per_question)
    assert [r["removed"] for r in rows[1:]] == list(ABLATED_TERMS)
    assert rows[0]["r@10"] == round(result.recall(10), 2)
    by_term = {r["removed"]: r for r in rows}
    # every fixture turn is stated with confidence 1: taking the term out changes nothing
    assert by_term["confidence_prior"]["touched"] == 0 and by_term["confidence_prior"]["r@10"] == rows[0]["r@10"]
    assert by_term["session_prior"]["touched"] > 0
    text = "\n".join(ablation_markdown([result]))
    assert "## Ablation" in text and "| session_prior |" in text


def test_without_a_term_the_ranking_is_re_sorted_by_what_is_left():
    ranking = [
        ("a", 2.0, {"vector": 1.0, "session_prior": 1.0}),
        ("b", 1.5, {"vector": 1.5}),
        ("c", 1.5, {"vector": 1.5}),
    ]
    assert without(ranking, None) == ["a", "b", "c"]
    assert without(ranking, "session_prior") == ["b", "c", "a"]  # ties keep the ranking's order
    assert without(ranking, "recency_prior") == ["a", "b", "c"]
