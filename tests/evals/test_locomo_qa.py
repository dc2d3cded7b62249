"""`memcore eval locomo-qa` end to end against the scripted OpenAI-compatible server: answers
through `ask`, an LLM judge whose prompt is in the report, and token F1 / exact match."""

import json
import re

import pytest

from evals.locomo_qa import LENIENT_PROMPT, STRICT_PROMPT, exact_match, token_f1
from tests.cli.test_cli import run
from tests.fixtures.locomo_fixture import write_locomo_fixture
from tests.llm_server import ScriptedLLM, ok

# What the scripted model knows: the answer each fixture question should get.
ANSWERS = {"knock over": "the sofa", "kitten": "Pixel", "Clara": "Montreal", "race": "the Berlin half marathon"}


def respond(body):
    schema = body["response_format"]["json_schema"]["name"]
    prompt = body["messages"][-1]["content"]
    if schema == "memory_answer":
        question = prompt.rsplit("Question: ", 1)[1]
        answer = next((a for cue, a in ANSWERS.items() if cue in question), "")
        # cite the memory line that holds the answer's words, as a model would
        lines = re.findall(r"^\[(\d+)\] (.*)$", prompt, flags=re.M)
        cited = [int(n) for n, line in lines if answer and answer.split()[-1].lower() in line.lower()]
        return ok({"answer": answer, "citations": cited[:1] or [1], "abstain": not answer})
    gold = re.search(r"Gold answer: (.*)", prompt).group(1)
    given = re.search(r"Answer to grade: (.*)", prompt).group(1)
    return ok({"reasoning": "compared", "correct": gold.lower() in given.lower()})


@pytest.fixture
def scripted():
    with ScriptedLLM() as server:
        server.responder = respond
        yield server


def test_locomo_qa_answers_through_ask_and_reports_judge_f1_and_em(tmp_path, home, scripted):
    data = write_locomo_fixture(tmp_path / "locomo.json")
    out = tmp_path / "qa"
    code, doc = run(
        home,
        "eval",
        "locomo-qa",
        "--data", str(data),
        "--llm", scripted.base_url,
        "--judge", scripted.base_url,
        "--embedder", "hashing",
        "--lenient",
        "--out", str(out),
        identity=(),
    )  # fmt: skip
    assert code == 0, doc
    rows = [json.loads(line) for line in (out / "locomo_qa_per_question.jsonl").read_text().splitlines()]
    by_question = {r["question"]: r for r in rows}
    kitten = by_question["What is the name of Ada's kitten?"]
    assert kitten["prediction"] == "Pixel" and kitten["correct_strict"] and kitten["em"] == 1.0
    assert kitten["cited"] == ["D1:1"] and kitten["cites_evidence"]
    wrong = by_question["What did the kitten knock over?"]  # gold "basil", the model said "the sofa"
    assert not wrong["correct_strict"] and wrong["f1"] == 0.0
    race = by_question["Which race did Ben run?"]  # found through its speaker's name (the subject)
    assert not race["abstained"] and race["cited"] == ["D1:4"] and race["correct_strict"]
    unknown = by_question["Who is unknown?"]  # nothing in the store answers it: retrieval abstains
    assert unknown["abstained"] and unknown["reason"] == "below_threshold" and unknown["correct_strict"]
    summary = doc["summary"]
    assert summary["overall (1-4)"]["n"] == 4
    assert summary["overall (1-4)"]["correct_strict"]["mean"] == 75.0  # 3 of 4 right
    assert summary["overall (1-4)"]["abstained"]["mean"] == 0.0
    assert summary["5 adversarial"]["n"] == 1  # scored apart: right when ask abstains
    report = (out / "locomo_qa_report.md").read_text()
    assert STRICT_PROMPT in report and LENIENT_PROMPT in report
    assert "| overall (1-4) | 4 | 75.0 [" in report and "judge (lenient)" in report
    # An abstention is not judged; each given answer is judged twice (strict, lenient).
    judged = [r for r in scripted.requests if r["response_format"]["json_schema"]["name"] == "locomo_judgement"]
    assert len(judged) == 2 * 4


def test_locomo_qa_needs_both_endpoints(tmp_path, home):
    data = write_locomo_fixture(tmp_path / "locomo.json")
    code, doc = run(home, "eval", "locomo-qa", "--data", str(data), identity=())
    assert code == 2 and doc["error"]["code"] == "USAGE" and "--llm" in doc["error"]["message"]


@pytest.mark.parametrize(
    ("prediction", "gold", "f1", "em"),
    [
        ("Pixel", "pixel", 1.0, 1.0),
        ("The Berlin half marathon.", "Berlin half marathon", 1.0, 1.0),
        ("in Montreal, Canada", "Montreal", 0.5, 0.0),
        ("", "Montreal", 0.0, 0.0),
    ],
)
def test_token_f1_and_exact_match_normalise_as_squad_does(prediction, gold, f1, em):
    assert token_f1(prediction, gold) == pytest.approx(f1) and exact_match(prediction, gold) == em
