"""Per-span versus whole-batch extraction: does the extractor resolve a mention to its antecedent?

Each item is a mention in a later turn whose antecedent name is in an earlier turn (MuDoCo's
links, and a synthetic set whose answers are known by construction). The two arms give the same
resolver different text: *per-span* only the mention's own turn (what an extractor called once
per span sees), *whole-batch* every turn of the dialog up to the mention (what the harvest
consolidator sees). Outcomes are paired per item: accuracy with a bootstrap interval per arm,
the discordant counts, and the exact McNemar p-value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

from corpora.coref import MUDOCO_LICENCE, CorefItem, locate_mudoco, mudoco_items, synthetic_items
from memory_core.extraction.coref import matches, resolve

from .metrics import bootstrap_ci, mcnemar_exact

ARMS = ("per_span", "whole_batch")


def outcome(item: CorefItem, arm: str) -> bool:
    last = item.turns[-1][: item.mention_start]
    context = last if arm == "per_span" else "\n".join([*item.turns[:-1], last])
    resolved = resolve(context, item.mention)
    return any(matches(resolved, gold) for gold in item.antecedents)


def compare(items: Sequence[CorefItem]) -> dict:
    span = [outcome(i, "per_span") for i in items]
    batch = [outcome(i, "whole_batch") for i in items]
    test = mcnemar_exact(batch, span)
    row = {"items": len(items)}
    for arm, results in (("per_span", span), ("whole_batch", batch)):
        low, high = bootstrap_ci([float(r) for r in results], seed=7)
        row[arm] = {"accuracy": sum(results) / len(results) if results else float("nan"), "ci95": [low, high]}
    row["batch_only_right"], row["span_only_right"] = test["only_a"], test["only_b"]
    row["mcnemar_p"] = test["p_value"]
    return row


def run(
    data: str | None,
    shared_root: Path,
    out_dir: Path,
    *,
    limit: int | None = None,
    progress: Callable[[str], None] = lambda m: None,
) -> dict:
    """The experiment on the synthetic corpus and, when found, on MuDoCo (per domain and overall)."""
    tables: dict[str, dict] = {}
    progress("coref: synthetic corpus")
    tables["synthetic"] = compare(synthetic_items())
    skipped = None
    try:
        folder = locate_mudoco(data, shared_root)
    except FileNotFoundError as exc:
        skipped = str(exc)
        progress(f"coref: MuDoCo skipped: {exc}")
    else:
        every = mudoco_items(folder, limit=limit)
        progress(f"coref: MuDoCo, {len(every)} items")
        for domain in sorted({i.corpus for i in every}):
            tables[domain] = compare([i for i in every if i.corpus == domain])
        tables["mudoco:all"] = compare(every)
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = {
        "tables": tables,
        "mudoco_skipped": skipped,
        "licence": MUDOCO_LICENCE if not skipped else None,
        "resolver": "memory_core.extraction.coref.resolve (rule-based)",
    }
    (out_dir / "coref.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out_dir / "coref_report.md").write_text(report_markdown(doc))
    doc["report"] = str(out_dir / "coref_report.md")
    return doc


def _pct(arm: dict) -> str:
    low, high = arm["ci95"]
    return f"{arm['accuracy']:.2f} [{low:.2f}, {high:.2f}]"


def table_markdown(tables: dict[str, dict]) -> str:
    lines = [
        "| corpus | items | per-span acc [95% CI] | whole-batch acc [95% CI] | batch-only right | "
        "span-only right | McNemar exact p |",
        "|---|---:|---|---|---:|---:|---:|",
    ]
    for name, row in tables.items():
        lines.append(
            f"| {name} | {row['items']} | {_pct(row['per_span'])} | {_pct(row['whole_batch'])} | "
            f"{row['batch_only_right']} | {row['span_only_right']} | {row['mcnemar_p']:.2g} |"
        )
    return "\n".join(lines)


def report_markdown(doc: dict) -> str:
    parts = [
        "# Per-span versus whole-batch extraction: coreference",
        "",
        "Each item is a mention in a later turn whose antecedent name is in an earlier turn. Per-span: the "
        "resolver sees only the mention's turn; whole-batch: the dialog up to the mention. Accuracy with a "
        "95% percentile bootstrap interval (2,000 resamples); McNemar's exact test on the paired outcomes.",
        "",
        table_markdown(doc["tables"]),
        "",
    ]
    if doc["mudoco_skipped"]:
        parts.append(f"MuDoCo was skipped: {doc['mudoco_skipped']}")
    else:
        parts.append(f"Data: {doc['licence']}.")
    parts.append(f"Resolver: {doc['resolver']}.")
    return "\n".join(parts) + "\n"
