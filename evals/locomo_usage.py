"""Does the usage prior help? LoCoMo dialog-level evidence recall@10, paired, on held-out questions.

Protocol (docs/benchmarks.md, "Usage prior on LoCoMo", 2026-12-03). The turns are written through
the documented path (``locomo.write_documented``) and indexed once. Each conversation's questions
with evidence are split in two halves in the file's order. The first half is asked through
``recall`` with the default recipe, as a caller would, and each of its top-10 hits that is an
evidence turn gets ``retrieval_feedback(trace_id, ref, "useful")`` (variant ``useful``); the
variant ``useful+not_useful`` also says ``not_useful`` of every other top-10 hit. The home is
folded (``Memory.fold_usage``). Then the second half is asked with the default recipe and with
``hybrid_usage``; recall@10 per question, and McNemar's exact test on hits@10 (all evidence in
the top 10). The first half asked again after the fold is reported beside it, labelled: it is
not held out, it shows what the prior does when the signal is about the very question.

    python -m evals.locomo_usage --models /tmp/chome/models --out /tmp/locomo-usage
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from corpora.locomo import Conversation, Question, load_locomo, locate
from memory_core import Identity, Memory
from memory_core.adapters.embedders import make_embedder

from .locomo import TENANT, seeded_ids, write_documented
from .metrics import bootstrap_ci, mcnemar_exact, recall_at_k

USAGE_RECIPE = "hybrid_usage"
VARIANTS = ("useful", "useful+not_useful")
K = 10
Progress = Callable[[str], None]


def split_questions(conversation: Conversation) -> tuple[list[Question], list[Question]]:
    """A conversation's questions with evidence, in the file's order: the first half (asked, with
    feedback) and the second (held out)."""
    asked = [q for q in conversation.questions if q.evidence]
    cut = len(asked) // 2
    return asked[:cut], asked[cut:]


def _tool(memory: Memory, conversation: Conversation):
    return memory.for_run(Identity(tenant=TENANT, user=conversation.sample_id), origin="evals.locomo_usage")


def give_feedback(memory: Memory, conversations: Sequence[Conversation], variant: str) -> dict[str, int]:
    """Ask every first-half question with the default recipe and say which top-10 hits helped."""
    counts = {"questions": 0, "useful": 0, "not_useful": 0}
    for conv in conversations:
        tool = _tool(memory, conv)
        for q in split_questions(conv)[0]:
            found = tool.recall(q.question, k=K)
            counts["questions"] += 1
            for hit in found.hits:
                verdict = "useful" if hit.key in q.evidence else "not_useful"
                if verdict == "not_useful" and variant == "useful":
                    continue
                tool.retrieval_feedback(found.trace_id, f"{hit.kind.value}:{hit.fact_id}", verdict)
                counts[verdict] += 1
    return counts


def measure(memory: Memory, conversations: Sequence[Conversation], half: int) -> list[dict[str, Any]]:
    """Per question of ``half`` (0: the first, 1: the held-out second): recall@10 with the default
    recipe and with the usage recipe, and the usage recipe's read time."""
    rows = []
    for conv in conversations:
        tool = _tool(memory, conv)
        for q in split_questions(conv)[half]:
            default = tool.recall(q.question, k=50)
            usage = tool.recall(q.question, k=50, recipe=USAGE_RECIPE)
            touched = any(h.terms.get("usage_prior") for h in usage.hits[:K])
            rows.append(
                {
                    "sample_id": conv.sample_id,
                    "category": q.category,
                    "evidence": list(q.evidence),
                    "default": recall_at_k([h.key for h in default.hits], q.evidence, K),
                    "usage": recall_at_k([h.key for h in usage.hits], q.evidence, K),
                    "touched": touched,
                    "usage_read_ms": usage.timings_ms.get("usage", 0.0),
                    "default_ms": default.timings_ms["total"],
                    "usage_ms": usage.timings_ms["total"],
                }
            )
    return rows


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    a, b = [r["default"] for r in rows], [r["usage"] for r in rows]
    test = mcnemar_exact([x == 1.0 for x in a], [x == 1.0 for x in b])
    deltas = [y - x for x, y in zip(a, b)]
    return {
        "questions": len(rows),
        "r@10_default": round(100 * statistics.fmean(a), 2),
        "r@10_usage": round(100 * statistics.fmean(b), 2),
        "delta_ci95": [round(100 * v, 2) for v in bootstrap_ci(deltas)],
        "hits@10_default": sum(x == 1.0 for x in a),
        "hits@10_usage": sum(x == 1.0 for x in b),
        "better": sum(d > 0 for d in deltas),
        "worse": sum(d < 0 for d in deltas),
        "touched": sum(r["touched"] for r in rows),
        **test,
        "usage_read_ms_median": round(statistics.median(r["usage_read_ms"] for r in rows), 2),
        "total_ms_median_default": round(statistics.median(r["default_ms"] for r in rows), 1),
        "total_ms_median_usage": round(statistics.median(r["usage_ms"] for r in rows), 1),
    }


def overlap(conversations: Sequence[Conversation]) -> dict[str, float]:
    """How often a held-out question's evidence was evidence of an asked one (the most a prior on
    what helped before can reach)."""
    shared = total = 0
    for conv in conversations:
        first, second = split_questions(conv)
        seen = {e for q in first for e in q.evidence}
        total += len(second)
        shared += sum(1 for q in second if seen & set(q.evidence))
    return {"held_out": total, "sharing_evidence": shared, "share": round(100 * shared / total, 1) if total else 0.0}


def run(
    conversations: Sequence[Conversation], work: Path, models_dir: Path, embedder: str, say: Progress
) -> dict[str, Any]:
    base = work / "base"
    with Memory.open(base, new_id=seeded_ids()) as memory:
        write_documented(memory, conversations, say)
    with Memory.open(base, embedder=make_embedder(embedder, cache_dir=models_dir)) as memory:
        started = time.perf_counter()
        memory.reindex()
        say(f"indexed in {time.perf_counter() - started:.1f}s")
    out: dict[str, Any] = {"embedder": embedder, "overlap": overlap(conversations), "variants": {}}
    for variant in VARIANTS:
        home = work / variant.replace("+", "-")
        shutil.copytree(base, home)
        with Memory.open(home, embedder=make_embedder(embedder, cache_dir=models_dir)) as memory:
            fed = give_feedback(memory, conversations, variant)
            folded = memory.fold_usage()
            say(f"{variant}: feedback {fed}; fold { ({k: v for k, v in folded.items() if k != 'fact_ids'}) }")
            held = measure(memory, conversations, 1)
            entry = {"feedback": fed, "fold": folded, "held_out": summary(held)}
            if variant == "useful":
                entry["asked_again"] = summary(measure(memory, conversations, 0))
            out["variants"][variant] = entry
            say(f"{variant}: held out {entry['held_out']}")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--shared", default="/work/shared")
    parser.add_argument("--models", required=True)
    parser.add_argument("--embedder", default="static")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    conversations, _ = load_locomo(locate(args.data, Path(args.shared)))
    with tempfile.TemporaryDirectory(prefix="memcore-locomo-usage-") as work:
        doc = run(conversations, Path(work), Path(args.models), args.embedder, print)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "locomo_usage.json").write_text(json.dumps(doc, indent=2, default=str))
    print(json.dumps(doc, indent=2, default=str))


if __name__ == "__main__":
    main()
