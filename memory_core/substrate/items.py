"""The substrate as items: one shape for everything a lens may admit and a view may show — a fact,
note or document row (its latest state), a graph relation, a decision trace — with what a lens
decides on (scope, entity type or relation, the lens it was captured under, sensitivity), what a
ranking reads (terms, anchors, confidence, time), and what a receipt names (ref, version, hash).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..graph.model import Observation
from ..identity import Scope
from ..model import FactVersion
from ..texts import value_text
from .captures import CAPTURE_PREFIX
from .decisions import DECISION_TYPE, DecisionTrace
from .frames import Frame
from .refs import ref

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'-]*")
STOPWORDS = frozenset(
    "a an and are as at be but by for from has have he her his i in is it its of on or our she that the their them "
    "they this to was we were what when where which who will with you your not no do does did so than then there "
    "about into over after before up out can could should would may might must been being also just only very".split()
)


def terms_of(*texts: str | None) -> frozenset[str]:
    """The lower-case words of the texts, without stop words or one-letter words."""
    out = set()
    for text in texts:
        for word in _WORD.findall(text or ""):
            low = word.lower().strip("'-_")
            if len(low) > 1 and low not in STOPWORDS:
                out.add(low)
    return frozenset(out)


_SENTENCE = re.compile(r"(?<=[.!?:;])\s+|\n+")


def anchors_of(*texts: str | None) -> frozenset[str]:
    """The words that name something (where a re-query looks next): capitalised inside a sentence
    (a sentence's first word is capitalised anyway), or holding a digit."""
    out = set()
    for text in texts:
        for sentence in _SENTENCE.split(text or ""):
            for n, word in enumerate(_WORD.findall(sentence)):
                if (n > 0 and word[0].isupper()) or any(ch.isdigit() for ch in word):
                    low = word.lower().strip("'-_")
                    if len(low) > 1 and low not in STOPWORDS:
                        out.add(low)
    return frozenset(out)


_DIGEST = re.compile(r"^[0-9a-f]{12,}$")


def _key_words(key: str) -> str:
    """A key's words, without what a key adds that no one said: digests and the capture prefix."""
    parts = [p for p in re.split(r"[:./_#-]+", key) if p and not _DIGEST.match(p)]
    if parts and parts[0] == CAPTURE_PREFIX:
        parts = parts[1:]
    return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Item:
    ref: str
    plane: str  # fact | note | document | relation | decision
    scope: Scope
    owner_id: str
    key: str
    text: str  # what a view shows, and what is counted against a token budget
    value: Any
    entity_type: str | None  # a row's memory_type; ``decision``; None for a relation
    relation: str | None  # a relation's name
    lens_id: str | None  # the lens it was captured under (None: shared)
    frame_id: str | None
    sensitivity: str
    subject: str | None
    version_id: str | None
    content_sha256: str
    valid_at: datetime
    confidence: float
    terms: frozenset[str]
    anchors: frozenset[str]

    def shape(self) -> dict[str, Any]:
        """What a lens decides on (``lenses.admits_row``'s arguments)."""
        return {
            "scope": self.scope,
            "entity_type": self.entity_type,
            "relation": self.relation,
            "lens_id": self.lens_id,
            "sensitivity": self.sensitivity,
        }


def _digest(body: Any) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def item_of_fact(state: FactVersion) -> Item:
    said = value_text(state.value)
    key_words = _key_words(state.key)
    # A capture's key is made of its entity and a digest: it is shown by its entity.
    label = state.subject if state.subject and state.key.startswith(f"{CAPTURE_PREFIX}:") else state.key
    return Item(
        ref=ref(state.kind.value, state.fact_id),
        plane=state.kind.value,
        scope=state.scope,
        owner_id=state.owner_id,
        key=state.key,
        text=f"{label}: {said}",
        value=state.value,
        entity_type=state.memory_type,
        relation=None,
        lens_id=state.provenance.lens_id,
        frame_id=state.provenance.frame_id,
        sensitivity=state.sensitivity,
        subject=state.subject,
        version_id=state.id,
        content_sha256=state.content_sha256,
        valid_at=state.valid_at,
        confidence=state.confidence,
        terms=terms_of(said, key_words, state.subject, state.memory_type) | {f"ref:{state.kind.value}:{state.fact_id}"},
        anchors=terms_of(state.subject, key_words) | anchors_of(said),
    )


def item_of_relation(scope: Scope, owner_id: str, observation: Observation) -> Item:
    o = observation
    body = {"subject": o.subject, "relation": o.relation, "object": o.object, "valid_at": o.valid_at.isoformat()}
    said = f"{o.subject} {o.relation} {o.object}"
    return Item(
        ref=ref("relation", o.triple_id),
        plane="relation",
        scope=scope,
        owner_id=owner_id,
        key=said,
        text=said,
        value=body,
        entity_type=None,
        relation=o.relation,
        lens_id=None,
        frame_id=None,
        sensitivity="normal",
        subject=o.subject,
        version_id=None,
        content_sha256=_digest(body),
        valid_at=o.valid_at,
        confidence=1.0,
        terms=terms_of(said, _key_words(o.relation)) | {f"ref:relation:{o.triple_id}"},
        anchors=terms_of(o.subject, o.object),
    )


def decision_body(trace: DecisionTrace) -> dict[str, Any]:
    return {
        "decision_id": trace.decision_id,
        "version": trace.version,
        "decision": trace.decision,
        "rationale": trace.rationale,
        "inputs": list(trace.inputs),
        "outcome": trace.outcome,
        "frame_id": trace.frame_id,
        "intent": trace.intent,
        "tags": list(trace.tags),
        "actor": trace.actor,
        "recorded_at": trace.recorded_at.isoformat(),
    }


def item_of_decision(trace: DecisionTrace) -> Item:
    body = decision_body(trace)
    inputs = frozenset(f"ref:{r}" for r in trace.inputs)
    return Item(
        ref=ref("decision", trace.decision_id),
        plane="decision",
        scope=Scope(trace.scope),
        owner_id=trace.owner_id,
        key=trace.decision_id,
        text=trace.text,
        value=body,
        entity_type=DECISION_TYPE,
        relation=None,
        lens_id=trace.lens_id,
        frame_id=trace.frame_id,
        sensitivity="normal",
        subject=None,
        version_id=f"{trace.decision_id}@{trace.version}",
        content_sha256=_digest(body),
        valid_at=trace.recorded_at,
        confidence=1.0,
        terms=terms_of(trace.text, *trace.tags)
        | task_terms(trace.intent, trace.tags)
        | {f"ref:decision:{trace.decision_id}"},
        anchors=anchors_of(trace.rationale, trace.outcome) | inputs,  # a re-query follows its inputs
    )


def task_terms(intent: str | None, tags: tuple[str, ...]) -> frozenset[str]:
    """The terms a frame's task lends what was made under it: its tags and ``intent:<intent>``."""
    return frozenset(tags) | ({f"intent:{intent}"} if intent else frozenset())


def with_task(item: Item, frame: Frame) -> Item:
    """An item captured under ``frame``, holding the frame's task terms."""
    return dataclasses.replace(item, terms=item.terms | task_terms(frame.intent, frame.tags))
