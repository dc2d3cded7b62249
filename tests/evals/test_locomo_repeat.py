"""A LoCoMo run repeats: rows of equal score are ranked by fact id, so the harness writes the turns
with ids from a seeded generator and the same code answers every question the same way."""

from corpora.locomo import load_locomo
from evals.locomo import RunSpec, run_locomo
from tests.fixtures.locomo_fixture import write_locomo_fixture


def test_two_runs_rank_every_question_alike(tmp_path):
    conversations, _ = load_locomo(write_locomo_fixture(tmp_path / "locomo.json"))
    specs = [RunSpec("hybrid(hashing)", "hashing", "hybrid_rrf"), RunSpec("vector(hashing)", "hashing", "vector_only")]
    tops = [
        [
            [q["top"] for q in result.per_question]
            for result in run_locomo(conversations, specs, tmp_path / f"work-{run}", tmp_path / "models")
        ]
        for run in range(3)
    ]
    assert tops[0] == tops[1] == tops[2]
