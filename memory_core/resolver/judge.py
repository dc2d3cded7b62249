"""Judges: given a row and its peers, a verdict per peer with a confidence.

* ``RuleJudge``: deterministic and offline. It reads the write path's own rules: the same
  canonical form is a restatement; a templated substitution (same subject and predicate, another
  object) is an update; the same content words with a value the other lacks is an elaboration;
  shared subject words otherwise related, else unrelated. Its confidences are its rules' strength,
  not probabilities: the calibration eval measures what they are worth.
* ``LLMJudge``: a model through the LLM port, with the seed's prompt shape (peers p1..p8 with
  key, cosine, when each statement holds and where it comes from) and a strict JSON schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Protocol

from ..llm.port import LLM, Usage
from ..write.templates import canonical_form, content_words, substitution, values_differ
from .fold import VERDICTS, Judgement

MAX_VALUE_CHARS = 700


@dataclass(frozen=True, slots=True)
class PeerView:
    name: str  # p1..p8
    fact_id: str
    key: str
    text: str
    cosine: float
    holds_from: str  # when the statement holds (its assertion order, as a date)
    origin: str  # same session | another session of the agent | another agent


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    key: str
    text: str
    holds_from: str
    peers: tuple[PeerView, ...]


@dataclass(frozen=True, slots=True)
class JudgeAnswer:
    judgements: tuple[Judgement, ...]
    usage: Usage | None = None
    notes: tuple[str, ...] = field(default=())


class Judge(Protocol):
    name: str

    def judge(self, request: JudgeRequest) -> JudgeAnswer: ...


class RuleJudge:
    name = "rules-judge-v1"

    def judge(self, request: JudgeRequest) -> JudgeAnswer:
        out = []
        for peer in request.peers:
            out.append(self._one(request.text, peer))
        return JudgeAnswer(tuple(out))

    @staticmethod
    def _one(text: str, peer: PeerView) -> Judgement:
        if canonical_form(text) == canonical_form(peer.text):
            return Judgement(peer.fact_id, "restatement", 0.99, True, True, "same canonical form")
        swap = substitution(peer.text, text)
        predicate = _predicate(swap.shared_prefix, text) if swap is not None else ()
        if swap is not None and predicate:
            if any(w in STATE_WORDS for w in predicate):
                # A one-value attribute with another value. Stronger when more words pin it down.
                shared = len(content_words(text) & content_words(peer.text))
                confidence = 0.985 if shared >= 3 else 0.96
                return Judgement(
                    peer.fact_id,
                    "update",
                    confidence,
                    True,
                    True,
                    "same subject and one-value predicate, another object",
                )
            # "attended X" / "attended Y": both can hold; a rule cannot tell a set from a value.
            return Judgement(peer.fact_id, "related", 0.90, True, False, "same predicate, another object")
        mine, theirs = content_words(text), content_words(peer.text)
        if mine and theirs and (mine <= theirs or theirs <= mine):
            if values_differ(text, peer.text):
                return Judgement(peer.fact_id, "contradiction", 0.92, True, True, "same words, other values")
            return Judgement(peer.fact_id, "elaboration", 0.93, True, True, "one states more of the same")
        overlap = len(mine & theirs) / max(1, len(mine | theirs))
        if overlap >= 0.5:
            return Judgement(peer.fact_id, "related", 0.90, True, False, "many shared words")
        return Judgement(peer.fact_id, "unrelated", 0.91 if overlap < 0.2 else 0.85, False, False, "few shared words")


# Predicates that hold one value at a time: another object is an update, not a second fact.
STATE_WORDS = frozenset(
    """lives live living lived resides reside based moved moves home address works work working
employed employer job office floor phone email number age aged name named called drives salary rent
manager boss partner married""".split()
)


def _predicate(prefix: tuple[str, ...], text: str) -> tuple[str, ...]:
    """The shared words after the subject's name (its leading capitalised words): empty when the
    two texts share only the name, so the spans are whole predicates (two attributes)."""
    name = 0
    for word in text.split():
        if not word[:1].isupper():
            break
        name += 1
    return tuple(prefix[name:])


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


def request_json(request: JudgeRequest) -> str:
    """What a prompt would carry, for tests that check no other user's text gets in."""
    return json.dumps(
        {"key": request.key, "text": request.text, "peers": [{"key": p.key, "text": p.text} for p in request.peers]}
    )
