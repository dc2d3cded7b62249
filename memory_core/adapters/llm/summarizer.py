"""The model-backed session summarizer: a session's kept turns, in order, and a strict JSON schema
asking for one digest, through the ``LLM`` port (``extraction.summaries``; the rules are the
offline default)."""

from __future__ import annotations

from typing import Sequence

from ...extraction.summaries import MAX_DIGEST_CHARS, SessionTurn, spoken
from ...llm import LLMMalformed
from ...ports import LLM

MAX_TURN_CHARS = 1500
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["digest"],
    "properties": {"digest": {"type": "string", "minLength": 1}},
}

RUBRIC = """You write the digest of one conversation session: who took part, what was discussed,
and what was decided or stated about people, plans and preferences, in a few plain sentences.
Keep names, dates and numbers as the turns give them; never add anything they do not say."""


class LLMSummarizer:
    def __init__(self, llm: LLM, *, max_tokens: int = 400, max_chars: int = MAX_DIGEST_CHARS * 2) -> None:
        self.llm = llm
        self.name = llm.name
        self.max_tokens = max_tokens
        self.max_chars = max_chars

    def prompt(self, session: str, turns: Sequence[SessionTurn]) -> list[dict[str, str]]:
        lines = [
            f"{t.speaker}: {spoken(t.text, t.speaker)[:MAX_TURN_CHARS]}" for t in sorted(turns, key=lambda t: t.key)
        ]
        return [{"role": "system", "content": RUBRIC}, {"role": "user", "content": "\n".join(lines)}]

    def summarize(self, session: str, turns: Sequence[SessionTurn]) -> str:
        answer = self.llm.complete_json(
            self.prompt(session, turns), SCHEMA, schema_name="session_digest", max_tokens=self.max_tokens
        )
        digest = str(answer.data.get("digest", "")).strip()
        if not digest:
            raise LLMMalformed("the summary answer had no digest")
        return digest[: self.max_chars]
