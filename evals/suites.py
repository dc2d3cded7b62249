"""The evaluation suites, as ``memcore eval`` and the eval assets run them.

Each suite is registered as an entry point of the group ``memory_core.eval_suites``
(``pyproject.toml``): the CLI finds them there without importing ``evals``, and the assets import
the same objects, so there is one dispatch table.
"""

from __future__ import annotations

import re
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


def _locomo_qa(request: EvalRequest) -> Result:
    from memory_core.adapters.llm.openai_chat import OpenAIChat

    from .locomo_qa import QaSettings, evaluate_qa

    if not request.llm or not request.judge:
        raise SuiteUsageError("locomo-qa answers and judges through language models: give --llm URL and --judge URL")
    for name, url in (("--llm", request.llm), ("--judge", request.judge)):
        if not re.fullmatch(r"https?://[\x21-\x7e]+", url):
            raise SuiteUsageError(f"locomo-qa: {name} must be an http(s) URL such as http://127.0.0.1:8000/v1")
    if request.questions is not None and request.questions < 1:
        raise SuiteUsageError("locomo-qa: --questions must be a positive number of questions per conversation")
    answerer = OpenAIChat(base_url=request.llm, model=request.llm_model, api_key=request.api_key)
    grader = OpenAIChat(base_url=request.judge, model=request.judge_model, api_key=request.api_key)
    settings = QaSettings(embedder=request.embedder, lenient=request.lenient, questions=request.questions)
    doc = evaluate_qa(
        request.data,
        request.shared,
        request.out,
        request.models,
        answerer,
        grader,
        settings,
        request.limit,
        request.progress,
    )
    overall = doc["summary"]["overall (1-4)"]
    lines = [
        f"{group:<16} n {s['n']:>4}  judge {_pct(s['correct_strict'])}  F1 {_pct(s['f1'])}"
        for group, s in doc["summary"].items()
    ]
    lines.append(f"overall strict judge {_pct(overall['correct_strict'])} on {overall['n']} questions")
    return doc, "\n".join(lines + [f"report: {doc['report']}"])


def _consolidation(request: EvalRequest) -> Result:
    from .consolidation import line, run

    doc = run(
        request.data,
        request.shared,
        request.out,
        request.models,
        embedder=request.embedder,
        limit=request.limit,
        progress=request.progress,
    )
    return doc, line(doc) + f"\nreport: {doc['report']}"


def _pct(metric: dict[str, Any]) -> str:
    return "  —  " if metric.get("mean") is None else f"{metric['mean']:5.1f}"


LOCOMO = Suite("locomo", "retrieval recall@k on LoCoMo", _locomo)
LOCOMO_QA = Suite("locomo-qa", "LoCoMo answers through ask, LLM-judged, with F1 and EM", _locomo_qa)
COREF = Suite("coref", "per-span vs whole-batch extraction (MuDoCo and synthetic, McNemar)", _coref)
OBSERVATIONS = Suite("observations", "extraction recall against LoCoMo observations", _observations)
CONSOLIDATION = Suite("consolidation", "LoCoMo live rows and recall@10 before and after consolidation", _consolidation)
RESOLVER = Suite("resolver", "the conflict resolver's calibration on labelled pairs", _resolver)
