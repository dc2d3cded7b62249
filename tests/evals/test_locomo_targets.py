"""Benchmark-sized: the LoCoMo recall targets on the dev file (`make test-slow`)."""

import pytest

from corpora.locomo import LocomoNotFound, load_locomo, locate
from evals.locomo import RunSpec, run_locomo
from memory_core.environment import shared_root

pytestmark = pytest.mark.slow


def test_best_offline_recipe_meets_the_locomo_targets(tmp_path):
    try:
        data = locate(None, shared_root())
    except LocomoNotFound as exc:
        pytest.skip(f"LoCoMo dev file not available: {exc}")
    conversations, _ = load_locomo(data)
    (result,) = run_locomo(
        conversations, [RunSpec("best(static)", "static", "hybrid_zscore")], tmp_path / "work", tmp_path / "models"
    )
    assert result.recall(10) >= 75.0 and result.recall(5) >= 65.0, result.summary()
