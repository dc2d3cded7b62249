"""The verbs of answers and their calibration: ask, and calibration (list, install)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InvalidInput
from ..retrieval.calibration import Calibration
from ..retrieval.recipes import DEFAULT_RECIPE, RECIPES
from ..wire import encode
from .io import AS_OF, LLM_ARGS, llm_of
from .registry import Call, Output, UsageError, arg, verb


@verb(
    "ask",
    "answer QUESTION from what recall finds, through a language model, citing the memories",
    arg("question"),
    arg("--k", type=int, default=10, help="hits the model reads (default 10)"),
    arg("--recipe", default=DEFAULT_RECIPE, help=f"{' | '.join(RECIPES)} (default: {DEFAULT_RECIPE})"),
    AS_OF,
    *LLM_ARGS,
)
def ask(call: Call) -> Output:
    args = call.args
    model = llm_of(args)
    if model is not None:
        if call.memory is None:  # through a service: its own model answers
            raise UsageError("memcore ask through a service answers with the service's model (memcore serve --llm)")
        call.memory.llm = model
    answer = call.tool.ask(args.question, scope=args.scope, k=args.k, recipe=args.recipe, as_of=args.as_of)
    if answer.abstained:
        text = f"abstained: {answer.reason}" + (f" (the model said, uncited: {answer.draft})" if answer.draft else "")
    else:
        text = answer.answer or ""
    lines = [text] + [f"[{c.number}] {c.text}" for c in answer.citations]
    return encode(answer), "\n".join(lines), 0


@verb(
    "calibration",
    "the relevance calibrations recall uses: list them, or install one (a JSON file from memcore eval locomo)",
    arg("action", choices=["list", "install"]),
    arg("file", nargs="?", help="install: the calibration's JSON file"),
    scope=False,
    identity=False,
    writes=lambda args: args.action == "install",
)
def calibration(call: Call) -> Output:
    args, memory = call.args, call.memory
    if args.action == "install":
        if not args.file:
            raise UsageError("memcore calibration install FILE: name the calibration's JSON file")
        try:
            body = json.loads(Path(args.file).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested past reading
            raise InvalidInput(f"cannot read a calibration from {args.file}: {exc}", field="file") from None
        installed = Calibration.from_dict(body)
        path = memory.install_calibration(installed)
        return {"installed": installed.to_dict(), "path": str(path)}, f"installed {path}", 0
    found = [c.to_dict() for c in memory.calibrations]
    lines = [f"{c['embedder']}  {c['recipe']}  abstain below {c['abstain_below']}  ({c['fitted_on']})" for c in found]
    return {"calibrations": found}, "\n".join(lines) or "no calibration", 0
