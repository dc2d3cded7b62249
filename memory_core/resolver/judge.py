"""Judges: given a row and its peers, a verdict per peer with a confidence.

* ``RuleJudge``: deterministic and offline. It reads the write path's own rules: the same
  canonical form is a restatement; a templated substitution (same subject and predicate, another
  object) is an update; the same content words with a value the other lacks is an elaboration;
  shared subject words otherwise related, else unrelated. Its confidences are its rules' strength,
  not probabilities: the calibration eval measures what they are worth.
* ``LLMJudge`` (``adapters.llm.judge``): a model through the LLM port, with the seed's prompt
  shape (peers p1..p8 with key, cosine, when each statement holds and where it comes from).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Protocol

from ..llm import Usage
from ..write.templates import canonical_form, content_words, substitution, values_differ
from .fold import Judgement

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


def request_json(request: JudgeRequest) -> str:
    """What a prompt would carry, for tests that check no other user's text gets in."""
    return json.dumps(
        {"key": request.key, "text": request.text, "peers": [{"key": p.key, "text": p.text} for p in request.peers]}
    )
