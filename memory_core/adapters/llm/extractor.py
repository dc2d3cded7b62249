"""The model-backed extractor: asks an LLM (through the port) for facts as strict JSON.

The prompt asks for keys by subject and attribute, never by value, so a later statement of the
same attribute supersedes the earlier row; pronouns resolved against the window it is shown;
dates against the session date; nothing from the assistant's narration or recalled memories.
"""

from __future__ import annotations

from datetime import datetime
from typing import Sequence

from ...errors import MemcoreError
from ...extraction.model import Extracted, ExtractorOutput, Turn
from ...ports import LLM
from ...temporal import parse_instant

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["facts"],
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "subject",
                    "attribute",
                    "relation",
                    "object",
                    "statement",
                    "turn_id",
                    "quote",
                    "valid_from",
                    "multi_valued",
                ],
                "properties": {
                    "subject": {"type": "string", "minLength": 1},
                    "attribute": {"type": "string", "minLength": 1, "pattern": "^[a-z0-9_]+$"},
                    "relation": {"type": "string", "minLength": 1},
                    "object": {"type": "string", "minLength": 1},
                    "statement": {"type": "string", "minLength": 1},
                    "turn_id": {"type": "string"},
                    "quote": {"type": "string"},
                    "valid_from": {"type": ["string", "null"]},
                    "multi_valued": {"type": "boolean"},
                },
            },
        }
    },
}

INSTRUCTIONS = """You extract durable facts about people from a conversation.
Rules:
- Only facts a user states (role user). Ignore the assistant's narration, questions, and recalled memories.
- subject: the person the fact is about, by name (resolve he/she/they against the conversation).
- attribute: snake_case name of the attribute (lives_in, works_at, sister_name, favorite_food). It names the
  attribute, never the value, so a later statement of the same attribute replaces the earlier one.
- multi_valued: true only for set-valued attributes (likes, hobbies) where each value is its own fact.
- statement: one short sentence stating the fact with the subject's name.
- relation/object: the fact as a graph triple (subject, relation, object).
- turn_id and quote: the message the fact comes from and the exact words quoted from it.
- valid_from: ISO-8601 date when the fact started, resolved against the session date, or null."""


class LLMExtractor:
    def __init__(self, llm: LLM, *, max_tokens: int = 2048) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.name = llm.name

    def extract(self, turns: Sequence[Turn], *, session_date: datetime | None) -> ExtractorOutput:
        lines = [f"[{t.turn_id}] {t.speaker} ({t.role}): {t.content}" for t in turns]
        messages = [
            {"role": "system", "content": INSTRUCTIONS},
            {
                "role": "user",
                "content": f"Session date: {session_date.date().isoformat() if session_date else 'unknown'}\n\n"
                + "\n".join(lines),
            },
        ]
        answer = self.llm.complete_json(messages, SCHEMA, schema_name="extracted_facts", max_tokens=self.max_tokens)
        by_id = {t.turn_id: t for t in turns}
        facts, notes = [], list(answer.notes)
        for item in answer.data["facts"]:
            turn = by_id.get(item["turn_id"])
            if turn is None:
                notes.append(f"dropped a fact citing unknown turn {item['turn_id']!r}")
                continue
            start = turn.content.find(item["quote"]) if item["quote"] else -1
            span = (start, start + len(item["quote"])) if start >= 0 else (0, 0)
            try:
                raw = item["valid_from"]
                raw = f"{raw}T00:00:00+00:00" if raw and len(raw) == 10 else raw  # a bare date is that day, UTC
                valid_from = parse_instant(raw, "valid_from") if raw else None
            except MemcoreError:
                valid_from = None
                notes.append(f"ignored an unreadable valid_from {item['valid_from']!r}")
            facts.append(
                Extracted(
                    item["subject"],
                    item["attribute"],
                    item["statement"],
                    (item["subject"], item["relation"], item["object"]),
                    turn.turn_id,
                    span,
                    turn.content[span[0] : span[1]],
                    valid_from,
                    turn.role,
                    0.8,
                    item["multi_valued"],
                )
            )
        return ExtractorOutput(tuple(facts), answer.usage, tuple(notes))
