"""A few small synthetic first-person chats: the partitions of ``conversation_extraction``.

Written for this project (no outside source; the project's own licence). Each is one user talking
to an assistant: where they live and work, a pet or a relative, and in some a later correction (a
move, a new job) said in a later turn. ``expected`` is what the rule extractor (``rules-v1``)
writes for each, key by key, with the latest value (a multi-valued attribute keys each value):
found by running it, and held to by ``tests/assets/test_pipeline_lineage.py``. Nothing is read or
written at import.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

PROVENANCE = "synthetic, written for this project"
TENANT = "conversations-demo"


@dataclass(frozen=True, slots=True)
class Message:
    """One turn, in the shape ``MemoryTool.set_from_messages`` takes."""

    role: str
    content: str
    name: str | None = None
    id: str | None = None
    at: str | None = None  # ISO instant the turn was said, when it differs from the session date

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    user: str  # the speaker's name: the subject of the keys the extractor writes
    session_date: str  # ISO instant, with its zone
    messages: tuple[Message, ...]
    expected: tuple[tuple[str, str], ...]  # (key, latest value) the rule extractor writes

    @property
    def expected_keys(self) -> tuple[str, ...]:
        return tuple(sorted(k for k, _ in self.expected))

    @property
    def turns(self) -> int:
        return len(self.messages)

    def as_messages(self) -> list[dict[str, Any]]:
        return [m.as_dict() for m in self.messages]

    @property
    def fingerprint(self) -> str:
        """Of the content only (the expectations are not the conversation)."""
        payload = json.dumps([self.id, self.session_date, self.as_messages()], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _user(name: str, content: str, n: int, at: str | None = None) -> Message:
    return Message("user", content, name=name, id=f"t{n}", at=at)


def _assistant(content: str, n: int) -> Message:
    return Message("assistant", content, id=f"t{n}")


CONVERSATIONS: tuple[Conversation, ...] = (
    Conversation(
        "syn-00",
        "Ana",
        "2026-02-10T12:00:00Z",
        (
            _user("Ana", "Hi! I live in Lisbon.", 0),
            _assistant("Nice to meet you. Lisbon is lovely in spring.", 1),
            _user("Ana", "I work at Initech. My dog is called Biscuit.", 2),
            _assistant("Biscuit is a great name. What does Initech do?", 3),
            _user("Ana", "Mostly payroll software, nothing exciting.", 4),
        ),
        (
            ("ana:lives_in", "Ana lives in Lisbon"),
            ("ana:works_at", "Ana works at Initech"),
            ("ana:dog_name", "Ana's dog is named Biscuit"),
        ),
    ),
    Conversation(
        "syn-01",
        "Bruno",
        "2026-03-20T18:00:00Z",
        (
            _user("Bruno", "I live in Porto and teach maths.", 0, at="2026-03-01T09:00:00Z"),
            _assistant("Porto! Do you like it there?", 1),
            _user("Bruno", "I love hiking. I am a teacher at a small school.", 2, at="2026-03-01T09:05:00Z"),
            _assistant("That sounds like a good life.", 3),
            _user("Bruno", "Update: I moved to Berlin last week.", 4, at="2026-03-20T18:00:00Z"),
        ),
        (
            ("bruno:lives_in", "Bruno lives in Berlin"),
            ("bruno:likes:hiking", "Bruno likes hiking"),
            ("bruno:occupation", "Bruno works as a teacher"),
        ),
    ),
    Conversation(
        "syn-02",
        "Chen",
        "2026-04-02T12:00:00Z",
        (
            _user("Chen", "My sister is called Maya. She lives in Oslo.", 0),
            _assistant("Do you visit her often?", 1),
            _user("Chen", "Twice a year. I'm 34 years old and my favourite food is dumplings.", 2),
            _assistant("Dumplings are hard to beat.", 3),
        ),
        (
            ("chen:sister_name", "Chen's sister is named Maya"),
            ("maya:lives_in", "Maya lives in Oslo"),
            ("chen:age", "Chen is 34 years old"),
            ("chen:favorite_food", "Chen's favorite food is dumplings"),
        ),
    ),
    Conversation(
        "syn-03",
        "Dara",
        "2026-05-15T10:00:00Z",
        (
            _user("Dara", "I started at Globex in 2023. I have a cat named Miso.", 0, at="2026-05-01T10:00:00Z"),
            _assistant("How is Globex treating you?", 1),
            _user("Dara", "Not well. I just joined Hooli instead.", 2, at="2026-05-15T10:00:00Z"),
        ),
        (
            ("dara:works_at", "Dara works at Hooli"),
            ("dara:cat_name", "Dara's cat is named Miso"),
        ),
    ),
)

CONVERSATION_IDS: tuple[str, ...] = tuple(c.id for c in CONVERSATIONS)
_BY_ID = {c.id: c for c in CONVERSATIONS}


def conversation(conversation_id: str) -> Conversation:
    """The conversation of that id (a partition key); KeyError for an unknown one."""
    return _BY_ID[conversation_id]
