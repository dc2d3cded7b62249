"""What extraction reads (turns) and what it proposes (extracted facts), as plain values."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, Sequence

from ..errors import InvalidInput
from ..temporal import parse_instant

ROLES = ("user", "assistant", "memory", "system", "tool")


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a transcript. ``speaker`` names who talks (a person's name, or the role)."""

    index: int
    role: str
    content: str
    speaker: str
    turn_id: str
    at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Extracted:
    """One fact an extractor proposes. ``attribute`` with ``subject`` names the key, never the value."""

    subject: str
    attribute: str
    value: str  # the statement, in words
    relation: tuple[str, str, str] | None  # the graph fact it states
    turn_id: str
    span: tuple[int, int]  # [start, end) of the source quote in the turn's text
    quote: str
    valid_from: datetime | None = None
    source_role: str = "user"
    confidence: float = 0.9
    multi_valued: bool = False  # a set-valued attribute: each item keeps its own key
    # "agent": a rule the user states about the agent; filed to the learnings queue, never
    # written as a memory (extraction.learnings).
    about: str = "user"

    @property
    def key(self) -> str:
        base = f"{slug(self.subject)}:{self.attribute}"
        return f"{base}:{slug(self.relation[2])}" if self.multi_valued and self.relation else base


@dataclass(frozen=True, slots=True)
class ExtractorOutput:
    facts: tuple[Extracted, ...]
    usage: Any = None  # the LLM port's Usage, when a model was called
    notes: tuple[str, ...] = field(default=())


class Extractor(Protocol):
    name: str  # recorded as the model in each row's provenance

    def extract(self, turns: Sequence[Turn], *, session_date: datetime | None) -> ExtractorOutput: ...


def slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.casefold()).strip("-") or "x"


def parse_messages(messages: Any, *, session: str | None = None) -> tuple[Turn, ...]:
    """Validate a transcript: a list of {role, content, name?, id?, at?} messages."""
    if isinstance(messages, (str, bytes, dict)) or not isinstance(messages, Sequence) or not messages:
        raise InvalidInput("messages must be a non-empty list of {role, content} objects", field="messages")
    turns = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("content"), str) or m.get("role") not in ROLES:
            raise InvalidInput(
                f"message {i}: needs role ({', '.join(ROLES)}) and content (a string)", field=f"messages[{i}]"
            )
        unknown = set(m) - {"role", "content", "name", "id", "at"}
        if unknown:
            raise InvalidInput(f"message {i}: unknown field(s) {', '.join(sorted(unknown))}", field=f"messages[{i}]")
        name = m.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise InvalidInput(f"message {i}: name must be a non-empty string", field=f"messages[{i}].name")
        if m.get("id") is not None and (isinstance(m["id"], bool) or not isinstance(m["id"], (str, int))):
            raise InvalidInput(f"message {i}: id must be a string or an integer", field=f"messages[{i}].id")
        turn_id = str(m.get("id") or f"{session or 'turn'}:{i}")
        turns.append(
            Turn(
                i,
                m["role"],
                m["content"],
                (name or m["role"]).strip(),
                turn_id,
                parse_instant(m.get("at"), f"messages[{i}].at"),
            )
        )
    return tuple(turns)
