"""Extraction recall against LoCoMo's observations: how much of what each session established
does an extractor recover?

LoCoMo annotates every session with ``observation`` facts per speaker. For each session the
extractor reads the session's turns; an observation counts as recovered when one of the facts it
extracted from that session is at least ``tau`` similar to it (cosine of embeddings).

``tau`` is calibrated on pairs whose answer is known: an observation and the turn it cites
(positive), the same observation and a turn of another conversation (negative). The threshold
maximising Youden's J (true-positive rate minus false-positive rate) is used, and reported with
its rates and the ROC AUC. The rule-based figure is low by design: it is the baseline a model
must beat.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from corpora.locomo import load_locomo, load_observations, locate
from memory_core.adapters.embedders import make_embedder
from memory_core.extraction.model import Extractor, Turn
from memory_core.extraction.rules import RuleExtractor

from .metrics import bootstrap_ci

LICENCE = "LoCoMo (snap-research/LoCoMo), CC BY-NC 4.0: non-commercial use, attribution"


def calibrate(embed, observations, turn_text: dict[tuple[str, str], str], seed: int = 5) -> dict:
    """Youden-optimal cosine threshold from known positive and negative pairs."""
    from sklearn.metrics import roc_auc_score

    rng = random.Random(seed)
    cited = [o for o in observations if o.dia_id and (o.sample_id, o.dia_id) in turn_text]
    by_sample: dict[str, list[str]] = {}
    for (sample, _), text in turn_text.items():
        by_sample.setdefault(sample, []).append(text)
    pairs, labels = [], []
    for o in cited:
        pairs.append((o.text, turn_text[(o.sample_id, o.dia_id)]))
        labels.append(1)
        others = [s for s in by_sample if s != o.sample_id]
        if others:
            pairs.append((o.text, rng.choice(by_sample[rng.choice(others)])))
            labels.append(0)
    if not pairs or len(set(labels)) < 2:
        return {"tau": 0.5, "pairs": len(pairs), "note": "too few labelled pairs; tau defaulted to 0.5"}
    left, right = embed([a for a, _ in pairs]), embed([b for _, b in pairs])  # unit rows
    cos = (left * right).sum(axis=1)
    y = np.asarray(labels)
    best = max(
        np.arange(0.05, 0.96, 0.01),
        key=lambda t: ((cos >= t) & (y == 1)).sum() / (y == 1).sum() - ((cos >= t) & (y == 0)).sum() / (y == 0).sum(),
    )
    tpr = float(((cos >= best) & (y == 1)).sum() / (y == 1).sum())
    fpr = float(((cos >= best) & (y == 0)).sum() / (y == 0).sum())
    return {
        "tau": round(float(best), 2),
        "tpr": tpr,
        "fpr": fpr,
        "auc": float(roc_auc_score(y, cos)),
        "pairs": len(pairs),
        "positives": int(y.sum()),
    }


def recovered(embed, observations: Sequence[str], facts: Sequence[str], tau: float) -> list[bool]:
    if not observations:
        return []
    if not facts:
        return [False] * len(observations)
    sims = embed(list(observations)) @ embed(list(facts)).T  # unit rows: cosines
    return [bool(row.max() >= tau) for row in sims]


def run(
    data: str | None,
    shared_root: Path,
    out_dir: Path,
    models_dir: Path,
    *,
    embedder: str = "static",
    extractors: dict[str, Extractor] | None = None,
    limit: int | None = None,
    progress: Callable[[str], None] = lambda m: None,
) -> dict:
    path = locate(data, shared_root)
    conversations, _ = load_locomo(path)
    observations = load_observations(path)
    if limit:
        keep = {c.sample_id for c in conversations[:limit]}
        conversations = [c for c in conversations if c.sample_id in keep]
        observations = [o for o in observations if o.sample_id in keep]
    model = make_embedder(embedder, cache_dir=models_dir)
    turn_text = {(c.sample_id, t.dia_id): t.text for c in conversations for t in c.turns}
    progress(f"observations: calibrating tau with {model.name} on {len(observations)} observations")
    calibration = calibrate(model.embed, observations, turn_text)
    tau = calibration["tau"]
    extractors = extractors or {"rules-v1": RuleExtractor()}
    sessions: dict[tuple[str, int], list] = {}
    for o in observations:
        sessions.setdefault((o.sample_id, o.session), []).append(o)
    turns_of = {(c.sample_id, t.session): [] for c in conversations for t in c.turns}
    for c in conversations:
        for t in c.turns:
            turns_of[(c.sample_id, t.session)].append(t)
    rows = []
    arms: dict[str, Callable[[list], list[str]]] = {
        name: (lambda ts, ex=ex: _extract(ex, ts)) for name, ex in extractors.items()
    }
    arms["(reference) every turn verbatim"] = lambda ts: [t.text for t in ts]
    for name, extract in arms.items():
        progress(f"observations: {name}")
        per_session, hits, total, extracted = [], 0, 0, 0
        for key, obs in sorted(sessions.items()):
            facts = extract(turns_of.get(key, []))
            extracted += len(facts)
            found = recovered(model.embed, [o.text for o in obs], facts, tau)
            hits, total = hits + sum(found), total + len(found)
            per_session.append(sum(found) / len(found))
        low, high = bootstrap_ci(per_session, seed=11)
        rows.append(
            {
                "extractor": name,
                "sessions": len(per_session),
                "observations": total,
                "recovered": hits,
                "facts_extracted": extracted,
                "recall": hits / total if total else float("nan"),
                "session_mean": float(np.mean(per_session)) if per_session else float("nan"),
                "session_ci95": [low, high],
            }
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = {
        "data_file": str(path),
        "licence": LICENCE,
        "embedder": model.name,
        "calibration": calibration,
        "conversations": len(conversations),
        "results": rows,
    }
    (out_dir / "observation_recall.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out_dir / "observation_recall.md").write_text(report_markdown(doc))
    doc["report"] = str(out_dir / "observation_recall.md")
    return doc


def _extract(extractor: Extractor, turns: list) -> list[str]:
    if not turns:
        return []
    batch = [Turn(i, "user", t.text, t.speaker, t.dia_id, None) for i, t in enumerate(turns)]
    return [f.value for f in extractor.extract(batch, session_date=turns[0].session_date).facts]


def table_markdown(rows: list[dict]) -> str:
    lines = [
        "| extractor | sessions | observations | recovered | facts extracted | recall (micro) | "
        "mean per session [95% CI] |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        low, high = r["session_ci95"]
        lines.append(
            f"| {r['extractor']} | {r['sessions']} | {r['observations']} | {r['recovered']} | "
            f"{r['facts_extracted']} | {r['recall']:.3f} | {r['session_mean']:.3f} [{low:.3f}, {high:.3f}] |"
        )
    return "\n".join(lines)


def report_markdown(doc: dict) -> str:
    c = doc["calibration"]
    cal = (
        f"tau = {c['tau']} (Youden-optimal on {c['pairs']} labelled pairs: TPR {c['tpr']:.2f}, FPR {c['fpr']:.2f}, "
        f"ROC AUC {c['auc']:.3f})"
        if "tpr" in c
        else c.get("note", "")
    )
    return (
        "\n".join(
            [
                "# Extraction recall against LoCoMo observations",
                "",
                "For each session, the share of the corpus's `observation` facts that an extractor recovers: an "
                "observation counts when a fact extracted from its session is at least tau similar "
                f"({doc['embedder']}).",
                "",
                f"Calibration: {cal}.",
                "",
                table_markdown(doc["results"]),
                "",
                "The reference row treats every turn of the session as an extracted fact: what the threshold admits "
                "when nothing is lost to extraction.",
                "",
                f"Data: {doc['licence']} ({doc['conversations']} conversations).",
            ]
        )
        + "\n"
    )
