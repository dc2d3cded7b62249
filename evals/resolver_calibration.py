"""Calibrating the conflict resolver: what are a judge's confidences worth?

Labelled pairs (``corpora.resolver_pairs``: update / contradiction / compatible by construction)
go through a judge as a one-peer cluster each. Reported:

* precision per confidence band of the verdicts that act: flags (update or contradiction: right
  when the pair is an update or a contradiction) and retirements (update: right when an update),
  written as "flags between 0.90 and 0.95 were right 11 times in 26";
* a reliability diagram (PNG): per confidence bin, how often the verdict's class was right;
* the lowest confidence that reaches a target precision (scikit-learn's precision_recall_curve),
  for the retire and the flag thresholds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from corpora.resolver_pairs import LabelledPair, locomo_pairs, timeline_pairs
from memory_core.resolver.judge import Judge, JudgeRequest, PeerView, RuleJudge

BANDS = ((0.0, 0.90), (0.90, 0.95), (0.95, 0.98), (0.98, 1.01))
ACTING = ("update", "contradiction")


def judge_pairs(judge: Judge, pairs: Sequence[LabelledPair]) -> list[dict]:
    out = []
    for i, pair in enumerate(pairs):
        request = JudgeRequest(
            f"new-{i}",
            pair.new,
            pair.new_date or "unknown",
            (PeerView("p1", f"peer-{i}", f"peer-{i}", pair.peer, 1.0, pair.peer_date or "unknown", "same session"),),
        )
        [j] = judge.judge(request).judgements or [None]
        if j is None:
            continue
        out.append(
            {
                "source": pair.source,
                "label": pair.label,
                "verdict": j.verdict,
                "confidence": j.confidence,
                "same_entity": j.same_entity,
                "same_attribute": j.same_attribute,
            }
        )
    return out


def bands(rows: list[dict], verdicts: Sequence[str], right: Callable[[dict], bool]) -> list[dict]:
    out = []
    for low, high in BANDS:
        chosen = [r for r in rows if r["verdict"] in verdicts and low <= r["confidence"] < high]
        hits = sum(right(r) for r in chosen)
        out.append(
            {
                "band": f"{low:.2f}-{min(high, 1.0):.2f}",
                "right": hits,
                "total": len(chosen),
                "precision": hits / len(chosen) if chosen else None,
            }
        )
    return out


def threshold_for(rows: list[dict], verdicts: Sequence[str], positive: Sequence[str], target: float) -> float | None:
    """The lowest confidence at which the acting verdicts reach ``target`` precision."""
    from sklearn.metrics import precision_recall_curve

    y = np.array([r["label"] in positive for r in rows], dtype=int)
    score = np.array([r["confidence"] if r["verdict"] in verdicts else 0.0 for r in rows])
    if y.sum() == 0 or (score > 0).sum() == 0:
        return None
    precision, _, cut = precision_recall_curve(y, score)
    for p, t in zip(precision[:-1], cut):
        if p >= target and t > 0:
            return round(float(t), 3)
    return None


def reliability_png(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    edges = np.linspace(0.8, 1.0, 11)
    xs, ys, ns = [], [], []
    for low, high in zip(edges[:-1], edges[1:]):
        chosen = [r for r in rows if low <= r["confidence"] < high + (1e-9 if high == 1.0 else 0)]
        if not chosen:
            continue
        ok = [(r["verdict"] in ACTING) == (r["label"] in ACTING) for r in chosen]
        xs.append(float(np.mean([r["confidence"] for r in chosen])))
        ys.append(float(np.mean(ok)))
        ns.append(len(chosen))
    fig, ax = plt.subplots(figsize=(5, 4.2))
    ax.plot([0.8, 1.0], [0.8, 1.0], linestyle="--", color="grey", label="perfectly calibrated")
    biggest = max(ns) if ns else 1
    ax.scatter(xs, ys, s=[15 + 250 * n / biggest for n in ns], color="tab:blue", alpha=0.7, label="judge (area: pairs)")
    for x, y, n in zip(xs, ys, ns):
        ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(6, -12), fontsize=8)
    ax.plot(xs, ys, color="tab:blue")
    ax.set_xlabel("stated confidence")
    ax.set_ylabel("share of verdicts in the right class")
    ax.set_xlim(0.8, 1.0)
    ax.set_ylim(0, 1.02)
    ax.set_title("Resolver judge reliability")
    ax.legend(loc="lower right", fontsize=8, markerscale=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(
    data: str | None,
    shared_root: Path,
    out_dir: Path,
    *,
    judge: Judge | None = None,
    target: float = 0.95,
    progress: Callable[[str], None] = lambda m: None,
) -> dict:
    judge = judge or RuleJudge()
    pairs = timeline_pairs()
    locomo_note = None
    locomo = Path(data) if data else shared_root / "corpora" / "locomo" / "locomo_dev.json"
    if locomo.is_dir():
        locomo = locomo / "locomo_dev.json"
    if locomo.exists():
        pairs += locomo_pairs(locomo)
    else:
        locomo_note = f"LoCoMo observations not found at {locomo}: timeline pairs only"
        progress(locomo_note)
    progress(f"resolver calibration: {len(pairs)} labelled pairs through {judge.name}")
    rows = judge_pairs(judge, pairs)
    flags = bands(rows, ACTING, lambda r: r["label"] in ACTING)
    retires = bands(rows, ("update",), lambda r: r["label"] == "update")
    clears = bands(rows, ("elaboration", "restatement", "related", "unrelated"), lambda r: r["label"] == "compatible")
    out_dir.mkdir(parents=True, exist_ok=True)
    png = out_dir / "resolver_reliability.png"
    reliability_png(rows, png)
    labels: dict[str, int] = {}
    for r in rows:
        labels[r["label"]] = labels.get(r["label"], 0) + 1
    doc = {
        "judge": judge.name,
        "pairs": len(rows),
        "labels": labels,
        "target_precision": target,
        "flag_bands": flags,
        "retire_bands": retires,
        "clear_bands": clears,
        "retire_threshold": threshold_for(rows, ("update",), ("update",), target),
        "flag_threshold": threshold_for(rows, ACTING, ACTING, target),
        "locomo": locomo_note or str(locomo),
        "plot": str(png),
    }
    (out_dir / "resolver_calibration.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out_dir / "resolver_calibration.md").write_text(report_markdown(doc))
    doc["report"] = str(out_dir / "resolver_calibration.md")
    return doc


def sentences(doc: dict) -> list[str]:
    out = []
    for name, rows in (
        ("flags", doc["flag_bands"]),
        ("retirements", doc["retire_bands"]),
        ("clears", doc["clear_bands"]),
    ):
        for b in rows:
            if b["total"]:
                out.append(
                    f"{name} between {b['band'].replace('-', ' and ')} were right {b['right']} times in {b['total']}"
                )
    return out


def report_markdown(doc: dict) -> str:
    lines = [
        "# Conflict resolver calibration",
        "",
        f"Judge: {doc['judge']}; {doc['pairs']} labelled pairs "
        f"({', '.join(f'{k} {v}' for k, v in doc['labels'].items())}).",
        "",
        "| action | band | right | total | precision |",
        "|---|---|---:|---:|---:|",
    ]
    for name, rows in (("flag", doc["flag_bands"]), ("retire", doc["retire_bands"]), ("clear", doc["clear_bands"])):
        for b in rows:
            p = "-" if b["precision"] is None else f"{b['precision']:.2f}"
            lines.append(f"| {name} | {b['band']} | {b['right']} | {b['total']} | {p} |")
    lines += [
        "",
        *[f"- {s}." for s in sentences(doc)],
        "",
        f"Lowest confidence reaching precision {doc['target_precision']}: retire "
        f"{doc['retire_threshold']}, flag {doc['flag_threshold']} (the defaults are 0.98 and 0.95).",
        "",
        "![reliability](resolver_reliability.png)",
        "",
        f"LoCoMo pairs: {doc['locomo']}.",
    ]
    return "\n".join(lines) + "\n"
