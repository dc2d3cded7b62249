"""``memcore eval SUITE``: run an evaluation from ``evals/`` and write its report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..environment import shared_root
from . import DataNotFound, UsageError


def run_eval(args: argparse.Namespace, home: Path) -> tuple[Any, str, int]:
    out = Path(args.out) if args.out else home / "reports" / args.suite
    progress = lambda m: print(m, file=sys.stderr)  # noqa: E731
    try:
        if args.suite == "coref":
            from evals.coref import run, table_markdown

            doc = run(args.data, shared_root(), out, limit=args.limit, progress=progress)
            return doc, table_markdown(doc["tables"]) + f"\nreport: {doc['report']}", 0
        if args.suite == "resolver":
            from evals.resolver_calibration import run as run_calibration
            from evals.resolver_calibration import sentences

            doc = run_calibration(args.data, shared_root(), out, progress=progress)
            return (
                doc,
                "\n".join(
                    [
                        *sentences(doc),
                        f"retire threshold for precision {doc['target_precision']}: "
                        f"{doc['retire_threshold']}; flag: {doc['flag_threshold']}",
                        f"report: {doc['report']}",
                    ]
                ),
                0,
            )
        if args.suite == "observations":
            from evals.observations import run as run_observations
            from evals.observations import table_markdown as observation_table

            doc = run_observations(
                args.data,
                shared_root(),
                out,
                home / "models",
                embedder=args.eval_embedder,
                limit=args.limit,
                progress=progress,
            )
            return (
                doc,
                (
                    f"tau = {doc['calibration']['tau']} ({doc['embedder']})\n"
                    + observation_table(doc["results"])
                    + f"\nreport: {doc['report']}"
                ),
                0,
            )
        from evals.locomo_cli import evaluate, parse_specs

        try:
            specs = parse_specs(args.runs)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        doc = evaluate(args.data, shared_root(), out, home / "models", specs, args.limit, progress=progress)
    except FileNotFoundError as exc:  # the corpus is not where we looked: say where, and how to point elsewhere
        raise DataNotFound(str(exc)) from None
    rows = [
        f"{r['name']:<18} R@5 {r['r@5']:5.1f}  R@10 {r['r@10']:5.1f}  R@25 {r['r@25']:5.1f}  R@50 {r['r@50']:5.1f}"
        for r in doc["results"]
    ]
    return doc, "\n".join(rows + [f"report: {doc['report']}"]), 0
