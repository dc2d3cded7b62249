"""set_from_messages as a pipeline of named steps over one state.

Default order: fetch_existing → fetch_namespace_categories → fetch_existing_memories → llm_extract
→ drop_recall_echoes → drop_session_echoes → drop_activity_narration → drop_non_durable →
hash_dedup → retire_forgotten → bulk_write (``verify_durable`` is off by default:
``extraction.durable``); the consolidator of harvested spans adds place_facts before bulk_write. A
request may reorder or skip steps, or name steps an operator registered
(``Memory.register_step``). Every step but the first and the last is a pure function of the state;
each is tested on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Protocol, Sequence

from ..errors import InvalidInput
from ..identity import Scope
from ..model import FactVersion, WriteResult
from ..values import canonical_json, content_sha256
from .categories import categorize_written, fetch_namespace_categories
from .durable import KnownMemory, drop_non_durable, fetch_existing_memories, takes_known, verify_durable
from .model import Extracted, Extractor, Turn, slug

DEFAULT_STEPS = (
    "fetch_existing",
    "fetch_namespace_categories",
    "fetch_existing_memories",
    "llm_extract",
    "drop_recall_echoes",
    "drop_session_echoes",
    "drop_activity_narration",
    "drop_non_durable",
    "hash_dedup",
    "retire_forgotten",
    "bulk_write",
)
WINDOW_CHARS = 6000  # a longer transcript is split into windows (one turn of overlap) and merged


@dataclass
class ExtractionState:
    turns: tuple[Turn, ...]
    session: str
    session_date: datetime | None
    compaction_generation: int | None = None
    # Earlier turns the extractor reads before these (a harvested batch's earlier spans): they
    # resolve what these turns refer to, but nothing is written from them.
    context: tuple[Turn, ...] = ()
    generations: dict[str, int] = field(default_factory=dict)  # turn id -> its span's generation
    existing: dict[str, FactVersion] = field(default_factory=dict)
    categories: tuple[tuple[str, str | None], ...] = ()  # the namespace's taxonomy (``categories``)
    known: tuple[KnownMemory, ...] = ()  # stored memories the extractor is shown (``durable``)
    facts: list[Extracted] = field(default_factory=list)
    dropped: dict[str, list[str]] = field(default_factory=dict)  # step -> keys it dropped
    forgotten: list[str] = field(default_factory=list)  # keys a "forget this" retired
    windows: list[tuple[int, int]] = field(default_factory=list)  # [first, last] turn index of each window
    written: Any = None  # the bulk write's BulkResult
    learnings: list[str] = field(default_factory=list)  # keys of rules about the agent, filed for review
    usage: Any = None
    notes: list[str] = field(default_factory=list)

    def generation_of(self, turn_id: str | None) -> int | None:
        """The compaction generation a row from this turn is stamped with."""
        return self.generations.get(turn_id or "", self.compaction_generation)

    def drop(self, step: str, keep: Callable[[Extracted], bool]) -> None:
        kept = [f for f in self.facts if keep(f)]
        self.dropped.setdefault(step, []).extend(f.key for f in self.facts if f not in kept)
        self.facts = kept


class StepTool(Protocol):
    """What a step may do to memory, as the run that extracts (a ``MemoryTool`` is one, but for
    ``file_learnings``: the write step files rules about the agent to the learnings queue)."""

    def list(self, *, scope: Any = ...) -> list[FactVersion]: ...

    def delete(self, key: str, *, scope: Any = ...) -> WriteResult: ...

    def set(self, key: str, value: Any, *, scope: Any = ..., **options: Any) -> WriteResult: ...

    def bulk_set(self, entries: Sequence[dict[str, Any]], *, scope: Any = ..., dry_run: bool = ...) -> Any: ...

    def known_types(self, subject: str) -> list[str]: ...

    def file_learnings(self, facts: Sequence[Extracted]) -> Any: ...


@dataclass(frozen=True)
class StepContext:
    tool: StepTool
    extractor: Extractor
    scope: Any
    dry_run: bool = False
    window_chars: int = WINDOW_CHARS
    llm: Any = None  # the LLM port, when the home has one (``verify_durable``)


Step = Callable[[ExtractionState, StepContext], None]

# -- the steps --------------------------------------------------------------------------------


def fetch_existing(state: ExtractionState, ctx: StepContext) -> None:
    state.existing = {f.key: f for f in ctx.tool.list(scope=ctx.scope)}


def windows(turns: Sequence[Turn], limit: int) -> list[list[Turn]]:
    """Split a transcript into windows of about ``limit`` characters, each starting with the last
    turn of the one before (a pronoun may need it)."""
    out: list[list[Turn]] = []
    current: list[Turn] = []
    size = 0
    for turn in turns:
        if current and size + len(turn.content) > limit:
            out.append(current)
            current, size = [current[-1]], len(current[-1].content)
        current.append(turn)
        size += len(turn.content)
    if current:
        out.append(current)
    return out


def llm_extract(state: ExtractionState, ctx: StepContext) -> None:
    """The extractor over each window; the first is read after the state's context turns, and a
    fact the extractor draws from a context turn is not this batch's (it was written with its own)."""
    merged: dict[tuple[str, str, tuple[int, int]], Extracted] = {}
    own = {t.turn_id for t in state.turns}
    context = [t for t in state.context if t.turn_id not in own]
    for n, window in enumerate(windows(state.turns, ctx.window_chars)):
        state.windows.append((window[0].index, window[-1].index))
        given = [*context, *window] if n == 0 else window
        if state.known and takes_known(ctx.extractor):  # it may skip a restatement of them
            out = ctx.extractor.extract(given, session_date=state.session_date, known=state.known)
        else:
            out = ctx.extractor.extract(given, session_date=state.session_date)
        for fact in out.facts:  # a turn two windows share yields its facts twice: keep one
            if fact.turn_id in own:
                merged.setdefault((fact.turn_id, fact.key, fact.span), fact)
        if out.usage is not None:
            state.usage = out.usage if state.usage is None else state.usage + out.usage
        state.notes.extend(n for n in out.notes if n not in state.notes)
    order = {t.turn_id: t.index for t in state.turns}
    state.facts = sorted(merged.values(), key=lambda f: (order.get(f.turn_id, 0), f.span))


_WORD = re.compile(r"\w+")
_STOP = {"the", "a", "an", "is", "are", "was", "in", "at", "of", "to", "and", "user", "s", "my", "i", "you", "your"}


def _content_words(text: str) -> set[str]:
    return {w for w in (m.group(0).casefold() for m in _WORD.finditer(text)) if w not in _STOP}


def drop_recall_echoes(state: ExtractionState, ctx: StepContext) -> None:
    """What the agent was shown from memory (``memory`` turns) is not a new statement: a fact read
    from a memory turn, or an assistant's fact repeating one. A user saying it again is a statement."""
    roles = {t.turn_id: t.role for t in state.turns}
    recalled = [_content_words(t.content) for t in state.turns if t.role == "memory"]

    def echo(f: Extracted) -> bool:
        if roles.get(f.turn_id) == "memory":
            return True
        if f.source_role != "assistant":
            return False
        words = _content_words(f.value)
        return bool(words) and any(len(words & r) / len(words) >= 0.8 for r in recalled)

    state.drop("drop_recall_echoes", lambda f: not echo(f))


def drop_session_echoes(state: ExtractionState, ctx: StepContext) -> None:
    """The assistant repeating what the user said in this session adds nothing: the user's
    statement stands. An assistant's fact whose key a user turn states is dropped."""
    user_keys = {f.key for f in state.facts if f.source_role == "user"}
    state.drop("drop_session_echoes", lambda f: not (f.source_role == "assistant" and f.key in user_keys))


_NARRATION = re.compile(
    r"^\s*(?:ok(?:ay)?,?\s+)?(?:let me|let's|i(?:'m| am) (?:now |just )?(?:going to|searching|looking|checking|calling|"
    r"running|trying|fetching|reading|opening)|i(?:'ll| will) (?:now |just )?(?:check|look|search|run|call|try|fetch|"
    r"read|open)|(?:searching|looking up|checking|calling|running)\b)",
    re.IGNORECASE,
)


def drop_activity_narration(state: ExtractionState, ctx: StepContext) -> None:
    """An agent narrating what it is doing ("Let me check...", "I'm searching...") states no fact."""
    texts = {t.turn_id: t for t in state.turns}

    def narration(f: Extracted) -> bool:
        turn = texts.get(f.turn_id)
        if turn is None or turn.role == "tool":
            return turn is not None
        start = max(turn.content.rfind(c, 0, f.span[0]) for c in ".!?\n") + 1
        return bool(_NARRATION.match(turn.content[start : f.span[1]]))

    state.drop("drop_activity_narration", lambda f: not narration(f))


def hash_dedup(state: ExtractionState, ctx: StepContext) -> None:
    """One row per key: the last statement of the key in the transcript; and nothing for a key
    whose live value already has the same content hash."""
    last: dict[str, Extracted] = {}
    for fact in state.facts:
        last[fact.key] = fact
    kept = []
    for fact in state.facts:
        stored = state.existing.get(fact.key)
        if last[fact.key] is not fact:
            continue
        if stored is not None and stored.content_sha256 == content_sha256(canonical_json(fact.value)):
            continue
        kept.append(fact)
    state.drop("hash_dedup", lambda f: f in kept)


_FORGET = re.compile(
    r"\b(?:please\s+)?(?:forget|stop remembering|don't remember|do not remember|delete)\s+"
    r"(?:that\s+|what\s+i\s+said\s+about\s+|about\s+|the\s+fact\s+that\s+|my\s+)?(?P<topic>[^.!?]*)",
    re.IGNORECASE,
)


def forget_requests(turns: Sequence[Turn]) -> list[tuple[int, set[str]]]:
    """(turn index, topic words) of each "forget ..." a user asked for."""
    out = []
    for turn in turns:
        if turn.role != "user":
            continue
        for m in _FORGET.finditer(turn.content):
            out.append((turn.index, _content_words(m.group("topic")) - {"this", "that", "it"}))
    return out


def retire_forgotten(state: ExtractionState, ctx: StepContext) -> None:
    """A "forget this" retires (tombstones) every stored row of the scope naming its topic (all
    its topic words in the key or value: facts, and the evidence and chunks quoting them), and
    drops this batch's facts about it stated before the request. "Forget this" alone drops the
    facts of the same turn and the turn before. Restore undoes it; ``redact`` erases."""
    order = {t.turn_id: t.index for t in state.turns}
    for index, topic in forget_requests(state.turns):

        def about(key: str, text: str, topic: set[str] = topic) -> bool:
            return bool(topic) and topic <= _content_words(key.replace(":", " ").replace("_", " ") + " " + text)

        if topic:
            doomed = [k for k, f in state.existing.items() if about(k, str(f.value))]
            state.drop(
                "retire_forgotten",
                lambda f, at=index: not (order.get(f.turn_id, 0) <= at and about(f.key, f.value)),
            )
        else:
            doomed = []
            state.drop("retire_forgotten", lambda f, at=index: order.get(f.turn_id, 0) not in (at - 1, at))
        for key in doomed:
            if not ctx.dry_run:
                ctx.tool.delete(key, scope=ctx.scope)
            state.forgotten.append(key)
            state.existing.pop(key, None)


def bulk_write(state: ExtractionState, ctx: StepContext) -> None:
    """The facts, the turns read (evidence) and the verbatim windows (chunks), in one transaction."""
    by_id = {t.turn_id: t for t in state.turns}
    entries: list[dict[str, Any]] = []
    rules = [f for f in state.facts if f.about == "agent"]  # filed to the learnings queue, never memories
    state.learnings = [f.key for f in rules]
    for fact in state.facts:
        if fact.about == "agent":
            continue
        turn = by_id.get(fact.turn_id)
        said_at = (turn.at if turn else None) or state.session_date
        entries.append(
            {
                "key": fact.key,
                "value": fact.value,
                "subject": fact.subject,
                "memory_type": "extracted",
                "relations": [list(fact.relation)] if fact.relation else None,
                "valid_at": fact.valid_from or said_at,
                "observed_at": said_at,
                "confidence": fact.confidence,
                "source_quote": fact.quote,
                "source_turn": fact.turn_id,
                "source_span": list(fact.span),
                "context": f"said by {turn.speaker}" if turn else None,
                "compaction_generation": state.generation_of(fact.turn_id),
            }
        )
    for turn in state.turns:
        if turn.role in ("user", "assistant") and turn.content.strip():
            entries.append(
                {
                    "key": f"evidence:{slug(state.session)}:{turn.index:04d}",
                    "kind": "note",
                    "memory_type": "evidence",
                    "value": f"{turn.speaker}: {turn.content}",
                    "subject": turn.speaker,
                    "observed_at": turn.at or state.session_date,
                    "source_turn": turn.turn_id,
                    "compaction_generation": state.generation_of(turn.turn_id),
                }
            )
    for n, (first, last) in enumerate(state.windows):
        text = "\n".join(f"{t.speaker}: {t.content}" for t in state.turns[first : last + 1])
        entries.append(
            {
                "key": f"chunk:{slug(state.session)}:{n:04d}",
                "kind": "note",
                "memory_type": "transcript_chunk",
                "value": text,
                "observed_at": state.session_date,
                "context": f"turns {first}..{last}",
                "compaction_generation": state.generation_of(state.turns[first].turn_id),
            }
        )
    if entries:
        state.written = ctx.tool.bulk_set(entries, scope=ctx.scope, dry_run=ctx.dry_run)
        categorize_written(state, ctx)  # each fact's categories: only pairs never stored
    if rules and not ctx.dry_run:  # after the write: a refused batch files nothing either
        ctx.tool.file_learnings(rules)


def place_facts(state: ExtractionState, ctx: StepContext) -> None:
    """Write each fact whose subject the graph already types with ``scope="auto"`` (its row and
    triple in the scope placement decides), and leave the rest to the batch (the user scope)."""
    tool = ctx.tool
    kept = []
    for fact in state.facts:
        types = tool.known_types(fact.subject)
        if len(types) != 1 or ctx.dry_run:
            kept.append(fact)
            continue
        placed = tool.set(
            fact.key,
            fact.value,
            scope="auto",
            subject=fact.subject,
            subject_type=types[0],
            relations=[list(fact.relation)] if fact.relation else None,
            source_quote=fact.quote or None,
            source_turn=fact.turn_id,
            source_span=list(fact.span),
            compaction_generation=state.generation_of(fact.turn_id),
        )
        if placed.details["placement"]["scope"] == Scope.TENANT.value:
            state.dropped.setdefault("place_facts", []).append(fact.key)  # written in the tenant scope
        # a fact placement kept with the user was written just the same
    state.facts = kept


BUILTIN_STEPS: dict[str, Step] = {
    "fetch_existing": fetch_existing,
    "llm_extract": llm_extract,
    "drop_recall_echoes": drop_recall_echoes,
    "drop_session_echoes": drop_session_echoes,
    "drop_activity_narration": drop_activity_narration,
    "hash_dedup": hash_dedup,
    "retire_forgotten": retire_forgotten,
    "place_facts": place_facts,
    "bulk_write": bulk_write,
    "fetch_existing_memories": fetch_existing_memories,
    "fetch_namespace_categories": fetch_namespace_categories,
    "drop_non_durable": drop_non_durable,
    "verify_durable": verify_durable,
}


def resolve_steps(names: Sequence[str] | None, registry: dict[str, Step]) -> list[tuple[str, Step]]:
    names = DEFAULT_STEPS if names is None else names
    if isinstance(names, (str, bytes)) or not all(isinstance(n, str) for n in names):
        raise InvalidInput("steps must be a list of step names", field="steps")
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise InvalidInput(f"unknown step(s) {', '.join(unknown)}; known: {', '.join(sorted(registry))}", field="steps")
    if len(set(names)) != len(names):
        raise InvalidInput("a step may run once per request", field="steps")
    return [(n, registry[n]) for n in names]


def run_steps(state: ExtractionState, ctx: StepContext, steps: list[tuple[str, Step]]) -> ExtractionState:
    for _, step in steps:
        step(state, ctx)
    return state


@dataclass
class ExtractionSettings:
    """The extractor a home's runs use and the steps they may name (``Memory.extractor``,
    ``Memory.register_step``)."""

    extractor: Extractor
    steps: dict[str, Step] = field(default_factory=lambda: dict(BUILTIN_STEPS))
