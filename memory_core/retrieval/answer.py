"""``ask``: a question answered from the hits of a recall, with citations that are checked.

Pure. ``answer_messages`` writes the prompt (the hits numbered, each with its date and who said
it); the model answers JSON of ``ANSWER_SCHEMA``; ``checked_answer`` keeps the citations that
name a hit, records the ones that do not, and refuses an answer that cites no hit: an answer is
only ever given with the memories it rests on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping, Sequence

from ..llm import LLMMalformed
from ..temporal import iso
from ..texts import index_text
from .types import Hit

MAX_ASK_K = 50  # hits a prompt carries: one call's cost stays near what the budget check saw
ANSWERED = "answered"
MODEL_ABSTAINED = "model_abstained"  # the model read the hits and found no answer in them
UNCITED = "uncited"  # the model answered without citing a hit it was shown: not given

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "citations": {"type": "array", "items": {"type": "integer"}},
        "abstain": {"type": "boolean"},
    },
    "required": ["answer", "citations", "abstain"],
    "additionalProperties": False,
}

INSTRUCTIONS = (
    "You answer a question from an agent's memory. Use only the numbered memories below: each shows the "
    "date it was recorded and, when known, who said it or whom it is about. Resolve relative dates "
    "('yesterday', 'last week') against the memory's date. Answer briefly: a short phrase or one sentence. "
    "List in citations the numbers of the memories the answer rests on. If the memories do not answer the "
    'question, answer with abstain true, an empty answer and no citations. Reply with JSON only: {"answer": '
    'string, "citations": [numbers], "abstain": boolean}.'
)


@dataclass(frozen=True, slots=True)
class Citation:
    number: int  # the hit's number in the prompt (1 = the top hit)
    key: str
    fact_id: str
    version_id: str
    text: str  # what the cited memory says (its key's words and value)


@dataclass(frozen=True, slots=True)
class Answer:
    """What ``ask`` answers. ``answer`` is None whenever ``abstained``; ``reason`` says why:
    ``answered``, the search's own verdict (``no_match``, ``below_threshold``,
    ``low_calibrated_confidence``, ``identifier_absent``), ``model_abstained`` or ``uncited``."""

    question: str
    answer: str | None
    abstained: bool
    reason: str
    citations: tuple[Citation, ...]
    hits: tuple[Hit, ...]
    trace_id: str | None = None  # the search behind it (``search_trace``)
    model: str | None = None  # None: no model was asked (the search abstained)
    draft: str | None = None  # an uncited answer the model gave, kept for inspection, never as ``answer``
    unknown_citations: tuple[int, ...] = ()  # numbers the model cited that name no hit (dropped)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    pending_extraction: int = 0  # as the search's: queued conversations of the scope not yet readable
    notes: tuple[str, ...] = field(default=())


def shown_text(hit: Hit) -> str:
    """What a hit says: its key's words and its value (not the index text, which carries the
    subject and the neighbouring turns the store added to find it)."""
    return index_text(hit.key, hit.value)


def memory_line(number: int, hit: Hit) -> str:
    when = hit.observed_at or hit.valid_at
    said = f"{hit.subject}: " if hit.subject else ""
    day = when.date().isoformat() if when is not None else "undated"
    return f"[{number}] ({day}) {said}{shown_text(hit)}"


def answer_messages(question: str, hits: Sequence[Hit], as_of: datetime) -> list[dict[str, str]]:
    memories = "\n".join(memory_line(n, h) for n, h in enumerate(hits, start=1))
    user = f"Memories:\n{memories}\n\nThe question is asked at {iso(as_of)}.\nQuestion: {question}"
    return [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": user}]


def _numbers(raw: Any) -> list[int]:
    """The cited numbers, once each, as ints (an integral float counts; a bool or text does not:
    the answer is then malformed)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise LLMMalformed("the model's citations are not a list", problems=[f"citations: {type(raw).__name__}"])
    numbers = []
    for item in raw:
        if isinstance(item, float) and item.is_integer() and abs(item) < 2**53:
            item = int(item)
        if not isinstance(item, int) or isinstance(item, bool):
            raise LLMMalformed("the model cited something other than memory numbers", problems=[repr(item)[:100]])
        numbers.append(item)
    return list(dict.fromkeys(numbers))


def checked_answer(question: str, hits: Sequence[Hit], data: Any) -> Answer:
    """The model's answer held to the hits: citations that name no hit are dropped (and listed),
    and an answer left with none is not given. An answer not of the schema is ``LLMMalformed``."""
    if not isinstance(data, Mapping):
        raise LLMMalformed("the model's answer is not a JSON object", problems=[type(data).__name__])
    cited, unknown = [], []
    for number in _numbers(data.get("citations")):
        (cited if 1 <= number <= len(hits) else unknown).append(number)
    citations = tuple(
        Citation(n, hits[n - 1].key, hits[n - 1].fact_id, hits[n - 1].version_id, shown_text(hits[n - 1]))
        for n in cited
    )
    text = str(data.get("answer") or "").strip()
    if data.get("abstain") or not text:
        return Answer(question, None, True, MODEL_ABSTAINED, (), tuple(hits), unknown_citations=tuple(unknown))
    if not citations:
        return Answer(question, None, True, UNCITED, (), tuple(hits), draft=text, unknown_citations=tuple(unknown))
    return Answer(question, text, False, ANSWERED, citations, tuple(hits), unknown_citations=tuple(unknown))
