"""The extraction steps that keep only durable facts, and the one that shows the extractor what
memory already holds.

* ``fetch_existing_memories``: the namespace's live facts, at most ``MAX_KNOWN_MEMORIES`` of them
  (those sharing the most words with the transcript), handed to the extractor so it can skip a
  restatement. On by default: one read of the scope, and an extractor that does not take them
  is called as before.
* ``drop_non_durable``: deterministic rules drop what a coding session says about its own work
  in progress: status snapshots ("running tests now", "the build passed"), housekeeping
  ("committed the changes", "cleaned up the temp files") and plans ("TODO: next I will ...").
  On by default: each rule names work in progress, never a statement about a person.
* ``verify_durable``: a verifier pass over the candidates left, through the LLM port when one is
  given. Fail-open: an error, or an answer it cannot read, keeps every candidate. Off by
  default: it costs a model call per batch and needs a model.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..texts import value_text
from .model import Extracted, Extractor, Turn

if TYPE_CHECKING:
    from .pipeline import ExtractionState, StepContext

MAX_KNOWN_MEMORIES = 50  # what the extractor is shown: bounded, whatever the scope holds
_LINEAGE_TYPES = frozenset({"evidence", "transcript_chunk", "document", "document_chunk"})


@dataclass(frozen=True, slots=True)
class KnownMemory:
    """A stored memory as the extractor sees it: its key and its value in words."""

    key: str
    text: str


_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {m.group(0).casefold() for m in _WORD.finditer(text)}


def normalized(text: str) -> str:
    """A statement compared as words: case, spacing and end punctuation aside."""
    return " ".join(m.group(0).casefold() for m in _WORD.finditer(text))


def nearest_memories(
    facts: Iterable[Any], turns: Sequence[Turn], limit: int = MAX_KNOWN_MEMORIES
) -> tuple[KnownMemory, ...]:
    """At most ``limit`` of the live facts (evidence, transcript chunks and documents aside), those
    sharing the most words with the transcript first, then by key: a repeatable choice."""
    said = _words(" ".join(t.content for t in turns))
    known = [
        KnownMemory(f.key, value_text(f.value))
        for f in facts
        if f.memory_type not in _LINEAGE_TYPES and not f.key.startswith(("evidence:", "chunk:"))
    ]
    known.sort(key=lambda m: (-len(_words(m.text) & said), m.key))
    return tuple(known[:limit])


def fetch_existing_memories(state: ExtractionState, ctx: StepContext) -> None:
    """Load the namespace's live facts (bounded) for the extractor to see (``llm_extract``)."""
    facts = state.existing.values() if state.existing else ctx.tool.list(scope=ctx.scope)
    state.known = nearest_memories(facts, state.turns)


def takes_known(extractor: Extractor) -> bool:
    """Does the extractor take ``known=`` (the memories already stored)? One that does not is
    called as before."""
    try:
        return "known" in inspect.signature(extractor.extract).parameters
    except (TypeError, ValueError):
        return False


def restatements(facts: Sequence[Extracted], known: Sequence[KnownMemory]) -> tuple[list[Extracted], list[str]]:
    """The facts that do not restate a stored memory word for word, and the keys of those that do
    (an extractor's own skip: same words, whatever the key)."""
    stored = {normalized(m.text) for m in known}
    kept = [f for f in facts if normalized(f.value) not in stored]
    return kept, [f.key for f in facts if normalized(f.value) in stored]


# -- what a coding session says about its own work --------------------------------------------

_WORK = (
    r"(?:running|re-?running|building|compiling|testing|debugging|fixing|installing|deploying|refactoring|"
    r"linting|waiting on|waiting for|working on)"
)
_STATUS = (
    re.compile(rf"^\s*(?:i'?m|i am|we'?re|we are)\s+(?:now\s+|currently\s+|still\s+|just\s+)?{_WORK}\b", re.I),
    re.compile(rf"^\s*(?:now|currently|still)\s+{_WORK}\b", re.I),
    re.compile(rf"\b{_WORK}\b[^.!?\n]*\b(?:right now|now|at the moment|currently)\b", re.I),
    re.compile(
        r"\b(?:the\s+)?(?:tests?|test suite|build|ci|pipeline|lint(?:er)?|type ?check|checks?)\s+"
        r"(?:passed|pass(?:es)?|failed|fail(?:s)?|(?:is|are)\s+(?:now\s+)?(?:green|red|passing|failing|broken))\b",
        re.I,
    ),
    re.compile(r"\b(?:all\s+)?\d+\s+(?:tests?\s+)?(?:passed|failed|failing|passing)\b", re.I),
)
_HOUSEKEEPING = (
    re.compile(
        r"\b(?:committed|pushed|merged|rebased|stashed|staged)\s+(?:the\s+|my\s+|our\s+|all\s+)?(?:changes?|branch|commits?|fix|work|files?|pr)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:cleaned up|removed|deleted)\s+(?:the\s+|some\s+|all\s+)?(?:temp|tmp|temporary|unused|debug|stale|old)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:formatted|reformatted)\s+(?:the\s+)?(?:code|files?)\b"
        r"|\bran\s+(?:ruff|black|prettier|eslint|the formatter|the linter)\b",
        re.I,
    ),
)
_PLAN = (
    re.compile(r"^\s*(?:todo|fixme|next steps?|plan)\s*[:\-]", re.I),
    re.compile(
        r"\b(?:next|then|after that|afterwards),?\s+(?:i|we)"
        r"(?:'ll| will| am going to|'m going to| are going to| need to)\b",
        re.I,
    ),
    re.compile(r"^\s*(?:step\s+\d+|first|second|finally),?\s+(?:i|we)(?:'ll| will)\b", re.I),
)
NON_DURABLE = {"status": _STATUS, "housekeeping": _HOUSEKEEPING, "plan": _PLAN}


def non_durable(text: str) -> str | None:
    """Which rule (status, housekeeping, plan) says ``text`` is work in progress; None: durable."""
    for name, patterns in NON_DURABLE.items():
        if any(p.search(text) for p in patterns):
            return name
    return None


def _sentence(turn: Turn, span: tuple[int, int]) -> str:
    """The sentence (or line) of ``turn`` holding ``span``."""
    start = max(turn.content.rfind(c, 0, span[0]) for c in ".!?\n") + 1
    ends = [i for i in (turn.content.find(c, span[1]) for c in ".!?\n") if i >= 0]
    return turn.content[start : min(ends) if ends else len(turn.content)]


def drop_non_durable(state: ExtractionState, ctx: StepContext) -> None:
    """Drop the facts whose value, or whose source sentence, is a status snapshot, housekeeping
    or a plan (``non_durable``)."""
    turns = {t.turn_id: t for t in state.turns}

    def passing(f: Extracted) -> bool:
        turn = turns.get(f.turn_id)
        said = _sentence(turn, f.span) if turn is not None and f.span != (0, 0) else ""
        return non_durable(f.value) is not None or (bool(said) and non_durable(said) is not None)

    state.drop("drop_non_durable", lambda f: not passing(f))


VERIFY_SCHEMA = {
    "type": "object",
    "properties": {"durable": {"type": "array", "items": {"type": "integer"}}},
    "required": ["durable"],
    "additionalProperties": False,
}
_VERIFY_PROMPT = (
    "You check facts extracted from a conversation before they are stored as long-term memory. "
    "A fact is durable when it stays true and useful beyond this session (who someone is, what "
    "they prefer, decisions, lasting facts about a project). It is not durable when it is a "
    "status snapshot, housekeeping, a plan for the next few minutes, or chatter. Answer the "
    "numbers of the durable facts."
)


def verify_durable(state: ExtractionState, ctx: StepContext) -> None:
    """Ask the LLM port which candidates are durable and keep those; without a model, or when
    the call or its answer fails, keep every candidate (fail-open) and say so in the notes."""
    llm = getattr(ctx, "llm", None)
    if not state.facts:
        return
    if llm is None:
        state.notes.append("verify_durable: no LLM given; every candidate kept")
        return
    listed = "\n".join(f"{n}. {f.value}" for n, f in enumerate(state.facts))
    messages = [{"role": "system", "content": _VERIFY_PROMPT}, {"role": "user", "content": listed}]
    try:
        answer = llm.complete_json(messages, VERIFY_SCHEMA, schema_name="verify_durable", max_tokens=256)
        chosen = answer.data["durable"]
        if not isinstance(chosen, list) or not all(type(n) is int and 0 <= n < len(state.facts) for n in chosen):
            raise ValueError("the verifier answered numbers that name no candidate")
    except Exception as exc:  # noqa: BLE001 - fail-open: a verifier that fails never loses a candidate
        state.notes.append(f"verify_durable failed open ({type(exc).__name__}); every candidate kept")
        return
    if answer.usage is not None:
        state.usage = answer.usage if state.usage is None else state.usage + answer.usage
    keep = {id(state.facts[n]) for n in chosen}
    state.drop("verify_durable", lambda f: id(f) in keep)
