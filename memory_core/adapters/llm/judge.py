"""The model-backed judge of the conflict resolver: the seed's prompt shape (peers p1..p8 with
key, cosine, when each statement holds and where it comes from) and a strict JSON schema, asked
through the ``LLM`` port."""

from __future__ import annotations

from ...ports import LLM
from ...resolver.fold import VERDICTS, Judgement
from ...resolver.judge import MAX_VALUE_CHARS, JudgeAnswer, JudgeRequest, PeerView

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["judgements"],
    "properties": {
        "judgements": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["peer", "reason", "same_entity", "same_attribute", "verdict", "confidence"],
                "properties": {
                    "peer": {"type": "string"},
                    "reason": {"type": "string"},
                    "same_entity": {"type": "boolean"},
                    "same_attribute": {"type": "boolean"},
                    "verdict": {"type": "string", "enum": list(VERDICTS)},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                },
            },
        }
    },
}

# Checked here: the answer must be a list of objects; each entry is then checked against the
# item schema and dropped on its own when a field is missing or mistyped.
ACCEPT = {
    "type": "object",
    "required": ["judgements"],
    "properties": {"judgements": {"type": "array", "items": {"type": "object"}}},
}

RUBRIC = """You judge whether a newly written memory (NEW) changes what older memories (peers) say.
For each peer give: reason; same_entity and same_attribute (is it about the same thing and the same
property of it); verdict: update (NEW replaces the peer's value for the same attribute, and NEW is the later
statement), contradiction (they cannot both be true and NEW is not clearly the later), elaboration (one adds
detail to the other), restatement (the same fact), related, or unrelated; and a confidence in [0, 1].
A value tied to one session's task (a task id, a deadline, a build) stated in another session is a different
entity. Answer every peer by its name (p1, p2, ...)."""


class LLMJudge:
    def __init__(self, llm: LLM, *, max_tokens: int = 1200) -> None:
        self.llm = llm
        self.name = llm.name
        self.max_tokens = max_tokens

    def prompt(self, request: JudgeRequest) -> list[dict[str, str]]:
        lines = [f"NEW (key {request.key}, holds from {request.holds_from}): {request.text[:MAX_VALUE_CHARS]}", ""]
        for p in request.peers:
            lines.append(
                f"{p.name} (key {p.key}, cosine {p.cosine:.2f}, holds from {p.holds_from}, {p.origin}): "
                f"{p.text[:MAX_VALUE_CHARS]}"
            )
        return [{"role": "system", "content": RUBRIC}, {"role": "user", "content": "\n".join(lines)}]

    def judge(self, request: JudgeRequest) -> JudgeAnswer:
        from jsonschema import Draft202012Validator

        answer = self.llm.complete_json(
            self.prompt(request), SCHEMA, schema_name="peer_judgements", max_tokens=self.max_tokens, accept=ACCEPT
        )
        item_schema = Draft202012Validator(SCHEMA["properties"]["judgements"]["items"])
        by_name = {p.name: p for p in request.peers}
        by_key = {}
        for p in request.peers:
            by_key.setdefault(p.key, []).append(p)
        out, notes = [], list(answer.notes)
        for item in answer.data["judgements"]:
            if not item_schema.is_valid(item):
                notes.append("dropped a judgement with a missing or mistyped field")
                continue
            peer = _peer_named(str(item["peer"]), by_name, by_key)
            if peer is None:
                notes.append(f"dropped a judgement naming an unknown peer {item['peer']!r}")
                continue
            out.append(
                Judgement(
                    peer.fact_id,
                    item["verdict"],
                    float(item["confidence"]),
                    bool(item["same_entity"]),
                    bool(item["same_attribute"]),
                    str(item["reason"])[:300],
                )
            )
        return JudgeAnswer(tuple(out), answer.usage, tuple(notes))


def _peer_named(name: str, by_name: dict[str, PeerView], by_key: dict[str, list[PeerView]]) -> PeerView | None:
    """A peer may be named p2, [p2], or by its key when no other peer shares it."""
    plain = name.strip().strip("[]").strip()
    if plain in by_name:
        return by_name[plain]
    key = plain[4:].strip() if plain.startswith("key ") else plain
    found = by_key.get(key, [])
    return found[0] if len(found) == 1 else None
