"""Captures: the interchange contract by which any producer publishes a claim into the substrate,
``{entity, claim, source, confidence, timestamp, author, lens_id, frame_id, actor_chain}``, and
how it becomes a normal write.

A capture is a ``set`` of the claim about the entity: the key names the entity and the claim
(``claim:<entity>:<digest>``, so the same claim captured again reinforces it rather than adding
a row; an envelope may name its own ``key``, so a later claim supersedes an earlier one), the
entity is the row's subject, ``timestamp`` its observed time, ``confidence`` its confidence,
``entity_type`` (default ``lesson``) its memory type. ``author`` and ``source`` are kept in the
row's provenance as what the producer said; who wrote the row is the caller's identity, never
the envelope's (the caller is appended to the actor chain as its last, verified link).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from ..errors import InvalidInput
from ..inputs import number, text, texts
from ..temporal import parse_instant
from ..write.settle import validate_key, validate_memory_type

DEFAULT_ENTITY_TYPE = "lesson"
CAPTURE_PREFIX = "claim"
MAX_CHAIN = 16


@dataclass(frozen=True, slots=True)
class Capture:
    entity: str
    claim: str
    key: str
    entity_type: str
    source: str | None
    confidence: float | None
    timestamp: datetime | None
    author: str | None
    lens_id: str
    frame_id: str | None
    actor_chain: tuple[str, ...]


def capture_key(entity: str, claim: str) -> str:
    digest = hashlib.sha256(f"{entity}\x1f{claim}".encode("utf-8")).hexdigest()[:16]
    return f"{CAPTURE_PREFIX}:{entity}:{digest}"


def parse_capture(
    *,
    entity: object,
    claim: object,
    lens_id: object,
    source: object = None,
    confidence: object = None,
    timestamp: object = None,
    author: object = None,
    frame_id: object = None,
    actor_chain: object = None,
    key: object = None,
    entity_type: object = None,
) -> Capture:
    """The envelope, every field checked (a missing entity or claim is refused by name)."""
    if entity is None or (isinstance(entity, str) and not entity.strip()):
        raise InvalidInput("a capture needs its entity: what the claim is about", field="entity")
    if claim is None or (isinstance(claim, str) and not claim.strip()):
        raise InvalidInput("a capture needs its claim: what is said about the entity", field="claim")
    if lens_id is None:
        raise InvalidInput("a capture names the lens it is made through (lens_id)", field="lens_id")
    found_entity = text(entity, "entity", max_chars=500).strip()
    found_claim = text(claim, "claim", max_chars=20_000).strip()
    chain = texts(actor_chain, "actor_chain") if actor_chain is not None else ()
    if len(chain) > MAX_CHAIN:
        raise InvalidInput(f"actor_chain holds {len(chain)} actors; the limit is {MAX_CHAIN}", field="actor_chain")
    return Capture(
        entity=found_entity,
        claim=found_claim,
        key=validate_key(key) if key is not None else capture_key(found_entity, found_claim),
        entity_type=validate_memory_type(entity_type) if entity_type is not None else DEFAULT_ENTITY_TYPE,
        source=text(source, "source", optional=True, max_chars=2000),
        confidence=number(confidence, "confidence", low=0, high=1, optional=True),
        timestamp=parse_instant(timestamp, "timestamp"),
        author=text(author, "author", optional=True, max_chars=200),
        lens_id=text(lens_id, "lens_id", max_chars=64),
        frame_id=text(frame_id, "frame_id", optional=True, max_chars=64),
        actor_chain=tuple(a.strip() for a in chain),
    )
