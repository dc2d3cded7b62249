"""The evaluation suites, as ``memcore eval`` and the eval assets run them.

Each suite is registered as an entry point of the group ``memory_core.eval_suites``
(``pyproject.toml``): the CLI finds them there without importing ``evals``, and the assets import
the same objects, so there is one dispatch table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from memory_core.cli.suites import EvalRequest, SuiteUsageError

Result = tuple[dict[str, Any], str]


@dataclass(frozen=True)
class Suite:
    name: str
    help: str
    run: Callable[[EvalRequest], Result]  # a field satisfies EvalSuite.run


def _locomo(request: EvalRequest) -> Result:
    from .locomo_cli import evaluate, parse_specs

    try:
        specs = parse_specs(request.runs)
    except ValueError as exc:  # names the runs it knows
        raise SuiteUsageError(str(exc)) from None
    doc = evaluate(request.data, request.shared, request.out, request.models, specs, request.limit, request.progress)
    rows = [
        f"{r['name']:<18} R@5 {r['r@5']:5.1f}  R@10 {r['r@10']:5.1f}  R@25 {r['r@25']:5.1f}  R@50 {r['r@50']:5.1f}"
        for r in doc["results"]
    ]
    return doc, "\n".join(rows + [f"report: {doc['report']}"])


def _coref(request: EvalRequest) -> Result:
    from .coref import run, table_markdown

    doc = run(request.data, request.shared, request.out, limit=request.limit, progress=request.progress)
    return doc, table_markdown(doc["tables"]) + f"\nreport: {doc['report']}"


def _observations(request: EvalRequest) -> Result:
    from .observations import run, table_markdown

    doc = run(
        request.data,
        request.shared,
        request.out,
        request.models,
        embedder=request.embedder,
        limit=request.limit,
        progress=request.progress,
    )
    text = f"tau = {doc['calibration']['tau']} ({doc['embedder']})\n" + table_markdown(doc["results"])
    return doc, text + f"\nreport: {doc['report']}"


def _resolver(request: EvalRequest) -> Result:
    from .resolver_calibration import run, sentences

    doc = run(request.data, request.shared, request.out, progress=request.progress)
    lines = [
        *sentences(doc),
        f"retire threshold for precision {doc['target_precision']}: {doc['retire_threshold']}; "
        f"flag: {doc['flag_threshold']}",
        f"report: {doc['report']}",
    ]
    return doc, "\n".join(lines)


LOCOMO = Suite("locomo", "retrieval recall@k on LoCoMo", _locomo)
COREF = Suite("coref", "per-span vs whole-batch extraction (MuDoCo and synthetic, McNemar)", _coref)
OBSERVATIONS = Suite("observations", "extraction recall against LoCoMo observations", _observations)
RESOLVER = Suite("resolver", "the conflict resolver's calibration on labelled pairs", _resolver)
