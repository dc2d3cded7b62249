"""The extraction evals on small inputs: the coreference comparison and observation recall."""

import json

from corpora.coref import CorefItem, synthetic_items
from evals.coref import compare, outcome, outcomes
from evals.observations import run as observation_run
from memory_core.extraction.harvest import CONTEXT_CHARS


def test_per_span_sees_only_the_mention_turn_and_whole_batch_sees_the_dialog():
    item = CorefItem(
        "t",
        "d1",
        (
            "Play Billie Jean by Michael Jackson .",
            "Several versions are listed .",
            "Show me a live version that he moonwalks on .",
        ),
        "he",
        28,
        ("Michael Jackson",),
    )
    assert item.turns[-1][item.mention_start :].startswith("he")
    assert not outcome(item, "per_span") and outcome(item, "whole_batch")
    row = compare([item, item])
    assert row["per_span"]["accuracy"] == 0 and row["whole_batch"]["accuracy"] == 1
    assert (row["batch_only_right"], row["span_only_right"]) == (2, 0) and row["mcnemar_p"] == 0.5


def test_whole_batch_reads_what_the_consolidator_hands_over_not_the_whole_dialog():
    # The consolidator reads a span after about CONTEXT_CHARS of the session's earlier turns: a
    # name further back than that is out of the whole-batch arm's reach too.
    far = "and then we talked about the weather for a while " * (CONTEXT_CHARS // 40)
    near = ("Play Billie Jean by Michael Jackson .", "Show me a live version that he moonwalks on .")
    reached = CorefItem("t", "d2", near, "he", 28, ("Michael Jackson",))
    beyond = CorefItem("t", "d3", (near[0], far, near[1]), "he", 28, ("Michael Jackson",))
    assert outcomes([reached, beyond], "whole_batch") == [True, False]


def test_the_synthetic_corpus_knows_its_answers():
    items = synthetic_items(seed=1, dialogs=50)
    assert len(items) == 50
    for item in items:
        assert item.turns[-1][item.mention_start :].startswith(item.mention)
        assert any(a in " ".join(item.turns[:-1]) for a in item.antecedents)


def test_observation_recall_on_a_small_corpus(tmp_path):
    turns = [
        {"speaker": "Ada", "dia_id": "D1:1", "text": "I moved to Lisbon last year."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "I love sailing on weekends."},
        {"speaker": "Ada", "dia_id": "D1:3", "text": "The weather was grey today."},
    ]
    other = [{"speaker": "Cy", "dia_id": "D1:1", "text": "Quarterly budgets are due on Friday."}]
    samples = [
        {
            "sample_id": "a",
            "conversation": {
                "speaker_a": "Ada",
                "speaker_b": "Ben",
                "session_1": turns,
                "session_1_date_time": "1:56 pm on 8 May, 2023",
            },
            "qa": [],
            "observation": {
                "session_1_observation": {
                    "Ada": [["Ada lives in Lisbon", "D1:1"]],
                    "Ben": [["Ben loves sailing on weekends", "D1:2"]],
                }
            },
        },
        {
            "sample_id": "b",
            "conversation": {
                "speaker_a": "Cy",
                "speaker_b": "Di",
                "session_1": other,
                "session_1_date_time": "1:56 pm on 8 May, 2023",
            },
            "qa": [],
            "observation": {"session_1_observation": {"Cy": [["Cy has budgets due Friday", "D1:1"]]}},
        },
    ]
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(samples))
    doc = observation_run(str(data), tmp_path, tmp_path / "out", tmp_path / "models", embedder="hashing")
    rules, verbatim = doc["results"]
    assert rules["extractor"] == "rules-v1" and rules["observations"] == 3 and rules["facts_extracted"] == 2
    assert verbatim["recovered"] >= rules["recovered"]
    assert (tmp_path / "out" / "observation_recall.md").read_text().startswith("# Extraction recall")
