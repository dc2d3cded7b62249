"""The model-backed merger of consolidation: the cluster's statements, oldest first, and a strict
JSON schema asking for one summary and the key to keep it at, through the ``LLM`` port."""

from __future__ import annotations

from ...consolidation import MergeAnswer, MergeRequest
from ...llm import LLMMalformed
from ...ports import LLM

MAX_SOURCE_CHARS = 2000
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["key", "summary"],
    "properties": {
        "key": {"type": "string", "minLength": 1, "maxLength": 200},
        "summary": {"type": "string", "minLength": 1},
    },
}

RUBRIC = """You merge memories that say related things about the same subject into one memory.
Keep every distinct fact, date, name and number the statements give; drop only repetition; never add
anything they do not say. Where two statements disagree, keep the later one and say what changed.
Write the summary in plain sentences. Choose a short key naming the subject and the attribute
(lowercase, words joined by underscores), such as maya:hiking."""


class LLMMerger:
    def __init__(self, llm: LLM, *, max_tokens: int = 800) -> None:
        self.llm = llm
        self.name = llm.name
        self.max_tokens = max_tokens

    def prompt(self, request: MergeRequest) -> list[dict[str, str]]:
        lines = [
            f"{i}. (key {s.key}, holds from {s.valid_at}{', about ' + s.subject if s.subject else ''}): "
            f"{s.text[:MAX_SOURCE_CHARS]}"
            for i, s in enumerate(request.sources, start=1)
        ]
        return [{"role": "system", "content": RUBRIC}, {"role": "user", "content": "\n".join(lines)}]

    def merge(self, request: MergeRequest) -> MergeAnswer:
        answer = self.llm.complete_json(
            self.prompt(request), SCHEMA, schema_name="merged_memory", max_tokens=self.max_tokens
        )
        key, summary = str(answer.data.get("key", "")).strip(), str(answer.data.get("summary", "")).strip()
        if not key or not summary:
            raise LLMMalformed("the merge answer had no key or no summary")
        return MergeAnswer(key, summary)
