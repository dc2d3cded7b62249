"""Consolidation on LoCoMo: how many live rows it removes, and what that costs retrieval.

The dev conversations are written verbatim (one note per turn, the harness's tuned path), indexed
with the embedder under test, and every question is asked through ``recall`` with its default
recipe: recall@10 before. Each conversation's scope is then consolidated (offline rule merger)
and the questions asked again: recall@10 after, and the live rows removed.

A summary answers for the turns it merged: a hit on a summary covers every source its lineage
names, and still takes one of the k places. recall@k is the share of a question's evidence turns
covered by the top k hits. The paired outcome (all evidence covered in the top 10) is compared
with McNemar's exact test.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from corpora.locomo import Conversation, load_locomo, locate
from memory_core import Identity, Memory
from memory_core.adapters.embedders import make_embedder

from .locomo import TENANT, seeded_ids, write_conversations
from .metrics import bootstrap_ci, mcnemar_exact

K = 10
Progress = Callable[[str], None]


def covered(memory: Memory, conversations: Sequence[Conversation], k: int = K) -> list[dict[str, Any]]:
    """Per question: the evidence share covered by the top ``k`` hits (a summary covers its sources)."""
    out = []
    for conv in conversations:
        tool = memory.for_run(Identity(tenant=TENANT, user=conv.sample_id))
        sources: dict[str, set[str]] = {}
        for q in conv.questions:
            if not q.evidence:
                continue
            found = tool.recall(q.question, k=k, participants=conv.speakers).hits[:k]
            turns: set[str] = set()
            for hit in found:
                if hit.key not in sources:
                    rows = tool.lineage(hit.key)
                    sources[hit.key] = {r["source_key"] for r in rows if r["key"] == hit.key} or {hit.key}
                turns |= sources[hit.key]
            wanted = set(q.evidence)
            out.append({"sample_id": conv.sample_id, "recall": len(wanted & turns) / len(wanted)})
    return out


def live_rows(memory: Memory, conversations: Sequence[Conversation]) -> int:
    return sum(len(memory.for_run(Identity(tenant=TENANT, user=c.sample_id)).list()) for c in conversations)


def measure(
    conversations: Sequence[Conversation],
    work_dir: Path,
    models_dir: Path,
    *,
    embedder: str = "static",
    min_cosine: float | None = None,
    progress: Progress = lambda m: None,
) -> dict[str, Any]:
    home = work_dir / "consolidation-home"
    if home.exists():
        shutil.rmtree(home)
    with Memory.open(home, new_id=seeded_ids(), embedder=make_embedder(embedder, cache_dir=models_dir)) as memory:
        started = time.perf_counter()
        write_conversations(memory, conversations, progress)
        memory.flush()
        progress(f"wrote and indexed in {time.perf_counter() - started:.0f}s")
        before_rows, before = live_rows(memory, conversations), covered(memory, conversations)
        started = time.perf_counter()
        runs = []
        for conv in conversations:
            tool = memory.for_run(Identity(tenant=TENANT, user=conv.sample_id, agent="consolidation"))
            runs.append(tool.consolidate(min_cosine=min_cosine))
            progress(f"{conv.sample_id}: {runs[-1].merged} clusters merged")
        seconds = time.perf_counter() - started
        memory.flush()
        after_rows, after = live_rows(memory, conversations), covered(memory, conversations)
    hits_before = [q["recall"] == 1.0 for q in before]
    hits_after = [q["recall"] == 1.0 for q in after]
    test = mcnemar_exact(hits_after, hits_before)
    r_before = 100 * sum(q["recall"] for q in before) / len(before)
    r_after = 100 * sum(q["recall"] for q in after) / len(after)
    low, high = bootstrap_ci([a["recall"] - b["recall"] for a, b in zip(after, before)], seed=7)
    outcomes: dict[str, int] = {}
    for run in runs:
        for c in run.clusters:
            outcomes[c.outcome] = outcomes.get(c.outcome, 0) + 1
    return {
        "embedder": embedder,
        "min_cosine": min_cosine,
        "questions": len(before),
        "live_rows_before": before_rows,
        "live_rows_after": after_rows,
        "rows_removed_pct": round(100 * (before_rows - after_rows) / before_rows, 2),
        "clusters": outcomes,
        "consolidate_seconds": round(seconds, 1),
        f"r@{K}_before": round(r_before, 2),
        f"r@{K}_after": round(r_after, 2),
        f"r@{K}_change": round(r_after - r_before, 2),
        f"r@{K}_change_ci95": [round(100 * low, 2), round(100 * high, 2)],
        "mcnemar": {"after_only": test["only_a"], "before_only": test["only_b"], "p_value": test["p_value"]},
    }


def run(
    data: str | None,
    shared_root: Path,
    out_dir: Path,
    models_dir: Path,
    *,
    embedder: str = "static",
    limit: int | None = None,
    progress: Progress = lambda m: None,
) -> dict[str, Any]:
    conversations, _ = load_locomo(locate(data, shared_root))
    conversations = conversations[:limit] if limit else conversations
    doc = measure(conversations, out_dir / "work", models_dir, embedder=embedder, progress=progress)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "consolidation.json").write_text(json.dumps(doc, indent=2) + "\n")
    doc["report"] = str(out_dir / "consolidation.json")
    return doc


def line(doc: dict[str, Any]) -> str:
    return (
        f"live rows {doc['live_rows_before']} -> {doc['live_rows_after']} (-{doc['rows_removed_pct']}%); "
        f"R@{K} {doc[f'r@{K}_before']} -> {doc[f'r@{K}_after']} ({doc[f'r@{K}_change']:+.2f}, "
        f"95% CI {doc[f'r@{K}_change_ci95']}); McNemar p={doc['mcnemar']['p_value']:.3g}"
    )
