"""The evaluation reports a memory home holds (``<home>/reports/``), read back for people:
the eval_report notebook shows these, naming each one's data file and configuration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPORTS = {
    "locomo": ("locomo", "locomo_results.json", "memcore eval locomo"),
    "coref": ("coref", "coref.json", "memcore eval coref"),
    "observations": ("observations", "observation_recall.json", "memcore eval observations"),
    "resolver": ("resolver", "resolver_calibration.json", "memcore eval resolver"),
}


def load_reports(home: Path) -> dict[str, dict[str, Any]]:
    """Each report found, with ``path`` and ``command`` added; a missing one says how to make it."""
    out: dict[str, dict[str, Any]] = {}
    for name, (folder, file, command) in REPORTS.items():
        path = Path(home) / "reports" / folder / file
        if path.exists():
            out[name] = {**json.loads(path.read_text()), "path": str(path), "command": command}
        else:
            out[name] = {"missing": True, "path": str(path), "command": command}
    return out


def locomo_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """recall@k per run, and recall@10 per question category (the paper's numbering)."""
    rows = []
    for r in report.get("results", []):
        row = {"run": r["name"], "embedder": r["embedder"], "recipe": r["recipe"], "questions": r["questions"]}
        row.update({f"R@{k}": r[f"r@{k}"] for k in (5, 10, 25, 50)})
        row.update({f"R@10 cat {c}": r.get(f"r@10_cat{c}") for c in (1, 2, 3, 4, 5)})
        rows.append(row)
    return rows


def coref_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "corpus": name,
            "items": t["items"],
            "per-span acc": round(t["per_span"]["accuracy"], 3),
            "whole-batch acc": round(t["whole_batch"]["accuracy"], 3),
            "batch-only right": t["batch_only_right"],
            "span-only right": t["span_only_right"],
            "McNemar p": f"{t['mcnemar_p']:.2g}",
        }
        for name, t in report.get("tables", {}).items()
    ]


def calibration_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"action": action, **band}
        for action, key in (("flag", "flag_bands"), ("retire", "retire_bands"), ("clear", "clear_bands"))
        for band in report.get(key, [])
        if band["total"]
    ]
