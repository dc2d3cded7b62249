"""`memcore eval locomo`: run the LoCoMo recall evaluation and write its report."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Sequence

from corpora.locomo import load_locomo, locate

from .locomo import DEFAULT_SPECS, RunSpec, SpecResult, paired_tests, plot_recall, report_markdown, run_locomo
from .locomo_ablation import ablation_markdown, ablation_rows
from .locomo_calibration import calibration_markdown, fit_calibration, plot_reliability

SPEC_NAMES = {s.name: s for s in DEFAULT_SPECS}


def parse_specs(text: str | None) -> list[RunSpec]:
    if not text:
        return list(DEFAULT_SPECS)
    specs = []
    for item in text.split(","):
        item = item.strip()
        if item in SPEC_NAMES:
            specs.append(SPEC_NAMES[item])
        elif ":" in item:  # embedder:recipe
            embedder, recipe = item.split(":", 1)
            specs.append(RunSpec(item, embedder, recipe))
        else:
            raise ValueError(f"unknown run {item!r}; use one of {', '.join(SPEC_NAMES)} or EMBEDDER:RECIPE")
    return specs


def evaluate(
    data: str | None,
    shared_root: Path,
    out_dir: Path,
    models_dir: Path,
    specs: Sequence[RunSpec],
    limit: int | None = None,
    progress=None,
) -> dict[str, Any]:
    data_file = locate(data, shared_root)
    conversations, cleaning = load_locomo(data_file)
    if limit:
        conversations = conversations[:limit]
    with tempfile.TemporaryDirectory(prefix="memcore-locomo-") as work:
        results: list[SpecResult] = run_locomo(conversations, specs, Path(work), models_dir, progress)
    out_dir.mkdir(parents=True, exist_ok=True)
    plot_recall(results, out_dir / "locomo_recall.png")
    fits = [f for f in (fit_calibration(r) for r in results) if f is not None]
    markdown = report_markdown(results, data_file, cleaning.to_dict(), "locomo_recall.png")
    markdown += "\n".join(ablation_markdown(results)) + "\n"
    if fits:
        plot_reliability(fits, out_dir / "locomo_reliability.png")
        markdown += "\n".join(calibration_markdown(fits, "locomo_reliability.png")) + "\n"
        folder = out_dir / "calibrations"  # install one with `memcore calibration install FILE`
        folder.mkdir(exist_ok=True)
        for f in fits:
            name = f.run.replace("(", "-").replace(")", "")
            (folder / f"{name}.json").write_text(json.dumps(f.calibration.to_dict(), indent=2) + "\n")
    (out_dir / "locomo_report.md").write_text(markdown)
    doc = {
        "data_file": str(data_file),
        "licence": "CC BY-NC 4.0",
        "conversations": len(conversations),
        "cleaning": cleaning.to_dict(),
        "results": [r.summary() for r in results],
        "paired_tests_hits_at_10": paired_tests(results),
        "calibration": [f.summary() for f in fits],
        "ablation": {r.spec.name: ablation_rows(r.per_question) for r in results if r.spec.ablate},
        "report": str(out_dir / "locomo_report.md"),
        "plot": str(out_dir / "locomo_recall.png"),
    }
    (out_dir / "locomo_results.json").write_text(json.dumps(doc, indent=2))
    with open(out_dir / "locomo_per_question.jsonl", "w") as fh:
        for r in results:
            for q in r.per_question:
                fh.write(json.dumps({"run": r.spec.name, **{k: v for k, v in q.items() if k != "ranking"}}) + "\n")
    return doc
