"""How the cross-fitted tuning was chosen: nested cross-fitting inside each training half.

The outer cross-fit asks each half of the dev conversations of a model tuned on the other half
(``evals.locomo_tuned``). Which way to tune is chosen without the half it will be scored on: for
each outer training half, every candidate is run as a cross-fit of that half alone (its first two
conversations asked of a model tuned on its last two, and back), and the candidate with the best
R@10 there is the one the outer run may use. ``python -m evals.locomo_tuning_choice`` prints the
table docs/benchmarks.md quotes.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

from corpora.locomo import Conversation, load_locomo, locate
from memory_core.adapters.embedder_tuning import TuningSettings
from memory_core.environment import shared_root

from .locomo import DOCUMENTED, RunSpec, run_locomo
from .locomo_tuned import CROSS_FITTED, PLAIN_TUNING, CrossFitTuning, split_halves

CANDIDATES: Mapping[str, CrossFitTuning] = {
    "in-batch negatives, 1 epoch": PLAIN_TUNING,
    "+ 1 hard negative": CrossFitTuning(hard_negatives=1),
    "in-batch negatives, 2 epochs": CrossFitTuning(settings=TuningSettings(epochs=2)),
}


def inner_scores(
    conversations: Sequence[Conversation],
    candidates: Mapping[str, CrossFitTuning],
    work_dir: Path,
    models_dir: Path,
) -> dict[str, dict[str, float]]:
    """R@5 and R@10 of each candidate, cross-fitted inside each outer training half."""
    spec = RunSpec("default(minilm-tuned)", CROSS_FITTED, None, DOCUMENTED)
    scores: dict[str, dict[str, float]] = {}
    for half_name, half in zip(("tune half", "held half"), split_halves(conversations)):
        for name, tuning in candidates.items():
            (result,) = run_locomo(half, [spec], work_dir, models_dir, tuning=tuning)
            scores.setdefault(name, {})[f"{half_name} R@5"] = round(result.recall(5), 2)
            scores[name][f"{half_name} R@10"] = round(result.recall(10), 2)
    return scores


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.locomo_tuning_choice", description=__doc__)
    parser.add_argument("--data", help="the LoCoMo file or its folder (default: ../shared/corpora/locomo)")
    parser.add_argument("--models", type=Path, default=Path(".memory/models"), help="where tuned models are cached")
    args = parser.parse_args(argv)
    conversations, _ = load_locomo(locate(args.data, shared_root()))
    with tempfile.TemporaryDirectory(prefix="memcore-tuning-choice-") as work:
        scores = inner_scores(conversations, CANDIDATES, Path(work), args.models)
    print(json.dumps(scores, indent=2))
    for half in ("tune half", "held half"):
        best = max(scores, key=lambda name: scores[name][f"{half} R@10"])
        print(f"chosen for the model tuned on the {half}: {best}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
