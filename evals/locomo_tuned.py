"""LoCoMo with MiniLM tuned on LoCoMo, cross-fitted so no question is scored by a model that saw it.

The dev conversations are split in two halves in file order (``locomo.halves``). Each half's
questions are asked of an index built with MiniLM tuned on the *other* half's (question, evidence
turn) pairs, so the run's R@k over all the conversations is a held-out figure throughout; the
recipe and its weights are the default's, chosen before any tuning. A tuned model is cached in
the models folder under the digest of its pairs and settings, and reused while they hold.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from corpora.locomo import Conversation
from memory_core.adapters.embedder_tuning import (
    DEFAULT_TUNING,
    TrainingPair,
    TuningSettings,
    pairs_digest,
    tune_minilm,
)
from memory_core.ports import Embedder
from memory_core.texts import index_text

# The embedder name a RunSpec gives for this: MiniLM tuned on the other half of the conversations.
CROSS_FITTED = "minilm-tuned"


@dataclass(frozen=True, slots=True)
class CrossFitTuning:
    """How the cross-fitted models are tuned: the loss's settings and how many hard negatives each
    pair carries (turns of its own conversation the base model ranks near the question, drawn
    from its top ``hard_window``, none of them the question's evidence)."""

    settings: TuningSettings = DEFAULT_TUNING
    hard_negatives: int = 0
    hard_window: int = 20


PLAIN_TUNING = CrossFitTuning()  # in-batch negatives alone
# Chosen by nested cross-fitting inside each training half (docs/benchmarks.md, "LoCoMo: MiniLM
# tuned with cross-fitting"): one hard negative beat none and two epochs in both halves.
CROSS_FIT_TUNING = CrossFitTuning(hard_negatives=1)


def training_pairs(
    conversations: Sequence[Conversation],
    passage: Callable[..., str],
    tuning: CrossFitTuning = PLAIN_TUNING,
    base: Embedder | None = None,
) -> list[TrainingPair]:
    """One pair per question and evidence turn; the passage is what the index embeds for the turn
    (``passage(turn)`` gives its value; the key's words are added as the index adds them). Hard
    negatives, when the tuning asks for them, are ranked by ``base`` (the untuned model)."""
    rng = random.Random(tuning.settings.seed)
    pairs = []
    for conv in conversations:
        texts = {t.dia_id: index_text(t.dia_id, passage(t)) for t in conv.turns}
        asked = [q for q in conv.questions if any(d in texts for d in q.evidence)]
        near = _near_turns(conv, asked, texts, base, tuning.hard_window) if tuning.hard_negatives else {}
        for q in asked:
            wrong = [d for d in near.get(q.question, []) if d not in q.evidence]
            for dia_id in (d for d in q.evidence if d in texts):
                drawn = rng.sample(wrong, min(tuning.hard_negatives, len(wrong))) if wrong else []
                negatives = tuple(texts[d] for d in drawn)
                pairs.append(TrainingPair(q.question, texts[dia_id], group=conv.sample_id, negatives=negatives))
    return pairs


def _near_turns(
    conv: Conversation, asked: Sequence[Any], texts: dict[str, str], base: Embedder | None, window: int
) -> dict[str, list[str]]:
    """Each question's ``window`` nearest turns of its conversation by the base model's cosine."""
    if base is None:
        raise ValueError("hard negatives need the base embedder to rank turns")
    ids = list(texts)
    turns = base.embed([texts[d] for d in ids])
    questions = base.embed([q.question for q in asked])
    order = np.argsort(-(questions @ turns.T), axis=1, kind="stable")[:, :window]
    return {q.question: [ids[j] for j in row] for q, row in zip(asked, order)}


def split_halves(conversations: Sequence[Conversation]) -> tuple[list[Conversation], list[Conversation]]:
    """The tune and held halves, cut as ``locomo.halves`` cuts the questions."""
    cut = (len(conversations) + 1) // 2
    return list(conversations[:cut]), list(conversations[cut:])


def tuned_model(
    pairs: Sequence[TrainingPair],
    models_dir: Path,
    settings: TuningSettings = DEFAULT_TUNING,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """The model tuned on ``pairs``: from the cache when it is there, else tuned now and cached."""
    folder = models_dir / "tuned" / f"minilm-{pairs_digest(pairs, settings)}"
    if (folder / "tuning.json").exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    if progress:
        progress(f"tuning MiniLM on {len(pairs)} pairs into {folder}")
    return tune_minilm(pairs, folder, settings, progress=progress)
