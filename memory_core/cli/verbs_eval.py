"""``memcore eval SUITE``: run an installed evaluation suite and write its report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..environment import llm_api_key, shared_root
from ..errors import MemcoreError
from .registry import Call, Output, UsageError, arg, verb
from .suites import EvalRequest, SuiteUsageError, eval_suites


class DataNotFound(MemcoreError):
    status = 404
    code = "DATA_NOT_FOUND"


class DataUnreadable(MemcoreError):
    """The corpus is where the suite looked, but it is not what the suite reads."""

    status = 422
    code = "DATA_UNREADABLE"


class ExtraMissing(MemcoreError):
    """A suite's own dependencies are not installed: the library alone does not bring them."""

    status = 501
    code = "EXTRA_MISSING"


@verb(
    "eval",
    "run an evaluation and write its report (evals/)",
    arg("suite", help="the suite: see the evaluation suites installed (locomo, coref, observations, resolver)"),
    arg("--data", help="the corpus file or folder (default: ../shared/corpora/<locomo|mudoco>)"),
    arg(
        "--runs",
        help="locomo: comma-separated runs: bm25_only, static, minilm, hybrid(static), "
        "hybrid(minilm), default(minilm), default(minilm-tuned) (MiniLM tuned on the other half of the "
        "conversations), ..., or EMBEDDER:RECIPE (default: all named runs)",
    ),
    arg(
        "--embedder",
        dest="eval_embedder",
        default="static",
        help="observations: the embedder that matches facts to observations; locomo-qa: the one ask retrieves with "
        "(default static)",
    ),
    arg("--llm", help="locomo-qa: the OpenAI-compatible endpoint that answers (base URL, e.g. http://host/v1)"),
    arg("--llm-model", default="gpt-4o-mini", help="locomo-qa: the answering model (default gpt-4o-mini)"),
    arg("--judge", help="locomo-qa: the OpenAI-compatible endpoint that grades the answers"),
    arg("--judge-model", default="gpt-4o-mini", help="locomo-qa: the grading model (default gpt-4o-mini)"),
    arg("--lenient", action="store_true", help="locomo-qa: also grade with the lenient prompt (reported apart)"),
    arg("--questions", type=int, help="locomo-qa: at most N questions per conversation"),
    arg("--out", help="report folder (default: <home>/reports/<suite>)"),
    arg("--limit", type=int, help="only the first N conversations (for a quick look)"),
    scope=False,
    identity=False,
    opens_home=False,
)
def eval_(call: Call) -> Output:
    args, home = call.args, call.home
    suites = eval_suites()
    suite = suites.get(args.suite)
    if suite is None:
        known = ", ".join(suites) or "none: install the platform (pip install 'memory_core[platform]')"
        raise UsageError(f"memcore eval: unknown suite {args.suite!r}; installed: {known}")
    request = EvalRequest(
        data=args.data,
        shared=shared_root(),
        out=Path(args.out) if args.out else home / "reports" / args.suite,
        models=home / "models",
        runs=args.runs,
        embedder=args.eval_embedder,
        limit=args.limit,
        progress=lambda message: print(message, file=sys.stderr),
        llm=args.llm,
        llm_model=args.llm_model,
        judge=args.judge,
        judge_model=args.judge_model,
        api_key=llm_api_key(),
        lenient=args.lenient,
        questions=args.questions,
    )
    try:
        doc, text = suite.run(request)
    except FileNotFoundError as exc:  # the corpus is not where we looked: say where, and how to point elsewhere
        raise DataNotFound(str(exc)) from None
    except SuiteUsageError as exc:  # a bad option; a corrupt corpus is not the command line's fault
        raise UsageError(str(exc)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataUnreadable(f"memcore eval {args.suite}: the corpus could not be read: {exc}") from None
    except ModuleNotFoundError as exc:
        raise ExtraMissing(
            f"memcore eval {args.suite}: needs {exc.name!r}, which the platform extra installs: "
            "pip install 'memory_core[platform]'"
        ) from None
    return doc, text, 0
