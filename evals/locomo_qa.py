"""LoCoMo question answering end to end: each question through ``MemoryTool.ask``, scored by an
LLM judge and by token F1 and exact match, which need no judge.

The turns are written through the documented path (``locomo.write_documented``), the index is
built with the embedder under test, and each question of categories 1-4 is asked with ``ask``'s
defaults; the answer is judged against the gold answer with the strict prompt below (and the
lenient one when asked, reported separately). Category 5 (adversarial: the conversation never
says) is scored apart: the right outcome is an abstention. Runs against any OpenAI-compatible
endpoint; tested offline against the scripted server.
"""

from __future__ import annotations

import json
import re
import shutil
import string
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from corpora.locomo import CATEGORIES, LICENCE, Conversation, load_locomo, locate
from memory_core import Identity, Memory
from memory_core.adapters.embedders import make_embedder
from memory_core.errors import MemcoreError
from memory_core.ports import LLM
from memory_core.retrieval.recipes import DEFAULT_RECIPE

from .locomo import TENANT, seeded_ids, write_documented
from .metrics import bootstrap_ci

Progress = Callable[[str], None]
ADVERSARIAL = 5

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "correct": {"type": "boolean"}},
    "required": ["reasoning", "correct"],
    "additionalProperties": False,
}

# The strict judge: the answer must state what the gold answer states.
STRICT_PROMPT = (
    "You grade an answer to a question about a conversation against the gold answer. Mark it correct "
    "only if it states the same fact as the gold answer: the same person, thing, place, number or date "
    "(a date may be written differently, or relative to the same day). An answer that is vaguer than the "
    "gold answer, hedges between options, adds a wrong detail, or says it does not know is incorrect. "
    'Reply with JSON: {"reasoning": one sentence, "correct": true or false}.'
)
# The lenient judge, as published LoCoMo answer-accuracy figures grade: generous on form and detail.
LENIENT_PROMPT = (
    "You grade an answer to a question about a conversation against the gold answer. Be generous: mark "
    "it correct if it touches on the same topic and does not contradict the gold answer, even when it is "
    "longer, shorter or less precise; for time questions, mark it correct if it refers to the same period "
    "as the gold answer, whatever its format. Mark it incorrect only when it is about something else or "
    'contradicts the gold answer. Reply with JSON: {"reasoning": one sentence, "correct": true or false}.'
)


def normalize(text: str) -> list[str]:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(c for c in str(text).lower() if c not in string.punctuation)
    text = re.sub(r"\b(a|an|the|and)\b", " ", text)
    return text.split()


def token_f1(prediction: str, gold: str) -> float:
    pred, ref = normalize(prediction), normalize(gold)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize(prediction) == normalize(gold))


def judge(llm: LLM, prompt: str, question: str, gold: str, prediction: str) -> bool:
    user = f"Question: {question}\nGold answer: {gold}\nAnswer to grade: {prediction or '(no answer)'}"
    reply = llm.complete_json(
        [{"role": "system", "content": prompt}, {"role": "user", "content": user}],
        JUDGE_SCHEMA,
        schema_name="locomo_judgement",
        max_tokens=256,
    )
    return bool(reply.data["correct"])


@dataclass(frozen=True)
class QaSettings:
    embedder: str = "static"
    k: int = 10
    lenient: bool = False  # also judge with the lenient prompt
    questions: int | None = None  # at most this many questions per conversation (a quick look)


def run_locomo_qa(
    conversations: Sequence[Conversation],
    answerer: LLM,
    grader: LLM,
    work_dir: Path,
    models_dir: Path,
    settings: QaSettings = QaSettings(),
    progress: Progress | None = None,
) -> tuple[list[dict[str, Any]], bool]:
    """One row per question asked (the answer, its citations and its scores), and whether a
    calibration of the embedder made abstention calibrated."""
    say = progress or (lambda message: None)
    home = work_dir / "home-qa"
    if home.exists():
        shutil.rmtree(home)
    embedder = make_embedder(settings.embedder, cache_dir=models_dir)
    rows: list[dict[str, Any]] = []
    with Memory.open(home, embedder=embedder, new_id=seeded_ids(), llm=answerer) as memory:
        calibrated = memory.session.relevance_calibration(DEFAULT_RECIPE) is not None
        say(f"calibrated abstention: {'on' if calibrated else 'off (no calibration of this embedder)'}")
        started = time.perf_counter()
        write_documented(memory, conversations, say)
        memory.flush()
        say(f"wrote and indexed the turns in {time.perf_counter() - started:.0f}s")
        for conv in conversations:
            tool = memory.for_run(Identity(tenant=TENANT, user=conv.sample_id))
            for q in conv.questions[: settings.questions]:
                rows.append(_asked(tool, grader, conv.sample_id, q, settings))
            say(f"asked {conv.sample_id}: {len(conv.questions[: settings.questions])} questions")
    return rows, calibrated


def _asked(tool: Any, grader: LLM, sample_id: str, q: Any, settings: QaSettings) -> dict[str, Any]:
    gold = "" if q.answer is None else str(q.answer)
    row: dict[str, Any] = {"sample_id": sample_id, "category": q.category, "question": q.question, "gold": gold}
    try:
        return _scored(tool, grader, q, row, settings)
    except MemcoreError as exc:  # one model failure is one wrong answer, not a lost run
        words = None if q.category == ADVERSARIAL else 0.0
        return row | {
            "prediction": "",
            "abstained": True,
            "reason": f"error:{exc.code}",
            "cited": [],
            "cites_evidence": False,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "f1": words,
            "em": words,
            "correct_strict": False,
            "correct_lenient": False,
        }


def _scored(tool: Any, grader: LLM, q: Any, row: dict[str, Any], settings: QaSettings) -> dict[str, Any]:
    """``row`` (the question's) with the answer ``ask`` gave and its scores."""
    answer = tool.ask(q.question, k=settings.k)
    prediction, gold = answer.answer or "", row["gold"]
    row = row | {
        "prediction": prediction,
        "abstained": answer.abstained,
        "reason": answer.reason,
        "cited": [c.key for c in answer.citations],
        "cites_evidence": bool(set(q.evidence) & {c.key for c in answer.citations}),
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
    }
    if q.category == ADVERSARIAL:  # nothing in the conversation answers it: abstaining is right
        row["correct_strict"] = row["correct_lenient"] = answer.abstained
        row["f1"] = row["em"] = None  # no gold answer to compare words with
        return row
    row["f1"], row["em"] = token_f1(prediction, gold), exact_match(prediction, gold)
    row["correct_strict"] = not answer.abstained and judge(grader, STRICT_PROMPT, q.question, gold, prediction)
    if settings.lenient:
        row["correct_lenient"] = not answer.abstained and judge(grader, LENIENT_PROMPT, q.question, gold, prediction)
    return row


def _mean_ci(values: Sequence[float]) -> dict[str, Any]:
    if not values:
        return {"mean": None, "ci95": [None, None], "n": 0}
    low, high = bootstrap_ci(values)
    return {"mean": round(100 * sum(values) / len(values), 2), "ci95": [round(100 * low, 2), round(100 * high, 2)]}


def summarize(rows: Sequence[dict[str, Any]], lenient: bool) -> dict[str, Any]:
    """Per category and overall (categories 1-4): judge accuracy, token F1, exact match, abstention."""
    metrics = ["correct_strict", *(["correct_lenient"] if lenient else []), "f1", "em", "abstained"]
    groups: dict[str, list[dict[str, Any]]] = {"overall (1-4)": [r for r in rows if r["category"] != ADVERSARIAL]}
    for cat, name in CATEGORIES.items():
        groups[f"{cat} {name}"] = [r for r in rows if r["category"] == cat]
    return {
        group: {
            "n": len(members),
            **{m: _mean_ci([float(r[m]) for r in members if r.get(m) is not None]) for m in metrics},
        }
        for group, members in groups.items()
    }


def report_markdown(
    summary: dict[str, Any],
    data_file: Path,
    answer_model: str,
    judge_model: str,
    settings: QaSettings,
    calibrated: bool = True,
) -> str:
    lenient = settings.lenient
    head = "| questions | n | judge (strict) |" + (" judge (lenient) |" if lenient else "") + " F1 | EM | abstained |"
    lines = [
        "# LoCoMo question answering through `ask`",
        "",
        f"Data: `{data_file}` — {LICENCE}.  ",
        f"Answers: `{answer_model}` through `MemoryTool.ask` (embedder `{settings.embedder}`, k={settings.k}, "
        f"the default recipe, calibrated abstention {'on' if calibrated else 'off: no calibration of this embedder'}); "
        f"judge: `{judge_model}`.  ",
        "Turns written through the documented path; figures in percent with 95% bootstrap intervals. Category 5 "
        "(adversarial) is scored apart: correct when `ask` abstains.",
        "",
        head,
        "|---|---|---|" + ("---|" if lenient else "") + "---|---|---|",
    ]
    for group, s in summary.items():
        cells = [_cell(s["correct_strict"])] + ([_cell(s["correct_lenient"])] if lenient else [])
        cells += [_cell(s["f1"]), _cell(s["em"]), _cell(s["abstained"])]
        lines.append(f"| {group} | {s['n']} | " + " | ".join(cells) + " |")
    lines += ["", "## Judge prompts", "", "Strict (the headline figure):", "", f"> {STRICT_PROMPT}"]
    if lenient:
        lines += ["", "Lenient (as published answer-accuracy figures grade; reported separately):", ""]
        lines.append(f"> {LENIENT_PROMPT}")
    return "\n".join(lines) + "\n"


def _cell(metric: dict[str, Any]) -> str:
    if metric.get("mean") is None:
        return "—"
    low, high = metric["ci95"]
    return f"{metric['mean']:.1f} [{low:.1f}, {high:.1f}]"


def evaluate_qa(
    data: str | None,
    shared_root: Path,
    out_dir: Path,
    models_dir: Path,
    answerer: LLM,
    grader: LLM,
    settings: QaSettings,
    limit: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the QA evaluation and write its report, results and per-question rows under ``out_dir``."""
    data_file = locate(data, shared_root)
    conversations, _ = load_locomo(data_file)
    conversations = conversations[:limit] if limit else conversations
    with tempfile.TemporaryDirectory(prefix="memcore-locomo-qa-") as work:
        rows, calibrated = run_locomo_qa(conversations, answerer, grader, Path(work), models_dir, settings, progress)
    summary = summarize(rows, settings.lenient)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = out_dir / "locomo_qa_report.md"
    report.write_text(report_markdown(summary, data_file, answerer.name, grader.name, settings, calibrated))
    doc = {
        "data_file": str(data_file),
        "licence": "CC BY-NC 4.0",
        "conversations": len(conversations),
        "questions": len(rows),
        "answer_model": answerer.name,
        "judge_model": grader.name,
        "settings": {
            "embedder": settings.embedder,
            "k": settings.k,
            "lenient": settings.lenient,
            "calibrated_abstention": calibrated,
        },
        "judge_prompts": {"strict": STRICT_PROMPT, **({"lenient": LENIENT_PROMPT} if settings.lenient else {})},
        "summary": summary,
        "report": str(report),
    }
    (out_dir / "locomo_qa_results.json").write_text(json.dumps(doc, indent=2))
    with open(out_dir / "locomo_qa_per_question.jsonl", "w") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    return doc
