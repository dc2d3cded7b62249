"""Fine-tuning the MiniLM bi-encoder on (query, passage) pairs, offline and on CPU.

The loss is the in-batch-negatives one of dense retrieval (Karpukhin et al., 2020): each query's
passage is the right answer among every passage of its batch and the batch's hard negatives.
Pairs carry a group, and a batch is cut from one group where it can, so the negatives a query
meets in training are the ones it meets at recall time: the other turns of its own
conversation, not easy strangers from another one.

A tuned model is a sentence-transformers folder plus ``tuning.json``, which says what made it
(base, settings, how many pairs and their digest); ``MiniLMEmbedder(model_path=...)`` serves it
under a name that carries that digest, so an index or a calibration built with one tuned model is
never mistaken for another's.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..errors import InvalidInput
from .embedders import _extra, _minilm_path

MANIFEST = "tuning.json"
# Part of every tuned model's digest: a change to the loss or the batching must name new models.
METHOD = "in-batch and hard negatives, one group a batch, first-fit leftovers; v2"


@dataclass(frozen=True, slots=True)
class TrainingPair:
    """A query and a passage that answers it. Pairs of one ``group`` share batches; ``negatives``
    are passages that look like answers and are not (hard negatives), scored beside the batch's."""

    query: str
    passage: str
    group: str = ""
    negatives: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TuningSettings:
    epochs: int = 1
    batch_size: int = 32
    learning_rate: float = 2e-5
    scale: float = 20.0  # cosine × scale are the logits of the in-batch softmax
    seed: int = 0


DEFAULT_TUNING = TuningSettings()


def pairs_digest(pairs: Sequence[TrainingPair], settings: TuningSettings) -> str:
    """What names a tuned model: its pairs, in order, and its settings."""
    h = hashlib.sha256(json.dumps([METHOD, asdict(settings)], sort_keys=True).encode())
    for p in pairs:
        h.update(json.dumps([p.query, p.passage, p.group, list(p.negatives)]).encode())
    return h.hexdigest()[:16]


def plan_batches(pairs: Sequence[TrainingPair], batch_size: int, seed: int) -> list[list[int]]:
    """Batches of pair indices, each from one group where the group fills it, none repeating a
    query or a passage (a repeat would be a second right answer scored as a wrong one). What no
    group fills is packed into mixed batches; a pair left alone, with no negative, is left out.
    Pure: the same pairs, size and seed give the same batches."""
    if batch_size < 2:
        raise InvalidInput("a tuning batch needs at least 2 pairs: the others are each one's negatives")
    rng = random.Random(seed)
    by_group: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        by_group.setdefault(p.group, []).append(i)
    batches: list[list[int]] = []
    leftovers: list[int] = []
    for group in sorted(by_group):
        members = by_group[group]
        rng.shuffle(members)
        for batch in _pack(pairs, members, batch_size):
            if len(batch) == batch_size:
                batches.append(batch)
            else:
                leftovers.extend(batch)
    batches += [b for b in _pack(pairs, leftovers, batch_size) if len(b) >= 2]
    rng.shuffle(batches)
    return batches


def batch_columns(batch: Sequence[TrainingPair]) -> list[str]:
    """The passages a batch's queries are scored against: each pair's own first (column i is pair
    i's right answer), then the hard negatives, each text once."""
    columns = [p.passage for p in batch]
    seen = set(columns)
    for p in batch:
        for text in p.negatives:
            if text not in seen:
                columns.append(text)
                seen.add(text)
    return columns


def _pack(pairs: Sequence[TrainingPair], members: Sequence[int], size: int) -> list[list[int]]:
    """First fit: each pair joins the first batch with room that holds neither its query nor its
    passage, or starts a new one."""
    batches: list[list[int]] = []
    texts: list[set[str]] = []
    for i in members:
        query, passage = pairs[i].query, pairs[i].passage
        for batch, seen in zip(batches, texts):
            if len(batch) < size and query not in seen and passage not in seen:
                batch.append(i)
                seen.update((query, passage))
                break
        else:
            batches.append([i])
            texts.append({query, passage})
    return batches


def tune_minilm(
    pairs: Sequence[TrainingPair],
    out_dir: Path,
    settings: TuningSettings = DEFAULT_TUNING,
    *,
    base: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Fine-tune MiniLM (the packaged weights unless ``base`` names others) on ``pairs`` and save
    it to ``out_dir``, written whole or not at all. Returns ``out_dir``."""
    if len(pairs) < 2:
        raise InvalidInput(f"tuning needs at least 2 pairs, got {len(pairs)}")
    SentenceTransformer = _extra("sentence_transformers", "SentenceTransformer")  # typed when missing
    import torch  # the embeddings extra brings it with sentence-transformers

    functional = torch.nn.functional
    base = base or _minilm_path()
    torch.manual_seed(settings.seed)
    model = SentenceTransformer(str(base), device="cpu")
    model.train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    encode_inputs = getattr(model, "preprocess", None) or model.tokenize  # renamed in sentence-transformers 6
    steps = 0
    for epoch in range(settings.epochs):
        for batch in plan_batches(pairs, settings.batch_size, settings.seed + epoch):
            queries = model(encode_inputs([pairs[i].query for i in batch]))["sentence_embedding"]
            columns = batch_columns([pairs[i] for i in batch])
            passages = model(encode_inputs(columns))["sentence_embedding"]
            logits = functional.normalize(queries, dim=-1) @ functional.normalize(passages, dim=-1).T
            loss = functional.cross_entropy(logits * settings.scale, torch.arange(len(batch)))
            loss.backward()
            optimiser.step()
            optimiser.zero_grad()
            steps += 1
            if progress and steps % 10 == 0:
                progress(f"tuning: epoch {epoch + 1}, step {steps}, loss {loss.item():.3f}")
    model.eval()
    staging = out_dir.with_name(out_dir.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    model.save(str(staging))
    manifest = {
        "base": base.name,
        "settings": asdict(settings),
        "pairs": len(pairs),
        "digest": pairs_digest(pairs, settings),
        "steps": steps,
    }
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    if out_dir.exists():
        shutil.rmtree(out_dir)
    staging.rename(out_dir)
    return out_dir


def tuned_name(model_path: Path) -> str:
    """The embedder name of a tuned model folder, from its manifest."""
    try:
        manifest = json.loads((model_path / MANIFEST).read_text())
    except (OSError, ValueError):
        raise InvalidInput(f"{model_path} is not a tuned model folder (no readable {MANIFEST})") from None
    return f"minilm-l6-v2-tuned-{manifest['digest']}"
