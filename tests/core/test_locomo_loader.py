"""The LoCoMo loader's cleaning of known evidence defects, and the recall metric."""

import pytest

from corpora.locomo import CleaningReport, clean_evidence, load_locomo, parse_session_date
from evals.metrics import bootstrap_ci, mcnemar_exact, recall_at_k
from tests.fixtures.locomo_fixture import write_locomo_fixture


def test_evidence_cleaning_splits_repairs_and_drops():
    known = {"D8:6", "D9:17", "D9:1", "D4:4", "D4:6", "D11:26", "D30:5"}
    report = CleaningReport()
    assert clean_evidence(["D8:6; D9:17"], known, report) == ("D8:6", "D9:17")
    assert clean_evidence(["D9:1 D4:4 D4:6"], known, report) == ("D9:1", "D4:4", "D4:6")
    assert clean_evidence(["D:11:26"], known, report) == ("D11:26",)
    assert clean_evidence(["D30:05"], known, report) == ("D30:5",)
    assert clean_evidence(["D"], known, report) == ()
    assert report.repaired_tokens == 2 and report.dropped_tokens == ["D"]


def test_loader_reads_turns_dates_captions_and_skips_nothing_silently(tmp_path):
    conversations, report = load_locomo(write_locomo_fixture(tmp_path / "l.json"))
    (conv,) = conversations
    assert len(conv.turns) == 7 and conv.turns[-1].caption.startswith("a photo")
    assert conv.turns[0].session_date == parse_session_date("1:56 pm on 8 May, 2023")
    assert [q.evidence for q in conv.questions][2:4] == [("D1:4",), ("D2:1",)]
    assert report.questions_without_evidence == 1 and report.dropped_tokens == ["D9:9"]


def test_recall_at_k_is_the_papers_definition():
    assert recall_at_k(["a", "b", "c"], ["a", "c"], 1) == 0.5
    assert recall_at_k(["a", "b", "c"], ["a", "c"], 3) == 1.0
    with pytest.raises(ValueError):
        recall_at_k(["a"], [], 1)


def test_mcnemar_exact_and_bootstrap():
    a = [True] * 12 + [False] * 4
    b = [False] * 12 + [False] * 4
    result = mcnemar_exact(a, b)
    assert result["only_a"] == 12 and result["only_b"] == 0 and result["p_value"] == pytest.approx(2 * 0.5**12)
    low, high = bootstrap_ci([0.0, 1.0] * 50)
    assert low < 0.5 < high


def test_rank_metrics():
    from evals.metrics import mrr, ndcg_at_k

    assert mrr(["x", "a", "b"], ["a"]) == 0.5 and mrr(["x"], ["a"]) == 0.0
    assert ndcg_at_k(["a", "b"], ["a"], 2) == 1.0
    assert 0 < ndcg_at_k(["x", "a"], ["a"], 2) < 1
