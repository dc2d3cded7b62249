"""Per-span versus whole-batch extraction: does the extractor resolve a mention to its antecedent?

Each item is a mention in a later turn whose antecedent name is in an earlier turn (MuDoCo's
links, and a synthetic set whose answers are known by construction). Both arms run the harvest
consolidator itself on a scratch home: the item's earlier turns are banked as one span and
consolidated, then the mention's turn is banked as the next span and consolidated. *Per-span*
banks the mention's span alone (what a consolidator that reads each span by itself sees);
*whole-batch* banks both spans of one session (what the consolidator reads the later span after).
The extractor the consolidator calls is a probe: it records whether the rule-based resolver
(``memory_core.extraction.coref.resolve``), reading the turns it was handed up to the mention,
names the antecedent. The rule extractor writes facts only for the few patterns it knows, which
no MuDoCo item states, so judging by written facts would judge nothing. Outcomes are paired per
item: accuracy with a bootstrap interval per arm, the discordant counts, and the exact McNemar
p-value.
"""

from __future__ import annotations

import json
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Callable, Sequence

from corpora.coref import MUDOCO_LICENCE, CorefItem, locate_mudoco, mudoco_items, synthetic_items
from memory_core import Identity, Memory
from memory_core.extraction.coref import matches, resolve
from memory_core.extraction.harvest import HarvestBridge
from memory_core.extraction.model import ExtractorOutput, Turn

from .metrics import bootstrap_ci, mcnemar_exact

ARMS = ("per_span", "whole_batch")
TENANT = "coref-eval"
HOME_ITEMS = 250  # items per scratch home: the queue keeps every job it ran, and each claim reads it


class ResolvingProbe:
    """An extractor that proposes no fact: for each item whose mention turn it is handed, it
    resolves the mention against the turns handed before it and records whether that names the
    antecedent."""

    name = "coref-probe"

    def __init__(self, items: dict[str, CorefItem]) -> None:
        self.items = items  # the mention turn's id -> its item
        self.outcomes: dict[str, bool] = {}

    def extract(self, turns: Sequence[Turn], *, session_date: datetime | None) -> ExtractorOutput:
        for n, turn in enumerate(turns):
            item = self.items.get(turn.turn_id)
            if item is not None:
                before = [t.content for t in turns[:n]]
                resolved = resolve("\n".join([*before, turn.content[: item.mention_start]]), item.mention)
                self.outcomes[turn.turn_id] = any(matches(resolved, gold) for gold in item.antecedents)
        return ExtractorOutput(())


def _say(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def outcomes(items: Sequence[CorefItem], arm: str, *, per_home: int = HOME_ITEMS) -> list[bool]:
    """Each item's outcome in ``arm``, through the harvest bridge and the queue's consolidator."""
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; expected one of {ARMS}")
    return [hit for at in range(0, len(items), per_home) for hit in _outcomes(items[at : at + per_home], arm)]


def _outcomes(items: Sequence[CorefItem], arm: str) -> list[bool]:
    mention_ids = {f"item-{n}:g2:0": item for n, item in enumerate(items)}
    probe = ResolvingProbe(mention_ids)
    with tempfile.TemporaryDirectory(prefix="coref-") as home, Memory.open(home) as memory:
        memory.extractor = probe
        bridges = [
            HarvestBridge(memory, Identity(tenant=TENANT, user=f"u{n}", agent="eval"), harvest_to_memory=True)
            for n in range(len(items))
        ]
        done = 0
        for spans in ("earlier", "mention"):
            for n, (item, bridge) in enumerate(zip(items, bridges)):
                if spans == "mention":
                    bridge.on_boundary("compaction", [_say(item.turns[-1])], generation=2, session=f"item-{n}")
                elif arm == "whole_batch" and len(item.turns) > 1:
                    turns = [_say(t) for t in item.turns[:-1]]
                    bridge.on_boundary("compaction", turns, generation=1, session=f"item-{n}")
            done += memory.run_extraction_queue(worker="coref-eval", limit=len(items) + 1)["done"]
    banked = sum(b.banked for b in bridges)
    if done != banked or banked != len(items) + sum(arm == "whole_batch" and len(i.turns) > 1 for i in items):
        events = [e for b in bridges for e in b.events][:3]
        raise RuntimeError(f"{banked} spans banked, {done} consolidated: {events}")
    return [probe.outcomes.get(turn_id, False) for turn_id in mention_ids]


def outcome(item: CorefItem, arm: str) -> bool:
    return outcomes([item], arm)[0]


def compare(items: Sequence[CorefItem]) -> dict:
    return paired(outcomes(items, "per_span"), outcomes(items, "whole_batch"))


def paired(span: Sequence[bool], batch: Sequence[bool]) -> dict:
    """The table row of paired outcomes (per-span, whole-batch) of the same items."""
    test = mcnemar_exact(batch, span)
    row = {"items": len(span)}
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
        span, batch = outcomes(every, "per_span"), outcomes(every, "whole_batch")
        for domain in sorted({i.corpus for i in every}):
            at = [n for n, i in enumerate(every) if i.corpus == domain]
            tables[domain] = paired([span[n] for n in at], [batch[n] for n in at])
        tables["mudoco:all"] = paired(span, batch)
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = {
        "tables": tables,
        "mudoco_skipped": skipped,
        "licence": MUDOCO_LICENCE if not skipped else None,
        "resolver": "memory_core.extraction.coref.resolve (rule-based), on what the harvest consolidator "
        "hands its extractor",
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
        "Each item is a mention in a later turn whose antecedent name is in an earlier turn. Both arms run "
        "the harvest consolidator: the mention's turn is banked as a span and consolidated, alone (per-span) "
        "or after the item's earlier turns were banked and consolidated as the session's previous span "
        "(whole-batch). The resolver reads the turns the consolidator hands its extractor, up to the mention. "
        "Accuracy with a 95% percentile bootstrap interval (2,000 resamples); McNemar's exact test on the "
        "paired outcomes.",
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
