"""Relevance calibration fitted on LoCoMo: P(a hit is evidence) from its scores, per run.

For each run, every question's top-10 hits are labelled (is the hit one of the question's
evidence turns?) and described by ``memory_core.retrieval.calibration.features_of``. A logistic
model (Platt scaling over those features, scikit-learn) is fitted on the tune half of the
conversations and judged on the held half: Brier score beside the base-rate baseline, and a
reliability table and plot. The threshold a tenant gets by default is set on the tune half so
that about ``MISS_RATE`` of the questions whose evidence *is* in the top 10 would abstain; the
held half reports the rate it really gives.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from memory_core.retrieval.calibration import FEATURES, Calibration
from memory_core.retrieval.recipes import DEFAULT_RECIPE

from .figures import saved_plot
from .locomo import SpecResult, halves
from .locomo_tuned import CROSS_FITTED

N = len(FEATURES)
MISS_RATE = 0.05  # of answerable questions the default threshold may turn away (on the tune half)
BINS = 10


@dataclass(frozen=True)
class CalibrationFit:
    run: str
    calibration: Calibration
    brier_held: float  # every top-10 hit of the held half
    brier_baseline_held: float  # predicting the tune half's base rate for every hit
    top_brier_held: float  # the top hit only: what abstention reads
    top_brier_baseline_held: float  # ... predicting the tune half's top-hit base rate
    abstain_rate_held: float  # share of held questions that would abstain
    false_abstain_rate_held: float  # ... among those whose evidence is in the top 10
    reliability: list[dict[str, float]]  # held half, per probability bin

    def summary(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "calibration": self.calibration.to_dict(),
            "brier_held": round(self.brier_held, 4),
            "brier_baseline_held": round(self.brier_baseline_held, 4),
            "top_brier_held": round(self.top_brier_held, 4),
            "top_brier_baseline_held": round(self.top_brier_baseline_held, 4),
            "abstain_rate_held": round(self.abstain_rate_held, 4),
            "false_abstain_rate_held": round(self.false_abstain_rate_held, 4),
            "reliability": self.reliability,
        }


def _matrix(rows: Sequence[dict[str, Any]], top_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    scored = [s for q in rows for s in (q["scored"][:1] if top_only else q["scored"])]
    if not scored:
        return np.zeros((0, N)), np.zeros(0)
    data = np.asarray(scored, dtype=float)
    return data[:, :N], data[:, N]


def _probabilities(calibration: Calibration, x: np.ndarray) -> np.ndarray:
    z = calibration.intercept + x @ np.asarray(calibration.coef)
    return 1.0 / (1.0 + np.exp(-z))


def reliability(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> list[dict[str, float]]:
    """Per equal-width probability bin: hits, mean predicted probability, observed rate."""
    out = []
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(p, edges[1:-1]), 0, bins - 1)
    for b in range(bins):
        mask = which == b
        if mask.any():
            out.append(
                {
                    "bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}",
                    "hits": int(mask.sum()),
                    "predicted": round(float(p[mask].mean()), 4),
                    "observed": round(float(y[mask].mean()), 4),
                }
            )
    return out


def fit_calibration(result: SpecResult) -> CalibrationFit | None:
    """The run's calibration, fitted on its tune half (None: a half has no labelled hits of both
    kinds, or the run's halves were asked of two embedders, so no one embedder's scores are fitted)."""
    from sklearn.linear_model import LogisticRegression

    if result.spec.embedder == CROSS_FITTED:
        return None

    tune_ids, held_ids = halves(result.per_question)
    tune = [q for q in result.per_question if q["sample_id"] in tune_ids and q.get("scored")]
    held = [q for q in result.per_question if q["sample_id"] in held_ids and q.get("scored")]
    x, y = _matrix(tune)
    x_held, y_held = _matrix(held)
    if len(set(y)) < 2 or len(y_held) == 0:
        return None
    model = LogisticRegression(C=1.0, max_iter=1000).fit(x, y)
    recipe = result.spec.recipe or DEFAULT_RECIPE
    provisional = Calibration(
        result.embedder_name or result.spec.embedder,
        recipe,
        tuple(float(c) for c in model.coef_[0]),
        float(model.intercept_[0]),
        0.0,
    )
    threshold = _threshold(provisional, tune)
    p_held = _probabilities(provisional, x_held)
    x_top, y_top = _matrix(held, top_only=True)
    brier = float(np.mean((p_held - y_held) ** 2))
    calibration = Calibration(
        provisional.embedder,
        recipe,
        provisional.coef,
        provisional.intercept,
        threshold,
        fitted_on=(
            f"{time.strftime('%Y-%m-%d')}, LoCoMo dev, tune half ({len(tune_ids)} conversations, "
            f"{len(tune)} questions, {len(y)} top-10 hits); "
            f"run {result.spec.name!r}, path {result.spec.path!r}"
        ),
        brier=round(brier, 4),
    )
    top_p = _probabilities(calibration, x_top)
    answerable = np.array([q["r@10"] > 0 for q in held])
    abstains = top_p < threshold
    return CalibrationFit(
        run=result.spec.name,
        calibration=calibration,
        brier_held=brier,
        brier_baseline_held=float(np.mean((y.mean() - y_held) ** 2)),
        top_brier_held=float(np.mean((top_p - y_top) ** 2)),
        top_brier_baseline_held=float(np.mean((_matrix(tune, top_only=True)[1].mean() - y_top) ** 2)),
        abstain_rate_held=float(abstains.mean()),
        false_abstain_rate_held=float(abstains[answerable].mean()) if answerable.any() else float("nan"),
        reliability=reliability(p_held, y_held),
    )


def _threshold(calibration: Calibration, tune: Sequence[dict[str, Any]]) -> float:
    """The top-hit probability under which about MISS_RATE of the answerable tune questions fall."""
    answerable = [q for q in tune if q["r@10"] > 0]
    x_top, _ = _matrix(answerable, top_only=True)
    if len(x_top) == 0:
        return 0.0
    return round(float(np.quantile(_probabilities(calibration, x_top), MISS_RATE)), 4)


def calibration_markdown(fits: Sequence[CalibrationFit], plot_file: str | None = None) -> list[str]:
    if not fits:
        return []
    lines = [
        "",
        "## Calibrated abstention",
        "",
        "P(a hit is evidence) from its fused score, cosine, log(1 + BM25), log(rank), the query's top-hit "
        "margin and the hit's gap to the top: a logistic model fitted on the "
        "tune half's top-10 hits, judged on the held half. The default threshold turns away about "
        f"{MISS_RATE:.0%} of the tune half's answerable questions (evidence in the top 10); *false abstain* is "
        "that share on the held half. Brier: lower is better; *baseline* predicts the base rate for every hit.",
        "",
        "| run | Brier (held) | baseline | Brier, top hit | baseline | threshold | abstain (held) "
        "| false abstain (held) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for f in fits:
        lines.append(
            f"| {f.run} | {f.brier_held:.4f} | {f.brier_baseline_held:.4f} | {f.top_brier_held:.4f} | "
            f"{f.top_brier_baseline_held:.4f} | "
            f"{f.calibration.abstain_below:.3f} | {f.abstain_rate_held:.1%} | {f.false_abstain_rate_held:.1%} |"
        )
    lines += ["", "Reliability (held half), predicted → observed per bin:", ""]
    for f in fits:
        cells = ", ".join(
            f"{r['bin']}: {r['predicted']:.2f}→{r['observed']:.2f} (n={r['hits']})" for r in f.reliability
        )
        lines.append(f"- {f.run}: {cells}")
    if plot_file:
        lines += ["", f"![reliability]({plot_file})"]
    return lines


def plot_reliability(fits: Sequence[CalibrationFit], path: Path) -> None:
    labels = {"xlabel": "predicted P(evidence)", "ylabel": "observed share of evidence"}
    with saved_plot(path, (5.5, 5), title="LoCoMo reliability (held half)", **labels) as ax:
        ax.plot([0, 1], [0, 1], "k--", label="perfect")
        for f in fits:
            predicted, observed = [r["predicted"] for r in f.reliability], [r["observed"] for r in f.reliability]
            ax.plot(predicted, observed, marker="o", label=f.run)
